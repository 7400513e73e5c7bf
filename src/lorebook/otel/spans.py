"""One session's records as plain span data, following the GenAI semantic conventions.

Pure: no I/O and no OpenTelemetry import, so the mapping is unit-tested (and `--dry-run`
counts) without the optional extra. The session is an `invoke_agent {agent}` span; a tool
call an `execute_tool {tool}` span; a subagent an `invoke_agent {type}` span; any other
action a span named by its type. A tracked action (its `in_progress` start and the outcome
whose `parent` is the start, `log.track_pairs`) is one span with the start's id, from the
start to the outcome. An action whose `parent` is another action of the session is its
child; every other action is a child of the session span. A failure sets status ERROR and
carries an `exception` event.

Ids derive from record ids, so a resend is the same trace: the trace id is 16 bytes of
blake2b(repository + session), a span id 8 bytes of blake2b(trace id + record id).

Content (prompts, commands, paths, tool input and output, error text) stays out unless the
mode is "redacted"; then each value is redacted first, then cut to `LIMIT` characters.
"""

from __future__ import annotations

import calendar
import json
from hashlib import blake2b
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    Redact = Callable[[str], str]

OPEN = "in_progress"
LIMIT = 1000  # characters kept of one content attribute, after redaction
ERROR_REASONS = ("error", "crash")  # session end reasons that mark the session span ERROR


class SpanData:
    """One span, as the exporter needs it: ids as ints, times in ns since the epoch."""

    __slots__ = ("attributes", "end", "error", "events", "name", "parent_id", "span_id",
                 "start", "trace_id")  # fmt: skip

    def __init__(
        self,
        name: str,
        trace_id: int,
        span_id: int,
        parent_id: int | None,
        start: int,
        end: int,
        attributes: dict[str, Any],
        error: str | None = None,
        events: tuple[tuple[str, int, dict[str, Any]], ...] = (),
    ) -> None:
        self.name, self.trace_id, self.span_id, self.parent_id = name, trace_id, span_id, parent_id
        self.start, self.end, self.attributes = start, end, attributes
        self.error, self.events = error, events


class Repository:
    """What every trace of one store says about its repository: `key` (its identity, part of
    each trace id), the remote URL (credentials dropped) and the commit exported from."""

    __slots__ = ("commit", "key", "url")

    def __init__(self, key: str, url: str | None = None, commit: str | None = None) -> None:
        self.key, self.url, self.commit = key, url, commit


def trace_id(repository: str, session: str) -> int:
    return int.from_bytes(blake2b(f"{repository}\0{session}".encode(), digest_size=16).digest())


def span_id(trace: int, record_id: str) -> int:
    """8 bytes of blake2b(trace id + record id): a record copied into another repository
    (a fork) is another span, as some receivers key spans by span id alone."""
    return int.from_bytes(blake2b(trace.to_bytes(16, "big") + record_id.encode(),
                                  digest_size=8).digest())  # fmt: skip


def session_span_id(trace: int) -> int:
    return span_id(trace, "session")


_DAYS: dict[str, int] = {}


def ts_ns(ts: str) -> int:
    """A canonical timestamp (`2026-11-22T10:00:00.123Z`) in ns since the epoch, without
    strptime per record (the date's midnight is cached)."""
    day = _DAYS.get(ts[:10])
    if day is None:
        day = calendar.timegm((int(ts[:4]), int(ts[5:7]), int(ts[8:10]), 0, 0, 0, 0, 0, 0))
        _DAYS[ts[:10]] = day
    ms = int(ts[20:23]) if len(ts) > 22 and ts[19] == "." else 0
    seconds = day + int(ts[11:13]) * 3600 + int(ts[14:16]) * 60 + int(ts[17:19])
    return (seconds * 1000 + ms) * 1_000_000


def text(value: Any, redact: Redact) -> str:
    """`value` as content: redacted first, then cut to LIMIT characters."""
    from ..redact.sanitize import clip

    raw = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    return clip(redact(raw), LIMIT)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _parent(record: dict[str, Any]) -> str | None:
    parent = record.get("parent")
    return parent if isinstance(parent, str) and parent else None


