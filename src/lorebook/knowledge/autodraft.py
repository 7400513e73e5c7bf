"""Extractive (LLM-free) drafts from what the action log shows about an epic or an issue.

From an epic's actions: failed validations and other failures become the Problem, their error
texts and any `root_cause` / `reason` notes the Root Cause candidates, commits whose message
names the epic (git history and logged `commit` actions) the Solution, and estimated vs actual
time (when logged) part of the Key Takeaway. From an `issue_resolved` action: its description,
resolution and labels.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from ..git.binary import commits_mentioning
from ..log.query import ActionFilter
from ..model import INTERNAL_TYPES
from ..redact.sanitize import clip
from ..timeutil import format_ts, parse_ts, utcnow
from .drafting import DraftOutcome, DraftSpec, write_draft
from .ids import slugify

if TYPE_CHECKING:
    from ..config import Config
    from ..log.actionlog import ActionLog
    from .store import LearningStore

MAX_ITEMS = 12  # per section: a draft is a starting point for a reviewer, not a dump
CAUSE_KEYS = ("root_cause", "cause", "reason", "blocker", "notes", "finding")
ESTIMATE_KEYS = ("estimated_hours", "estimate_hours", "time_estimate", "estimated_h")
ACTUAL_KEYS = ("actual_hours", "time_actual", "actual_h")
_CAUSE_SENTENCE = re.compile(r"\b(because|caused|root cause|due to|turned out)\b", re.I)


def stamp(ts: str) -> str:
    """`2026-11-22T10:15:00.000Z` -> `20261122-101500` (UTC, for ids)."""
    return ts[:10].replace("-", "") + "-" + ts[11:19].replace(":", "")


def _first_line(text: Any, limit: int = 240) -> str:
    """The first line of (redacted) text, cut to `limit` without splitting a marker."""
    line = str(text).strip().splitlines()[0] if str(text).strip() else ""
    return clip(line, limit)


def _context(record: dict[str, Any]) -> dict[str, Any]:
    context = record.get("context")
    return context if isinstance(context, dict) else {}


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip().rstrip("h"))
        except ValueError:
            return None
    return None


def _latest(actions: list[dict[str, Any]], keys: tuple[str, ...]) -> Any:
    for action in reversed(actions):
        context = _context(action)
        for key in keys:
            if context.get(key) not in (None, ""):
                return context[key]
    return None


def _failure_line(action: dict[str, Any]) -> str:
    context = _context(action)
    detail = action.get("error") or context.get("error") or context.get("failures")
    detail = detail or context.get("message") or context.get("reason") or ""
    when = action["ts"][:16].replace("T", " ")
    text = f"- `{action['type']}` {action['outcome']} ({when})"
    return f"{text}: {_first_line(detail)}" if detail else text


def _hours(estimated: Any, actual: Any, actions: list[dict[str, Any]]) -> str:
    est, act = _number(estimated), _number(actual)
    if act is None and len(actions) > 1:
        span = parse_ts(actions[-1]["ts"]) - parse_ts(actions[0]["ts"])
        hours = round(span.total_seconds() / 3600, 1)
        act = hours if hours > 0 else None  # a span under six minutes says nothing
    if est is None and act is None:
        return ""
    if est is None:
        return f"Took {act:g} h (no estimate logged)."
    if act is None:
        return f"Estimated {est:g} h (actual time not logged)."
    change = f" ({(act - est) / est:+.0%})" if est else ""
    return f"Estimated {est:g} h, took {act:g} h{change}."


def epic_spec(
    epic: str,
    actions: list[dict[str, Any]],
    *,
    trigger: dict[str, Any] | None = None,
    commits: Sequence[tuple[str, str]] = (),
    key: str | None = None,
) -> DraftSpec:
    """The draft for `epic` from its actions (oldest first) and the commits naming it; `key`
    names the trigger it is the one draft of (see `drafting`)."""
    failures = [a for a in actions if a.get("outcome") in ("failure", "blocked")]
    failed_validations = [a for a in failures if a.get("type") == "validate"]
    problem = [_failure_line(a) for a in failures[:MAX_ITEMS]]
    if len(failures) > MAX_ITEMS:
        problem.append(f"- … and {len(failures) - MAX_ITEMS} more failures")
    causes: list[str] = []
    for action in failures + actions:
        context = _context(action)
        for value in (action.get("error"), *(context.get(k) for k in CAUSE_KEYS)):
            if isinstance(value, str) and value.strip():
                causes.append(f"- {_first_line(value)}")
    causes = list(dict.fromkeys(causes))[:MAX_ITEMS]
    solution_lines = [f"- {subject} ({short})" for short, subject in commits]
    for action in actions:
        context = _context(action)
        message = context.get("message") or context.get("commit_message")
        if action.get("type") == "commit" and action.get("outcome") == "success" and message:
            short = str(context.get("commit_hash") or context.get("hash") or "")[:7]
            line = f"- {_first_line(message)}" + (f" ({short})" if short else "")
            if not any(short and short in existing for existing in solution_lines):
                solution_lines.append(line)
    approach = _latest(actions, ("approach", "resolution", "solution"))
    if approach:
        solution_lines.insert(0, f"Approach: {_first_line(approach, 400)}")
    solution_lines = list(dict.fromkeys(solution_lines))[: MAX_ITEMS + 1]
    title_text = _latest(actions, ("title", "epic_title"))
    if trigger is not None and trigger.get("type") == "validate":
        title = f"Repeated validation failures in {epic}"
    elif title_text:
        title = f"Learnings from {_first_line(title_text, 120)} ({epic})"
    else:
        title = f"Learnings from {epic}"
    summary = [
        f"{epic}: {len(failures)} failed or blocked action(s), "
        f"{len(failed_validations)} of them validations, "
        f"{len(solution_lines)} change(s) in the solution."
    ]
    hours = _hours(_latest(actions, ESTIMATE_KEYS), _latest(actions, ACTUAL_KEYS), actions)
    if hours:
        summary.append(hours)
    category = _latest(actions, ("category",))
    failed_types = Counter(str(a.get("type")) for a in failures)
    tags = ["auto-draft", *(t for t, _ in failed_types.most_common(3))]
    extra_tags = _latest(actions, ("tags",))
    if isinstance(extra_tags, list):
        tags += [str(t) for t in extra_tags if isinstance(t, str | int)]
    origin = epic if trigger is None else f"{epic} ({trigger['type']} action {trigger['id']})"
    moment = trigger["ts"] if trigger is not None else format_ts(utcnow())
    return DraftSpec(
        title=title,
        origin=origin,
        problem="\n".join(problem) or "No failed or blocked actions were logged for this epic.",
        root_cause="\n".join(causes),
        solution="\n".join(solution_lines),
        takeaway=" ".join(summary),
        severity="high" if failures else "medium",
        category=str(category) if isinstance(category, str) and category else None,
        tags=list(dict.fromkeys(tags)),
        source={"epic": epic, "session": trigger.get("session") if trigger else None},
        learning_id=f"auto-{slugify(epic, 60)}" + ("" if key else f"-{stamp(moment)}"),
        trigger=key,
    )


def epic_actions(action_log: ActionLog, epic: str, since: str | None) -> list[dict[str, Any]]:
    """The epic's actions, oldest first, through the query layer."""
    query = ActionFilter(epic=epic, since=since)
    return [
        action
        for action in action_log.iter_actions(query, newest_first=False)
        if action.get("type") not in INTERNAL_TYPES  # lorebook's bookkeeping is not the epic's work
    ]


