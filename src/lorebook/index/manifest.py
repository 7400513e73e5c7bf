"""The index manifest: what was indexed, from which bytes, with which model and chunker.

A change of model, dimension, chunker or backend invalidates the whole index (rebuild); a change
of one file's content hash re-indexes that file only.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

try:  # hashlib.blake2b without hashlib's OpenSSL start-up (as in lorebook.log.catalog)
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - a Python built without it
    from hashlib import blake2b

from ..store import atomic_write, settled

TYPE_CHECKING = False  # typing costs milliseconds on cold paths; mypy still sees it
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

    from ..paths import Layout

FORMAT = 2  # 2: documents are stored redacted (an older index is rebuilt)


def manifest_stamp(st: os.stat_result) -> list[int]:
    """What identifies one manifest file: it is replaced (a new inode), never edited in place."""
    return [st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


class ManifestCorrupt(Exception):
    """The manifest exists but cannot be read: the cache is rebuilt."""


@dataclass
class Entry:
    """One indexed file."""

    hash: str
    size: int
    mtime_ns: int
    chunks: int = 0
    doc: dict[str, Any] | None = None  # None: the file could not be parsed
    problem: str | None = None
    checked_ns: int = 0  # when the bytes were last hashed (stat is trusted only well after)
    hub: float = 0.0  # mean similarity to its nearest other learnings (index/hubness.py)

    def stat_matches(self, size: int, mtime_ns: int) -> bool:
        return stat_matches((self.size, self.mtime_ns, self.checked_ns), size, mtime_ns)


def stat_matches(known: Sequence[int], size: int, mtime_ns: int) -> bool:
    """Same size and mtime as `known` (size, mtime, when hashed), and hashed once the file had
    settled (`store.settled`): a file rewritten in the same clock tick with the same size is
    hashed again (racy stat)."""
    return known[0] == size and known[1] == mtime_ns and settled(mtime_ns, known[2])


def files_match(layout: Layout, files: Mapping[str, Sequence[int]]) -> bool:
    """Whether the learning files are exactly `files` (store path -> size, mtime, when hashed)
    by their stat: what `learning_files` lists, without sorting 2,000 Path objects."""
    seen = 0
    for folder in (layout.learnings, layout.drafts):
        prefix = os.path.join(layout.rel(folder), "")
        try:
            with os.scandir(folder) as found:
                for item in found:
                    if not item.name.endswith(".md") or not item.is_file():
                        continue
                    known = files.get(prefix + item.name)
                    st = item.stat()
                    if known is None or not stat_matches(known, st.st_size, st.st_mtime_ns):
                        return False
                    seen += 1
        except OSError:
            if folder.exists():
                return False
    return seen == len(files)


def files_key(files: Mapping[str, Sequence[int]]) -> str:
    """A digest of each learning file's path, size and mtime (not of when it was hashed, which a
    re-check rewrites): what says a learning file changed, for what is derived from the files
    (staleness)."""
    text = "\n".join(f"{k}\0{v[0]}\0{v[1]}" for k, v in sorted(files.items()))
    return blake2b(text.encode(), digest_size=16).hexdigest()


@dataclass
class Manifest:
    model: str | None
    dim: int | None
    chunker: int
    backend: str
    generation: int = 0
    files: dict[str, Entry] = field(default_factory=dict)
    digest: str = ""  # of the bytes it was loaded from: the key of what is derived from it
    stamp: list[int] | None = None  # the identity of the file those bytes were read from

    def pins(self) -> tuple[Any, ...]:
        return (self.model, self.dim, self.chunker, self.backend)

    def to_json(self) -> bytes:
        data = {
            "format": FORMAT,
            "model": self.model,
            "dim": self.dim,
            "chunker": self.chunker,
            "backend": self.backend,
            "generation": self.generation,
            "files": {k: vars(v) for k, v in sorted(self.files.items())},
        }
        return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()

    def save(self, path: Path) -> None:
        atomic_write(path, self.to_json())

    @classmethod
    def load(cls, path: Path) -> Manifest | None:
        """The stored manifest; None when there is none; ManifestCorrupt when unreadable."""
        try:
            with open(path, "rb") as handle:  # the identity and the bytes of the same file
                stamp = manifest_stamp(os.fstat(handle.fileno()))
                raw = handle.read()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise ManifestCorrupt(str(exc)) from None
        try:
            data = json.loads(raw)
            if data.get("format") != FORMAT:
                found = data.get("format")
                raise ManifestCorrupt(f"format {found!r}, this version writes {FORMAT}")
            return cls(
                model=data["model"],
                dim=data["dim"],
                chunker=int(data["chunker"]),
                backend=str(data["backend"]),
                generation=int(data.get("generation", 0)),
                files={k: Entry(**v) for k, v in data["files"].items()},
                digest=blake2b(raw, digest_size=16).hexdigest(),
                stamp=stamp,
            )
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ManifestCorrupt(f"{type(exc).__name__}: {exc}") from None
