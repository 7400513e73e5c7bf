"""Application and occurrence figures, derived from the action log only (never stored in files).

`apply_learning` actions (`lore apply`) count how often a learning was applied and how often that
worked; `occurrence` actions (`lore pattern record`) give a pattern's occurrence count, each
solution's times applied / successful, resolution minutes, last seen and trend. Records are
de-duplicated by action id, so a union merge that duplicated lines changes nothing.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from ..timeutil import format_ts, parse_ts

if TYPE_CHECKING:
    from ..contracts.knowledge import LearningFigures
    from ..contracts.knowledge import SolutionFigures as SolutionData

APPLY = "apply_learning"
OCCURRENCE = "occurrence"
TREND_DAYS = 30
# a trend needs a change of at least a quarter AND of at least two occurrences, so that
# 1 -> 2 or 0 -> 1 stays "stable" rather than flapping between the two labels
TREND_RATIO = 1.25
TREND_MIN_DELTA = 2
# ... and enough evidence: this many occurrences spread over this many distinct weeks
TREND_MIN_COUNT = 5
TREND_MIN_BUCKETS = 2
NOT_ENOUGH = "not enough data"


def rate(successes: int, total: int) -> float | None:
    """Success rate in [0, 1], or None when nothing was counted."""
    return round(successes / total, 4) if total else None


@dataclass
class SolutionFigures:
    times_applied: int = 0
    times_successful: int = 0
    minutes: list[float] = field(default_factory=list)

    def to_dict(self) -> SolutionData:
        return {
            "times_applied": self.times_applied,
            "times_successful": self.times_successful,
            "success_rate": rate(self.times_successful, self.times_applied),
            "avg_resolution_minutes": _mean(self.minutes),
        }


@dataclass
class Figures:
    """Everything the log says about one learning (or pattern)."""

    learning: str
    applications: int = 0
    successes: int = 0
    last_applied: str | None = None
    occurrences: int = 0
    occurrence_successes: int = 0
    found_via_search: int = 0
    last_seen: str | None = None
    minutes: list[float] = field(default_factory=list)
    solutions: dict[str, SolutionFigures] = field(default_factory=dict)
    occurrence_times: list[str] = field(default_factory=list)

    def add_application(self, record: dict[str, Any]) -> None:
        self.applications += 1
        self.successes += record.get("outcome") == "success"
        self.last_applied = _later(self.last_applied, record["ts"])

    def add_occurrence(self, record: dict[str, Any]) -> None:
        context = record.get("context") or {}
        ok = record.get("outcome") == "success"
        self.occurrences += 1
        self.occurrence_successes += ok
        self.found_via_search += context.get("via_search") is True
        self.last_seen = _later(self.last_seen, record["ts"])
        self.occurrence_times.append(record["ts"])
        minutes = _minutes(context.get("minutes"))
        if minutes is not None:
            self.minutes.append(minutes)
        solution = context.get("solution")
        if isinstance(solution, str) and solution:
            figures = self.solutions.setdefault(solution, SolutionFigures())
            figures.times_applied += 1
            figures.times_successful += ok
            if minutes is not None:
                figures.minutes.append(minutes)

    def trend(self, now: datetime) -> str:
        return trend(self.occurrence_times, now)

    def to_dict(self, now: datetime, *, pattern: bool | None = None) -> LearningFigures:
        """The JSON shape of `lore stats` (pattern figures when `pattern` or any occurrence)."""
        out: LearningFigures = {
            "id": self.learning,
            "applications": self.applications,
            "successes": self.successes,
            "success_rate": rate(self.successes, self.applications),
            "last_applied": self.last_applied,
        }
        if pattern or (pattern is None and self.occurrences):
            out["pattern"] = {
                "occurrence_count": self.occurrences,
                "success_rate": rate(self.occurrence_successes, self.occurrences),
                "avg_resolution_minutes": _mean(self.minutes),
                "found_via_search": self.found_via_search,
                "last_seen": self.last_seen,
                "trend": self.trend(now),
                "solutions": {sid: f.to_dict() for sid, f in sorted(self.solutions.items())},
            }
        return out


def _later(current: str | None, ts: str) -> str:
    return ts if current is None or ts > current else current


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 2) if values else None


def _minutes(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        return None
    return float(value)


def trend(times: Iterable[str], now: datetime) -> str:
    """increasing / decreasing / stable: the last 30 days against the 30 days before; "not
    enough data" unless the 60 days hold TREND_MIN_COUNT occurrences in at least
    TREND_MIN_BUCKETS different weeks (a burst logged in one minute is not a trend)."""
    edge = format_ts(now - timedelta(days=TREND_DAYS))
    start = format_ts(now - timedelta(days=2 * TREND_DAYS))
    end = format_ts(now)
    recent = previous = 0
    weeks: set[int] = set()
    for ts in times:
        if start <= ts < end:
            weeks.add(_weeks_before(ts, now))
        if edge <= ts < end:
            recent += 1
        elif start <= ts < edge:
            previous += 1
    if recent + previous < TREND_MIN_COUNT or len(weeks) < TREND_MIN_BUCKETS:
        return NOT_ENOUGH
    if recent - previous >= TREND_MIN_DELTA and recent >= previous * TREND_RATIO:
        return "increasing"
    if previous - recent >= TREND_MIN_DELTA and previous >= recent * TREND_RATIO:
        return "decreasing"
    return "stable"


def _weeks_before(ts: str, now: datetime) -> int:
    """Which 7-day bucket, counted back from `now`, the timestamp `ts` falls in."""
    return int((now - parse_ts(ts)).total_seconds() // (7 * 86400))


def laplace(successes: int, total: int) -> float:
    """The success rate with a Beta(1, 1) prior: (s + 1) / (n + 2), so that 1/1 (0.67) does
    not outrank 9/10 (0.83) and a solution with no evidence sits at 0.5."""
    return (successes + 1) / (total + 2)


def rank_solutions(
    solutions: Iterable[dict[str, Any]], figures: dict[str, SolutionFigures]
) -> list[dict[str, Any]]:
    """A pattern's solutions, best first by their own recorded outcomes (Laplace-smoothed;
    ties keep the documented order), each with its own successes, count and rate."""
    ranked = []
    for order, solution in enumerate(solutions):
        own = figures.get(str(solution.get("id")), SolutionFigures())
        ranked.append(
            (
                -laplace(own.times_successful, own.times_applied),
                -own.times_applied,
                order,
                {
                    "id": solution.get("id"),
                    "text": solution.get("text") or "",
                    "times_applied": own.times_applied,
                    "times_successful": own.times_successful,
                    "success_rate": rate(own.times_successful, own.times_applied),
                },
            )
        )
    return [item for *_, item in sorted(ranked, key=lambda r: r[:3])]


def subject(record: dict[str, Any]) -> str | None:
    """The learning an `apply_learning` or `occurrence` action is about."""
    context = record.get("context")
    if not isinstance(context, dict):
        return None
    value = context.get("learning")
    return value if isinstance(value, str) and value else None


def collect(records: Iterable[dict[str, Any]], *, only: str | None = None) -> dict[str, Figures]:
    """Figures per learning id from `apply_learning` and `occurrence` actions (any order),
    counting each action id once, and a tracked one (`Session.track`: an `in_progress` start,
    then its outcome naming it as `parent`) once, as its outcome."""
    seen: set[str] = set()
    kept: list[tuple[str, dict[str, Any]]] = []
    closers: dict[str, list[tuple[str, str]]] = {}  # start id -> (type, ts) of its outcomes
    for record in records:
        kind = record.get("type")
        if record.get("kind") != "action" or kind not in (APPLY, OCCURRENCE):
            continue
        learning = subject(record)
        if learning is None or (only is not None and learning != only):
            continue
        if record["id"] in seen:
            continue
        seen.add(record["id"])
        parent = record.get("parent")
        if isinstance(parent, str) and record.get("outcome") != "in_progress":
            closers.setdefault(parent, []).append((kind, record["ts"]))
        kept.append((learning, record))
    out: dict[str, Figures] = {}
    for learning, record in kept:
        kind = record["type"]
        if record.get("outcome") == "in_progress" and any(
            t == kind and ts >= record["ts"] for t, ts in closers.get(record["id"], ())
        ):
            continue  # superseded by its outcome
        figures = out.get(learning)
        if figures is None:
            figures = out[learning] = Figures(learning)
        if kind == APPLY:
            figures.add_application(record)
        else:
            figures.add_occurrence(record)
    return out
