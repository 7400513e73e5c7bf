"""What a search returns: one found learning, shaped for `lore search --json`.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..contracts.knowledge import ScoreParts as ScorePartsData
    from ..contracts.knowledge import SearchResultData
    from .rank import ScoreParts

# (applications, success rate or None, occurrences) of a learning id
StatsProvider = Callable[[str], tuple[int, float | None, int]]


def no_stats(learning_id: str) -> tuple[int, float | None, int]:
    return 0, None, 1


@dataclass
class SearchResult:
    """One learning found by a search; `to_dict()` is the `lore search --json` item."""

    id: str
    title: str
    path: str
    score: float
    similarity: float
    keyword_score: float
    semantic_score: float | None
    doc: dict[str, Any]
    applications: int = 0
    success_rate: float | None = None
    recommendation: str = ""
    parts: ScoreParts | None = None  # where `score` comes from (`lore search --explain`)

    def explain(self) -> ScorePartsData | None:
        """The score's keyword, dense and boost parts (they sum to `score`) and the figures
        behind them; None for a result made without them."""
        return None if self.parts is None else self.parts.to_dict()

    @property
    def takeaway(self) -> str:
        from .documents import Document

        return Document.from_dict(self.doc).takeaway

    def to_dict(self, explain: bool = False) -> SearchResultData:
        """The `--json` item; with `explain`, also its score's parts (`explain()`)."""
        d = self.doc
        out: SearchResultData = {
            "id": self.id,
            "title": self.title,
            "kind": d.get("kind"),
            "category": d.get("category"),
            "severity": d.get("severity"),
            "status": d.get("status"),
            "tags": d.get("tags") or [],
            "created": d.get("created"),
            "score": round(self.score, 4),
            "similarity": round(self.similarity, 4),
            "keyword_score": round(self.keyword_score, 4),
            "semantic_score": None
            if self.semantic_score is None
            else round(self.semantic_score, 4),
            "takeaway": self.takeaway,
            "applications": self.applications,
            "success_rate": self.success_rate,
            "stale": bool(d.get("stale")),
            "recommendation": self.recommendation,
            "path": self.path,
        }
        if explain:
            out["explain"] = self.explain()
        return out


class SearchResults(list[SearchResult]):
    """What one search found, best first (a list), and how: `query` as it may be echoed
    (redacted, never raw), the `mode` it could use (keyword when the dense half failed), its
    own `warnings` and why it was `degraded` to keywords (None: complete). Each search has
    its own: nothing of one is left on the index for the next (`lore mcp` serves many)."""

    def __init__(
        self,
        found: Iterable[SearchResult] = (),
        *,
        query: str = "",
        mode: str = "hybrid",
        warnings: Iterable[str] = (),
        degraded: str | None = None,
    ) -> None:
        super().__init__(found)
        self.query = query
        self.mode = mode
        self.warnings = list(warnings)
        self.degraded = degraded

    def like(self, found: Iterable[SearchResult]) -> SearchResults:
        """`found` (some of these, reordered) with this search's query, mode and warnings."""
        return SearchResults(found, query=self.query, mode=self.mode, warnings=self.warnings,
                             degraded=self.degraded)  # fmt: skip
