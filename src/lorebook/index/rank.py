"""Ranking: fuse keyword and dense similarity, then the LEO weighting, threshold and filters.

Pure functions over plain values, so the policy is testable without a model or an index.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from ..settings import SearchSettings

if TYPE_CHECKING:
    from ..contracts.knowledge import ScoreParts as ScorePartsData

HIDDEN_STATUSES = ("superseded", "retired")
MODES = ("hybrid", "keyword", "semantic")


@dataclass(frozen=True)
class Filters:
    kind: str | None = None
    category: str | None = None
    severity: str | None = None
    status: str | None = None
    tags: tuple[str, ...] = ()
    created_from: str | None = None  # YYYY-MM-DD, inclusive
    created_to: str | None = None
    include_hidden: bool = False

    def __post_init__(self) -> None:
        for name in ("created_from", "created_to"):
            value = getattr(self, name)
            if value is None:
                continue
            try:
                date.fromisoformat(value)
            except (TypeError, ValueError):
                flag = "--since" if name == "created_from" else "--until"
                raise UsageError("{} {!r} is not a date (YYYY-MM-DD)", flag, value) from None

    def admits(self, doc: dict[str, Any], superseded: set[str]) -> bool:
        status = doc.get("status") or "published"
        if self.status is not None:
            if status != self.status:
                return False
        elif not self.include_hidden and (status in HIDDEN_STATUSES or doc["id"] in superseded):
            return False
        for name in ("kind", "category", "severity"):
            wanted = getattr(self, name)
            if wanted is not None and str(doc.get(name) or "").lower() != wanted.lower():
                return False
        if self.tags:
            have = {t.lower() for t in doc.get("tags") or []}
            if not all(t.lower() in have for t in self.tags):
                return False
        created = doc.get("created") or ""
        if self.created_from and (not created or created < self.created_from):
            return False
        return not (self.created_to and (not created or created > self.created_to))


def fuse(keyword: float, dense: float | None, mode: str, dense_weight: float) -> float:
    """The similarity (0..1) a result is ranked and thresholded on."""
    if mode == "keyword" or dense is None:
        return keyword
    if mode == "semantic":
        return dense
    return dense_weight * dense + (1.0 - dense_weight) * keyword


def keyword_floor(floor: float, mode: str, dense_weight: float, dense: bool) -> float:
    """The least keyword similarity with which a learning the dense search did not return can
    still `fuse` to `floor` (> 0); a hair lower, as a pre-filter: `fuse` decides. `dense`: the
    dense side answered (its missing learnings then count 0)."""
    if mode == "keyword" or not dense:
        least = floor
    elif mode == "semantic" or dense_weight >= 1.0:
        return math.inf
    else:
        least = floor / (1.0 - dense_weight)
    return least * (1.0 - 1e-9)


def recency(created: str | None, today: date, half_life_days: float) -> float:
    if not created:
        return 0.5
    try:
        age = (today - date.fromisoformat(created[:10])).days
    except ValueError:
        return 0.5
    return float(math.pow(0.5, max(age, 0) / max(half_life_days, 1e-9)))


def leo_score(
    similarity: float,
    *,
    success_rate: float | None,
    recency_value: float,
    occurrences: int,
    stale: bool,
    settings: SearchSettings,
) -> float:
    """The LEO weighting of a result whose relevance (similarity over the best result's) is
    `similarity`: the seed's weighted sum (similarity .4, success .3, recency .2, specificity
    .1) times that relevance, so the best match scores the seed's figure and every boost counts
    in proportion to how well a learning matches -- a proven, recent learning that barely
    matches cannot bury the one the query is about (see `score_parts`)."""
    return score_parts(
        0.0,
        similarity,
        "semantic",
        1.0,
        1.0,
        success_rate=success_rate,
        recency_value=recency_value,
        occurrences=occurrences,
        stale=stale,
        settings=settings,
    ).score


@dataclass(frozen=True)
class ScoreParts:
    """Where a result's score comes from (`lore search --explain`): its keyword, dense and
    boost parts sum to `score`, the figure results are ranked by."""

    keyword: float  # the keyword similarity's part of the score
    dense: float  # the dense similarity's part
    boost: float  # success rate, recency and specificity, in proportion to relevance
    score: float
    relevance: float  # the fused similarity over the best result's (0..1)
    success: float  # the success rate counted (`unknown_success` when never applied)
    recency: float
    specificity: float
    stale_factor: float  # 1.0, or `stale_factor` for a stale learning

    def to_dict(self) -> ScorePartsData:
        return {
            "keyword": round(self.keyword, 4),
            "dense": round(self.dense, 4),
            "boost": round(self.boost, 4),
            "score": round(self.score, 4),
            "relevance": round(self.relevance, 4),
            "success": round(self.success, 4),
            "recency": round(self.recency, 4),
            "specificity": round(self.specificity, 4),
            "stale_factor": round(self.stale_factor, 4),
        }


def score_parts(
    keyword: float,
    dense: float | None,
    mode: str,
    dense_weight: float,
    top: float,
    *,
    success_rate: float | None,
    recency_value: float,
    occurrences: int,
    stale: bool,
    settings: SearchSettings,
) -> ScoreParts:
    """The ranking score of a learning and its parts, from its keyword and dense similarity
    (`fuse`), the best fused similarity of the search (`top`) and its figures.

    score = relevance x (w.similarity + w.success x success + w.recency x recency
    + w.specificity x specificity) x stale factor, where relevance = fused / top. The
    similarity term is split between the keyword and dense sides by their share of the fused
    similarity; the rest is the boost. A multiplied boost (not an added one, as the seed had):
    with the seed's weights an added boost (up to 0.6) outweighed the whole similarity term
    (0.4), so a weak match that was applied often or written lately outranked the right one."""
    w = settings.weights
    fused = fuse(keyword, dense, mode, dense_weight)
    relevance = fused / top if top > 0 else 0.0
    if mode == "keyword" or dense is None:
        kw_share, dense_share = keyword, 0.0
    elif mode == "semantic":
        kw_share, dense_share = 0.0, dense
    else:
        kw_share, dense_share = (1.0 - dense_weight) * keyword, dense_weight * dense
    success = settings.unknown_success if success_rate is None else success_rate
    specificity = 1.0 / max(occurrences, 1)
    factor = settings.stale_factor if stale else 1.0
    boosts = w.success * success + w.recency * recency_value + w.specificity * specificity
    scale = factor / top if top > 0 else 0.0
    kw_part = w.similarity * kw_share * scale
    dense_part = w.similarity * dense_share * scale
    boost_part = relevance * boosts * factor
    return ScoreParts(
        keyword=kw_part,
        dense=dense_part,
        boost=boost_part,
        score=kw_part + dense_part + boost_part,
        relevance=relevance,
        success=success,
        recency=recency_value,
        specificity=specificity,
        stale_factor=factor,
    )


def recommendation(applications: int, success_rate: float | None, stale: bool) -> str:
    """The seed's advice line for a result, from its proven success."""
    if not applications or success_rate is None:
        text = "UNPROVEN — no recorded applications yet; review before applying"
    elif success_rate >= 0.9 and applications >= 3:
        text = "HIGH SUCCESS — apply preemptively"
    elif success_rate >= 0.6:
        text = "MODERATE — be aware, prepare a contingency"
    else:
        text = "LOW SUCCESS — look for a better solution before applying"
    if stale:
        text += " (stale: the code it is about changed since; verify first)"
    return text
