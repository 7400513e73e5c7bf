"""The dense side of a search: the embedding model a store is configured for, loaded once per
process (`Model`), and a query's nearest passages in the vector store, by learning
(`nearest`). Apart from `SearchIndex`, which decides when a search asks for them and what a
degraded answer means; the embedding libraries themselves are imported only when the model
is wanted, so a keyword search never loads them.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..notices import Notice
from .chroma_store import reason
from .lock import IndexBusy

if TYPE_CHECKING:
    import threading

    from ..progress import Progress
    from .chroma_store import ChromaStore
    from .embed import Embedder
    from .lock import IndexLocks

DENSE_CANDIDATES = 200  # nearest passages asked of Chroma per query


class Model:
    """The embedding model `name` (none when not `enabled`), loaded once under `lock`; None
    when it cannot load, said to every caller that wanted it (for the life of the process,
    each of their searches is keyword-only)."""

    def __init__(self, name: str | None, enabled: bool, lock: threading.Lock) -> None:
        self.name, self.enabled, self.lock = name, enabled, lock
        self._embedder: Embedder | None = None
        self._tried = False
        self._problem: str | None = None

    def load(self, warn: Callable[[str], None], progress: Progress | None) -> Embedder | None:
        """The model, loaded on the first call (`progress` hears of its export and load)."""
        with self.lock:
            if not self._tried:
                self._tried = True
                if self.enabled:
                    from .embed import ModelUnavailable, load_embedder  # only when it is wanted

                    try:
                        self._embedder = load_embedder(self.name, notice=warn, progress=progress)
                    except ModelUnavailable as exc:
                        self._problem = Notice("{}; searching by keywords only", exc)
        if self._problem is not None:
            warn(self._problem)
        return self._embedder

    def pinned(self) -> str | None:
        """The model an index built now would be pinned to (None: keyword-only)."""
        if not self.enabled:
            return None
        from .embed import ModelUnavailable, resolve_model  # not for a keyword-only store

        try:
            return resolve_model(self.name)[0]
        except ModelUnavailable:
            return None


def nearest(
    embedder: Embedder,
    query: str,
    store: ChromaStore,
    locks: IndexLocks,
    chunks: int,
    degrade: Callable[[str], None],
    store_error: Callable[[Exception], None],
) -> dict[str, float] | None:
    """The best similarity of each learning among the passages nearest `query`; None, said
    to `degrade`, when the index is busy or unreadable (`store_error` hears why first, and may
    raise) or the vector store holds other than `chunks` passages."""
    vector = embedder.encode([query])[0]
    try:
        with locks.read():
            hits, stored = store.query(vector, DENSE_CANDIDATES)
    except IndexBusy as exc:
        degrade(str(exc))
        return None
    except Exception as exc:  # Chroma's files deleted, replaced or read-only under us
        store_error(exc)
        degrade(f"the vector index cannot be read ({reason(exc)})")
        return None
    if stored != chunks:
        degrade("the vector index is out of step with the files (being rebuilt?)")
        return None
    best: dict[str, float] = {}
    for key, sim in hits:
        if sim > best.get(key, -1.0):
            best[key] = sim
    return best
