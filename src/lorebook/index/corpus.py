"""What ranking reads of an index's documents, made once per manifest: a warm search over
10,000 learnings then builds no per-document list, and looks only at the documents a query
reaches.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .manifest import files_key

if TYPE_CHECKING:
    from .keyword_store import Rows
    from .manifest import Manifest


class Corpus:
    """`keys` (each document's store path), `docs` (what ranking and filters read of each),
    `hubs` (each one's hubness, or empty), in index order; `files()`, when known, the learning
    files' (size, mtime) it was made from, by path."""

    def __init__(
        self,
        keys: list[str],
        docs: Sequence[dict[str, Any]] | Rows,
        hubs: Sequence[float] = (),
        *,
        superseded: set[str] | None = None,
        files: Callable[[], Mapping[str, Sequence[int]]] | None = None,
    ) -> None:
        self.keys = keys
        self.docs = docs
        self.hubs = hubs
        self.mean_hub = sum(hubs) / len(hubs) if hubs else 0.0
        self._files = files
        self._files_key: str | None = None
        self._superseded = superseded
        self._position: dict[str, int] | None = None

        self.chunks = 0  # the passages the vector store should hold for these documents

    @classmethod
    def of(cls, manifest: Manifest) -> Corpus:
        entries = [(k, e) for k, e in manifest.files.items() if e.doc]

        def files() -> dict[str, tuple[int, int]]:
            return {k: (e.size, e.mtime_ns) for k, e in manifest.files.items()}

        corpus = cls(
            [k for k, _ in entries],
            [e.doc for _, e in entries if e.doc],
            [e.hub for _, e in entries],
            files=files if manifest.digest else None,  # none: made from the files in memory
        )
        corpus.chunks = sum(e.chunks for e in manifest.files.values())
        return corpus

    @property
    def files_key(self) -> str | None:
        """A digest of the learning files' state the corpus was made from (`files_key`),
        worked out once; None when unknown."""
        if self._files_key is None and self._files is not None:
            self._files_key = files_key(self._files())
        return self._files_key

    @property
    def superseded(self) -> set[str]:
        """The ids the documents supersede (hidden unless asked for)."""
        if self._superseded is None:
            self._superseded = {s for d in self.docs for s in d.get("supersedes") or []}
        return self._superseded

    def reached(
        self, kw_sim: Sequence[float], least: float, dense: dict[str, float] | None
    ) -> list[int]:
        """The documents that may rank above a positive floor, in index order: those whose
        keyword similarity is at least `least` (`rank.keyword_floor`) and those the dense
        search found. The ranking still checks each one's fused similarity."""
        found = [i for i, sim in enumerate(kw_sim) if sim >= least]
        if dense:
            if self._position is None:
                self._position = {key: i for i, key in enumerate(self.keys)}
            position = self._position
            found.extend(position[k] for k in dense if k in position)
            found = sorted(set(found))
        return found