def lookback(config: Config, now: datetime | None = None) -> str:
    days = config.drafts.lookback_days
    return format_ts((now or utcnow()) - timedelta(days=days))


def draft_from_epic(
    action_log: ActionLog,
    store: LearningStore,
    config: Config,
    epic: str,
    *,
    since: str | None = None,
    trigger: dict[str, Any] | None = None,
    key: str | None = None,
    force: bool = False,
) -> DraftOutcome:
    """Extract a draft for `epic` (actions since `since`, default `drafts.lookback_days`);
    with a trigger `key`, at most one draft is ever written for that key; without one, none
    for an epic drafted before unless `force`."""
    if not epic or not epic.strip():
        raise UsageError("an epic id is required")
    moment = parse_ts(trigger["ts"]) if trigger is not None else None
    start = since or lookback(config, moment)  # a backdated trigger looks back from its own time
    actions = epic_actions(action_log, epic, start)
    if not actions:
        raise UsageError(
            "no actions logged for epic {!r} since {} (see `lore actions --epic`)", epic, start[:10]
        )
    commits = commits_mentioning(action_log.root, epic, MAX_ITEMS)
    spec = epic_spec(epic, actions, trigger=trigger, commits=commits, key=key)
    return write_draft(store, action_log, spec, trigger=trigger, force=force)


