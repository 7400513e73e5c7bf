"""Ranking: fuse keyword and dense similarity, then the LEO weighting, threshold and filters.

Pure functions over plain values, so the policy is testable without a model or an index.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date
from typing import Any

from ..errors import UsageError
from ..settings import SearchSettings

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
    w = settings.weights
    success = settings.unknown_success if success_rate is None else success_rate
    specificity = 1.0 / max(occurrences, 1)
    score = (
        w.similarity * similarity
        + w.success * success
        + w.recency * recency_value
        + w.specificity * specificity
    )
    return score * (settings.stale_factor if stale else 1.0)


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
