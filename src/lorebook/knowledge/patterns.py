"""Issue patterns and application tracking: the actions that feed the derived figures.

`lore pattern new` writes a `kind: pattern` learning whose `solutions` carry ids (s1, s2, ...);
`lore pattern record` appends an `occurrence` action and `lore apply` an `apply_learning`
action. Nothing here rewrites a learning file: counts and rates live in the log (see `stats`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from .stats import APPLY, OCCURRENCE

if TYPE_CHECKING:
    from ..log.actionlog import ActionLog
    from .api import Learnings
    from .model import Learning

OUTCOMES = ("success", "failure")
SOLUTION_ID = "s{}"


def solutions_from_texts(texts: Iterable[str]) -> list[dict[str, str]]:
    """`[{"id": "s1", "text": ...}, ...]` for the non-empty texts, in order."""
    clean = [t.strip() for t in texts if t and t.strip()]
    return [{"id": SOLUTION_ID.format(i), "text": t} for i, t in enumerate(clean, 1)]


def pattern_body(problem: str, solutions: list[dict[str, str]], prevention: list[str]) -> str:
    lines = [f"## Problem\n{problem.strip()}\n", "## Root Cause\n", "## Solution"]
    lines += [f"- {s['id']}: {s['text']}" for s in solutions]
    lines += ["", "## Key Takeaway"]
    if prevention:
        lines.append(f"Prevent it: {prevention[0]}")
    return "\n".join(lines) + "\n"


def new_pattern(
    learnings: Learnings,
    *,
    title: str,
    solutions: Iterable[str] = (),
    prevention: Iterable[str] = (),
    problem: str = "",
    body: str | None = None,
    **fields: Any,
) -> Learning:
    """A pattern learning (a draft unless `publish=True`)."""
    found = solutions_from_texts(solutions)
    checklist = [p.strip() for p in prevention if p and p.strip()]
    text = body if body is not None else pattern_body(problem or title, found, checklist)
    return learnings.new(
        title=title, kind="pattern", body=text, solutions=found, prevention=checklist, **fields
    )


def check_outcome(outcome: str) -> str:
    if outcome not in OUTCOMES:
        raise UsageError("outcome {!r} is not one of: " + ", ".join(OUTCOMES), outcome)
    return outcome


def apply_learning(
    learnings: Learnings,
    action_log: ActionLog,
    learning_id: str,
    *,
    outcome: str,
    epic: str | None = None,
    note: str | None = None,
    session: str | None = None,
) -> dict[str, Any]:
    """Log that a learning was applied and whether it worked."""
    check_outcome(outcome)
    learning = learnings.get(learning_id)  # a one-line error when there is none
    context: dict[str, Any] = {"learning": learning.id, "kind": learning.kind}
    if note:
        context["note"] = note
    return action_log.log(APPLY, outcome=outcome, epic=epic, context=context, session=session)


def record_occurrence(
    learnings: Learnings,
    action_log: ActionLog,
    pattern_id: str,
    *,
    solution: str,
    success: bool,
    minutes: float | None = None,
    via_search: bool = False,
    epic: str | None = None,
    note: str | None = None,
    session: str | None = None,
) -> dict[str, Any]:
    """Log one occurrence of a pattern: which solution, whether it worked, how long it took."""
    pattern = learnings.get(pattern_id)
    if pattern.kind != "pattern":
        raise UsageError(
            "{} is a {}, not a pattern: use `lore apply` for lessons", pattern.id, pattern.kind
        )
    known = [s.id for s in pattern.solutions]
    if solution not in known:
        listed = ", ".join(known) if known else "none (add `solutions` to its front matter)"
        raise UsageError("{} has no solution {!r}; its solutions: {}", pattern.id, solution, listed)
    if minutes is not None and (isinstance(minutes, bool) or not 0 <= minutes < 10**7):
        raise UsageError("--minutes {!r} must be a non-negative number of minutes", minutes)
    context: dict[str, Any] = {
        "learning": pattern.id,
        "solution": solution,
        "via_search": bool(via_search),
    }
    if minutes is not None:
        context["minutes"] = minutes
    if note:
        context["note"] = note
    return action_log.log(
        OCCURRENCE,
        outcome="success" if success else "failure",
        epic=epic,
        context=context,
        session=session,
    )
