"""Search: a hybrid BM25 + dense index of the learnings, derived from the files under
`.lore/cache/index/` (delete it any time; it is rebuilt). Heavy libraries load lazily."""

from __future__ import annotations

from .engine import SearchIndex, SearchResult
from .indexer import IndexReport
from .rank import Filters

__all__ = ["Filters", "IndexReport", "SearchIndex", "SearchResult"]