# -- issues --------------------------------------------------------------------------------
def labels_of(context: dict[str, Any]) -> list[str]:
    raw = context.get("labels")
    if isinstance(raw, str):
        raw = raw.split(",")
    if not isinstance(raw, list):
        return []
    return [str(x).strip() for x in raw if isinstance(x, str | int) and str(x).strip()]


def resolution_of(context: dict[str, Any]) -> str:
    value = context.get("resolution") or context.get("resolution_notes") or ""
    return value if isinstance(value, str) else ""


def issue_qualifies(record: dict[str, Any], min_chars: int) -> bool:
    """The seed's rule: a `bug` label and a resolution longer than `min_chars` characters."""
    context = _context(record)
    bug = any(label.lower() == "bug" for label in labels_of(context))
    return bug and len(resolution_of(context).strip()) > min_chars


def issue_of(record: dict[str, Any]) -> str | None:
    context = _context(record)
    issue = record.get("issue") or context.get("issue") or context.get("issue_id")
    return str(issue) if isinstance(issue, str | int) and str(issue).strip() else None


def issue_spec(record: dict[str, Any], key: str | None = None) -> DraftSpec:
    context = _context(record)
    issue = issue_of(record) or "issue"
    labels = labels_of(context)
    resolution = resolution_of(context).strip()
    sentences = re.split(r"(?<=[.!?])\s+", resolution)
    causes = list(dict.fromkeys(s for s in sentences if _CAUSE_SENTENCE.search(s)))
    title = context.get("title")
    title = _first_line(title, 120) if isinstance(title, str) and title.strip() else None
    problem = context.get("description") or context.get("problem") or title or ""
    lowered = {label.lower() for label in labels}
    severity = "high" if lowered & {"critical", "p0", "p1", "high", "security"} else "medium"
    return DraftSpec(
        title=f"Bug {issue}: {title}" if title else f"Resolved bug {issue}",
        origin=f"issue {issue} (issue_resolved action {record['id']})",
        problem=str(problem),
        root_cause="\n".join(f"- {s}" for s in causes),
        solution=resolution,
        takeaway=_first_line(causes[0] if causes else resolution, 300),
        severity=severity,
        category=context.get("category") if isinstance(context.get("category"), str) else None,
        tags=list(dict.fromkeys(["auto-draft", *labels])),
        source={"issue": str(issue), "epic": record.get("epic"), "session": record.get("session")},
        learning_id=f"auto-issue-{slugify(str(issue), 60)}"
        + ("" if key else f"-{stamp(record['ts'])}"),
        trigger=key,
    )


def draft_from_issue(
    action_log: ActionLog,
    store: LearningStore,
    issue: str,
    *,
    trigger: dict[str, Any] | None = None,
    force: bool = False,
) -> DraftOutcome:
    """Draft from the issue's `issue_resolved` action (the triggering one, else the latest);
    by hand, none for an issue drafted before unless `force`."""
    record = trigger
    if record is None:
        found = action_log.iter_actions(ActionFilter(type="issue_resolved", issue=issue))
        record = next(iter(found), None)
        if record is None:
            raise UsageError(
                "no issue_resolved action for issue {!r} "
                "(log one: lore log issue_resolved --issue {} --context "
                '\'{{"labels": ["bug"], "resolution": "..."}}\')',
                issue,
                issue,
            )
    if not resolution_of(_context(record)).strip():
        raise UsageError("issue {!r}: its issue_resolved action has no context.resolution", issue)
    named = issue_of(record)
    key = f"issue:{named}" if trigger is not None and named else None
    return write_draft(store, action_log, issue_spec(record, key), trigger=trigger, force=force)
