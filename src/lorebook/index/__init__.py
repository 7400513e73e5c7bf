"""Search: a hybrid BM25 + dense index of the learnings, derived from the files under
`.lore/cache/index/` (delete it any time; it is rebuilt). Heavy libraries load lazily.

The names below load on first use: `lore resume` ranks learnings with `index.related` (the
keyword half alone) and must not pay for the engine's imports (front matter, pydantic).

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs milliseconds on cold paths; mypy still sees it
if TYPE_CHECKING:
    from typing import Any

    from .engine import SearchIndex
    from .indexer import IndexReport
    from .rank import Filters
    from .result import SearchResult, SearchResults

__all__ = ["Filters", "IndexReport", "SearchIndex", "SearchResult", "SearchResults"]

_HOMES = {
    "SearchIndex": "engine",
    "SearchResult": "result",
    "SearchResults": "result",
    "IndexReport": "indexer",
    "Filters": "rank",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