def pairs(actions: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """start id -> its outcome, for the tracked actions among one session's `actions`
    (`log.track_pairs`' rule)."""
    from ..log.track_pairs import outcomes

    return outcomes(actions)


def session_spans(
    session: str,
    records: Sequence[dict[str, Any]],
    repository: Repository,
    redact: Redact | None = None,
) -> list[SpanData]:
    """The spans of one session's records (session events and actions, any order); content
    only when `redact` is given (the "redacted" mode), through it."""
    events = [r for r in records if r.get("kind") == "session"]
    actions = sorted((r for r in records if r.get("kind") == "action"), key=lambda r: r["ts"])
    trace = trace_id(repository.key, session)
    root = session_span_id(trace)
    common = {"gen_ai.conversation.id": session, "session.id": session}
    closed = pairs(actions)
    outcome_of = {outcome["id"]: start for start, outcome in closed.items()}
    ids = {r["id"] for r in actions}
    spans = [_session_span(session, events, actions, repository, trace, root, common)]
    for record in actions:
        if record["id"] in outcome_of:
            continue  # its start's span carries it
        outcome = closed.get(record["id"])
        parent = _parent(record)
        parent = outcome_of.get(parent, parent) if parent is not None else None
        parent_id = span_id(trace, parent) if parent is not None and parent in ids else root
        spans.append(_action_span(record, outcome, trace, parent_id, common, redact))
    return spans


def _session_span(
    session: str,
    events: list[dict[str, Any]],
    actions: list[dict[str, Any]],
    repository: Repository,
    trace: int,
    root: int,
    common: dict[str, Any],
) -> SpanData:
    start_event = next((e for e in events if e.get("event") == "start"), None)
    end_event = next((e for e in reversed(events) if e.get("event") == "end"), None)
    times = sorted(r["ts"] for r in (*events, *actions))
    first = start_event or (events[0] if events else actions[0])
    agent = str(first.get("agent") or "agent")
    attributes: dict[str, Any] = {
        **common,
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": agent,
        "lore.project": str(first.get("project") or ""),
        "lore.session.open": end_event is None,
        "lore.actions": len(actions),
    }
    meta = start_event.get("meta") if start_event else None
    if isinstance(meta, dict):
        if isinstance(meta.get("model"), str):
            attributes["gen_ai.request.model"] = meta["model"]
        if isinstance(meta.get("branch"), str):
            attributes["vcs.ref.head.name"] = meta["branch"]
    if repository.url:
        attributes["vcs.repository.url.full"] = repository.url
    if repository.commit:
        attributes["vcs.ref.head.revision"] = repository.commit
    error = None
    if end_event is not None:
        reason = str(end_event.get("reason") or "normal")
        attributes["lore.session.end_reason"] = reason
        if reason in ERROR_REASONS:
            error = f"session ended: {reason}"
    start = ts_ns(start_event["ts"] if start_event else times[0])
    end = max(ts_ns(end_event["ts"] if end_event else times[-1]), start)
    return SpanData(f"invoke_agent {agent}", trace, root, None, start, end, attributes, error)


def _action_span(
    record: dict[str, Any],
    outcome: dict[str, Any] | None,
    trace: int,
    parent_id: int,
    common: dict[str, Any],
    redact: Redact | None,
) -> SpanData:
    last = outcome or record
    action_type = str(record.get("type") or "action")
    context = _dict(record.get("context"))
    done = _dict(last.get("context"))
    attributes: dict[str, Any] = {
        **common,
        "gen_ai.agent.name": str(record.get("agent") or "agent"),
        "lore.action.id": record["id"],
        "lore.action.type": action_type,
        "lore.outcome": str(last.get("outcome") or ""),
    }
    for key in ("epic", "issue"):
        if isinstance(record.get(key), str):
            attributes[f"lore.{key}"] = record[key]
    if action_type == "tool_call":
        tool = str(context.get("tool") or "tool")
        name = f"execute_tool {tool}"
        attributes["gen_ai.operation.name"] = "execute_tool"
        attributes["gen_ai.tool.name"] = tool
        if isinstance(context.get("tool_use_id"), str):
            attributes["gen_ai.tool.call.id"] = context["tool_use_id"]
        if redact is not None:
            if "input" in context:
                attributes["gen_ai.tool.call.arguments"] = text(context["input"], redact)
            if "response" in context:
                attributes["gen_ai.tool.call.result"] = text(context["response"], redact)
    elif action_type == "spawn":
        agent = str(context.get("agent_type") or done.get("agent_type") or "subagent")
        name = f"invoke_agent {agent}"
        attributes["gen_ai.operation.name"] = "invoke_agent"
        attributes["gen_ai.agent.name"] = agent
        if isinstance(context.get("agent_id"), str):
            attributes["gen_ai.agent.id"] = context["agent_id"]
    else:
        name = action_type
    if redact is not None and action_type != "tool_call" and context:
        attributes["lore.context"] = text(context, redact)
    end = ts_ns(last["ts"])
    start = ts_ns(record["ts"]) if outcome is not None else end
    duration = last.get("duration_s")
    if outcome is None and isinstance(duration, int | float) and not isinstance(duration, bool):
        start = end - int(max(float(duration), 0.0) * 1e9)
    error: str | None = None
    events: tuple[tuple[str, int, dict[str, Any]], ...] = ()
    if last.get("outcome") == "failure":
        kind = f"{action_type}.failure"
        message = f"{name} failed"
        if redact is not None and last.get("error"):
            message = text(last["error"], redact)
        attributes["error.type"] = kind
        error = message
        events = (("exception", end, {"exception.type": kind, "exception.message": message}),)
    return SpanData(name, trace, span_id(trace, record["id"]), parent_id, start, end, attributes,
                    error, events)  # fmt: skip
