"""The index manifest: what was indexed, from which bytes, with which model and chunker.

A change of model, dimension, chunker or backend invalidates the whole index (rebuild); a change
of one file's content hash re-indexes that file only.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..store import atomic_write

FORMAT = 2  # 2: documents are stored redacted (an older index is rebuilt)


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
        """Same size and mtime, and the mtime not within a second of our hashing: a file
        rewritten in the same clock tick with the same size is hashed again (racy stat)."""
        return (
            self.size == size
            and self.mtime_ns == mtime_ns
            and mtime_ns < self.checked_ns - 1_000_000_000
        )


@dataclass
class Manifest:
    model: str | None
    dim: int | None
    chunker: int
    backend: str
    generation: int = 0
    files: dict[str, Entry] = field(default_factory=dict)
    digest: str = ""  # of the bytes it was loaded from: the key of what is derived from it

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
            raw = path.read_bytes()
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
                digest=hashlib.blake2b(raw, digest_size=16).hexdigest(),
            )
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ManifestCorrupt(f"{type(exc).__name__}: {exc}") from None
