"""The knowledge subscribers of the event bus, behind `knowledge.gate.KnowledgeTriggers`.

* `epic_complete`                       -> the epic's draft `auto-<epic>-<suffix>`
* the Nth (3rd) failed `validate` of an epic in a row (no success between) within
  `drafts.validate_lookback_days` -> a draft of that validation streak
* `issue_resolved` with a `bug` label and a resolution over 200 characters -> the issue's draft

Each trigger drafts once (its key: the epic, the issue, the validation streak named by its
first failure, before the window if it began earlier): a second `epic_complete` of the same epic
writes nothing (see `drafting`).
* any action with outcome `failure` carrying `context.rca` -> an RCA lesson (once)

A subscriber that fails logs a `learning_draft` action with outcome `failure` and the error,
then re-raises so the bus warns; the triggering action is already stored either way.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from ..log.query import ActionFilter
from ..timeutil import format_ts, parse_ts
from .drafting import after

if TYPE_CHECKING:
    from .ops import KnowledgeOps


def failed_validations(ops: KnowledgeOps, record: dict[str, Any]) -> list[tuple[str, str]]:
    """(ts, id) of the failed `validate` actions of the streak the record ends, within the
    lookback window before it (a backdated record is counted in its own time), oldest first:
    the epic's failures up to and including the record, after its last successful `validate`
    (a success ends a streak; the next failure starts a new one)."""
    moment = parse_ts(record["ts"])
    days = ops.config.drafts.validate_lookback_days
    query = ActionFilter(
        type="validate",
        epic=record["epic"],
        since=format_ts(moment - timedelta(days=days)),
        until=format_ts(moment + timedelta(milliseconds=1)),
    )
    mark = (record["ts"], record["id"])
    found = {record["id"]: record["ts"]}  # the trigger, even when it is older than the window
    last_success = ("", "")
    for action in ops.action_log.iter_actions(query):
        at = (action["ts"], action["id"])
        if action.get("outcome") == "success" and last_success < at < mark:
            last_success = at
        elif action.get("outcome") == "failure" and at <= mark:
            found[action["id"]] = action["ts"]
    return sorted(
        (ts, action_id) for action_id, ts in found.items() if (ts, action_id) > last_success
    )


def streak_start(ops: KnowledgeOps, record: dict[str, Any], streak: list[tuple[str, str]]) -> str:
    """The id of the streak's first failure, wherever the window starts: found by reading the
    epic's validations back from the window's first failure to the success before them (or the
    start of the log), so a window sliding along one streak names it the same."""
    first_ts, first_id = streak[0]
    start = first_id
    query = ActionFilter(type="validate", epic=record["epic"], until=first_ts)
    found = ops.action_log.iter_actions(query)  # newest first
    try:
        for action in found:
            if action.get("outcome") == "success":
                break
            if action.get("outcome") == "failure":
                start = action["id"]
    finally:
        close = getattr(found, "close", None)
        if close is not None:
            close()  # the catalog's connection, now rather than at collection
    return start


def on_epic_complete(ops: KnowledgeOps, record: dict[str, Any]) -> object:
    from .autodraft import draft_from_epic

    epic = record["epic"]
    return draft_from_epic(
        ops.action_log, ops.learnings.store, ops.config, epic, trigger=record, key=f"epic:{epic}"
    )


def on_failed_validate(ops: KnowledgeOps, record: dict[str, Any]) -> object:
    threshold = ops.config.drafts.validate_failures
    streak = failed_validations(ops, record)
    if len(streak) != threshold:
        return None
    from .autodraft import draft_from_epic

    epic = record["epic"]
    key = f"validate:{epic}:{streak_start(ops, record, streak)}"  # every count of one streak agrees
    return draft_from_epic(
        ops.action_log, ops.learnings.store, ops.config, epic, trigger=record, key=key
    )


def on_issue_resolved(ops: KnowledgeOps, record: dict[str, Any]) -> object:
    from .autodraft import draft_from_issue, issue_qualifies

    min_chars = ops.config.drafts.issue_min_chars
    if not issue_qualifies(record, min_chars):
        return None
    issue = str(record.get("issue") or "")
    return draft_from_issue(ops.action_log, ops.learnings.store, issue, trigger=record)


def on_rca(ops: KnowledgeOps, record: dict[str, Any]) -> object:
    return ops.rca_from_action(record)


def subscribers(record: dict[str, Any]) -> list[Callable[[KnowledgeOps, dict[str, Any]], object]]:
    """Which subscribers this record wakes."""
    kind, outcome = record.get("type"), record.get("outcome")
    context = record.get("context") if isinstance(record.get("context"), dict) else {}
    found: list[Callable[[KnowledgeOps, dict[str, Any]], object]] = []
    if kind == "epic_complete" and record.get("epic"):
        found.append(on_epic_complete)
    elif kind == "validate" and outcome == "failure" and record.get("epic"):
        found.append(on_failed_validate)
    elif kind == "issue_resolved":
        found.append(on_issue_resolved)
    if outcome == "failure" and isinstance((context or {}).get("rca"), dict):
        found.append(on_rca)
    return found


def dispatch(ops: KnowledgeOps, record: dict[str, Any]) -> list[object]:
    """Run every subscriber the record wakes; a failure is logged, then raised to the bus."""
    results: list[object] = []
    first_error: Exception | None = None
    for subscriber in subscribers(record):
        try:
            results.append(subscriber(ops, record))
        except Exception as exc:
            first_error = first_error or exc
            _log_failure(ops, record, subscriber.__name__, exc)
    if first_error is not None:
        raise first_error
    return results


def _log_failure(ops: KnowledgeOps, record: dict[str, Any], name: str, exc: Exception) -> None:
    # if even this append fails, the original error still reaches the bus, which warns
    with contextlib.suppress(Exception):
        ops.action_log.log(
            "learning_draft",
            outcome="failure",
            error=f"{name}: {type(exc).__name__}: {exc}",
            context={"trigger": record.get("id"), "subscriber": name},
            epic=record.get("epic"),
            issue=record.get("issue"),
            **after(record),
        )
