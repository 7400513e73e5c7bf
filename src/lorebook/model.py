"""The action-log vocabulary (schema v1) and the checks every reader applies to a line.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import json
import re

TYPE_CHECKING = False  # typing costs milliseconds on the append path; mypy still sees it
if TYPE_CHECKING:
    from typing import Any

SCHEMA_VERSION = 1
OUTCOMES = ("success", "failure", "blocked", "in_progress")
SESSION_EVENTS = ("start", "end", "heartbeat")
SESSION_TYPES = ("cli", "browser", "mcp", "hook")
END_REASONS = ("normal", "network_disconnect", "timeout", "error", "user_exit", "crash")

CATEGORY_BY_TYPE = {
    "commit": "git",
    "push": "git",
    "pr": "git",
    "deploy": "deployment",
    "plan": "planning",
    "spawn": "execution",
    "tool_call": "execution",
    "validate": "execution",
    "search": "learning",
    "apply_learning": "learning",
    "learning_draft": "learning",
    "learning_promoted": "learning",
    "occurrence": "learning",
    "epic_complete": "planning",
    "issue_resolved": "planning",
}

# What lorebook writes about its own use (drafting, reviews, applications, occurrences, searches
# and preflights), and the user's prompts the hook records for the brief: context, not the
# agents' work. Activity figures (reports, success rates, drafting, expertise) leave these out
# unless asked.
INTERNAL_TYPES = (
    "apply_learning",
    "learning_draft",
    "learning_promoted",
    "learning_rejected",
    "occurrence",
    "prompt",
    "search",
)

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$")
TYPE_RE = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
ULID_RE = re.compile(r"^[0-9A-HJKMNP-TV-Z]{26}$")
TS_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")
SESSION_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def infer_category(action_type: str) -> str:
    """The seed's category for a type; unknown types fall in `other`."""
    return CATEGORY_BY_TYPE.get(action_type, "other")


def _str_or_null(record: dict[str, Any], key: str) -> str | None:
    value = record.get(key)
    if value is not None and not isinstance(value, str):
        return f"'{key}' must be a string or null"
    return None


def _shown(value: str) -> str:
    """A bad value for a message: whole when short, else only its length - never a prefix,
    which could be half a secret that redaction no longer recognises."""
    return repr(value) if len(value) <= 40 else f"({len(value)} characters)"


def validate_record(record: Any) -> str | None:
    """Why a decoded line is not a v1 record, or None when it is one."""
    if not isinstance(record, dict):
        return "not a JSON object"
    if record.get("v") != SCHEMA_VERSION:
        return f"unsupported schema version {record.get('v')!r}"
    for key in ("id", "ts", "session", "kind"):
        if not isinstance(record.get(key), str):
            return f"missing or non-string '{key}'"
    if not ULID_RE.match(record["id"]):
        return f"'id' is not a ULID: {_shown(record['id'])}"
    if not TS_RE.match(record["ts"]):
        shown = _shown(record["ts"])
        return f"'ts' is not a UTC timestamp like 2026-11-22T10:00:00.000Z: {shown}"
    if not SESSION_ID_RE.match(record["session"]):
        return "'session' has characters outside [A-Za-z0-9._-]"
    for key in ("agent", "project"):
        problem = _str_or_null(record, key)
        if problem:
            return problem
    if not isinstance(record.get("meta", {}), dict):
        return "'meta' must be an object"
    kind = record["kind"]
    if kind == "session":
        if record.get("event") not in SESSION_EVENTS:
            return f"session 'event' must be one of {', '.join(SESSION_EVENTS)}"
        return _str_or_null(record, "reason")
    if kind != "action":
        return f"unknown kind {kind!r}"
    action_type = record.get("type")
    if not isinstance(action_type, str) or not TYPE_RE.match(action_type):
        return "'type' must be a lowercase word"
    if record.get("outcome") not in OUTCOMES:
        return f"'outcome' must be one of {', '.join(OUTCOMES)}"
    for key in ("category", "error", "parent", "epic", "issue"):
        problem = _str_or_null(record, key)
        if problem:
            return problem
    duration = record.get("duration_s")
    if duration is not None and (
        isinstance(duration, bool) or not isinstance(duration, int | float) or duration < 0
    ):
        return "'duration_s' must be a non-negative number or null"
    if not isinstance(record.get("context", {}), dict):
        return "'context' must be an object"
    return None


def decode_line(raw: bytes) -> tuple[dict[str, Any] | None, str | None]:
    """A record from one raw line, or the reason the line is not one."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"invalid UTF-8 at byte {exc.start + 1}"
    try:
        record = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, f"invalid JSON: {exc.msg} at column {exc.colno}"
    reason = validate_record(record)
    if reason:
        return None, f"not a v1 record: {reason}"
    return record, None
