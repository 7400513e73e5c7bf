"""A derived, disposable cache of parsed learnings: `.lore/cache/learnings-v1.json`.

Parsing a front matter costs ~0.2-0.3 ms (libyaml's composer); listing 10,000 learnings would
pay that on every call. An entry is reused only while its file has the same size, mtime and
inode (an atomic rewrite changes the inode); files changed in the last two seconds are not
cached (the "racy" window git's index guards against too). Entries are stored redacted, as
`LearningStore.all()` yields them. Deleting the cache changes nothing but speed. Unknown
front-matter keys come back as strings; code that rewrites a learning reads it with
`LearningStore.get()`, which always parses the file.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path
from typing import Any

from ..errors import LoreError
from ..store import atomic_write

VERSION = 2  # 2: entries are redacted
RACY_SECONDS = 2.0


def _key(st: os.stat_result) -> list[int]:
    return [st.st_size, st.st_mtime_ns, st.st_ino]


class ParseCache:
    """Parsed front matter and body per file (relative path), valid for one stat key."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.entries: dict[str, Any] = {}
        self.used: set[str] = set()
        self.dirty = False
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return  # missing or damaged: start empty, it is only a cache
        if isinstance(data, dict) and data.get("v") == VERSION:
            entries = data.get("entries")
            self.entries = entries if isinstance(entries, dict) else {}

    def lookup(self, rel: str, st: os.stat_result) -> dict[str, Any] | None:
        entry = self.entries.get(rel)
        if isinstance(entry, list) and len(entry) == 2 and entry[0] == _key(st):
            self.used.add(rel)
            return entry[1] if isinstance(entry[1], dict) else None
        return None

    def store(self, rel: str, st: os.stat_result, data: dict[str, Any]) -> None:
        if time.time() - st.st_mtime < RACY_SECONDS:
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
        payload = json.dumps({"v": VERSION, "entries": self.entries}, ensure_ascii=False)
        with contextlib.suppress(LoreError):  # read-only checkout: still works, only slower
            atomic_write(self.path, payload.encode("utf-8"))
