"""A derived, disposable cache of parsed learnings: `.lore/cache/learnings-v1.json`.

Parsing a front matter costs ~0.2-0.3 ms (libyaml's composer); listing 10,000 learnings would
pay that on every call. An entry is reused only while its file has the same size, mtime and
inode (an atomic rewrite changes the inode); files changed in the last two seconds are not
cached (the "racy" window git's index guards against too). Entries are stored redacted, as
`LearningStore.all()` yields them, under the fingerprint of the rules that redacted them (other
rules: parsed again). Deleting the cache changes nothing but speed. Unknown front-matter keys
come back as strings; code that rewrites a learning reads it with `LearningStore.get()`, which
always parses the file.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import LoreError
from ..store import atomic_write, settled

if TYPE_CHECKING:
    from ..redact.sanitize import Sanitizer

VERSION = 2  # 2: entries are redacted


def _key(st: os.stat_result) -> list[int]:
    return [st.st_size, st.st_mtime_ns, st.st_ino]


class ParseCache:
    """Parsed front matter and body per file (relative path), valid for one stat key."""

    def __init__(self, path: Path, rules: str = "") -> None:
        """`rules`: the fingerprint of the redaction rules the entries are redacted with
        (entries redacted with other rules are dropped)."""
        self.path = path
        self.rules = rules
        self.entries: dict[str, Any] = {}
        self.used: set[str] = set()
        self.dirty = False
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return  # missing or damaged: start empty, it is only a cache
        if isinstance(data, dict) and data.get("v") == VERSION and data.get("rules") == rules:
            entries = data.get("entries")
            self.entries = entries if isinstance(entries, dict) else {}

    def lookup(self, rel: str, st: os.stat_result) -> dict[str, Any] | None:
        entry = self.entries.get(rel)
        if isinstance(entry, list) and len(entry) == 2 and entry[0] == _key(st):
            self.used.add(rel)
            return entry[1] if isinstance(entry[1], dict) else None
        return None

    def store(self, rel: str, st: os.stat_result, data: dict[str, Any]) -> None:
        if not settled(st.st_mtime_ns, time.time_ns()):
            return
        self.entries[rel] = [_key(st), data]
        self.used.add(rel)
        self.dirty = True

    def save(self) -> None:
        """Write the cache when it changed, dropping entries of files that are gone."""
        stale = set(self.entries) - self.used
        if not self.dirty and not stale:
            return
        for rel in stale:
            del self.entries[rel]
        payload = json.dumps(
            {"v": VERSION, "rules": self.rules, "entries": self.entries}, ensure_ascii=False
        )
        with contextlib.suppress(LoreError):  # read-only checkout: still works, only slower
            atomic_write(self.path, payload.encode("utf-8"))


#: texts shorter than this are redacted on the spot (well under a millisecond): caching them
#: would cost a file per string
REDACT_MIN_CHARS = 4096
_FINGERPRINTS: dict[str, str] = {}  # sanitizer settings -> rules fingerprint, once per process


def rules_fingerprint(sanitizer: Sanitizer) -> str:
    """What decides a redaction's result: the store's configured rules and the code of the
    redaction package (a changed pattern or `extra_patterns` is a different fingerprint)."""
    settings = repr(sanitizer.settings())
    found = _FINGERPRINTS.get(settings)
    if found is None:
        from ..redact import sanitize

        folder = os.path.dirname(sanitize.__file__)
        parts = [settings]
        for name in sorted(os.listdir(folder)):
            if name.endswith(".py"):
                st = os.stat(os.path.join(folder, name))
                parts.append(f"{name}:{st.st_size}:{st.st_mtime_ns}")
        found = _FINGERPRINTS[settings] = hashlib.blake2b(
            "\0".join(parts).encode(), digest_size=16
        ).hexdigest()
    return found


class RedactedTexts:
    """Long texts (learning bodies) as redacted before: `.lore/cache/redacted/<hash>.txt`,
    keyed by the text and the rules' fingerprint, so an unchanged learning is redacted once,
    not on every `lore show`, listing, search or preflight, whatever its mtime says. Redaction
    is linear, but a 1 MB body still costs ~0.1-1 s; reading the result back ~1 ms. The files
    are written atomically, never through a symlink; deleting them changes nothing but speed."""

    def __init__(self, folder: Path, sanitizer: Sanitizer) -> None:
        self.folder = folder
        self.sanitizer = sanitizer
        self._rules = ""

    def redact(self, text: str) -> str:
        """`sanitizer.redact_text(text)[0]`, from the cache when this text was redacted by
        these rules before."""
        if len(text) < REDACT_MIN_CHARS:
            return self.sanitizer.redact_text(text)[0]
        self._rules = self._rules or rules_fingerprint(self.sanitizer)
        digest = hashlib.blake2b(self._rules.encode(), digest_size=20)
        digest.update(text.encode("utf-8", "surrogatepass"))
        path = self.folder / f"{digest.hexdigest()}.txt"
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            with open(fd, encoding="utf-8") as handle:
                return handle.read()
        except (OSError, ValueError):
            pass  # not cached yet (or damaged): redact it
        clean = self.sanitizer.redact_text(text)[0]
        with contextlib.suppress(LoreError, OSError):  # read-only checkout: only slower
            atomic_write(path, clean.encode("utf-8"))
        return clean
