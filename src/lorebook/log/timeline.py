"""A session's actions as a tree of rows, for a trace-style view: where the time and the
failures went.

A flat list of records hides that a tracked step is one thing (its `in_progress` start and its
outcome), that a subagent ran the Task call that launched it, and how long each took. Here a
start and its outcome (`track_pairs`) become one row; a record whose `parent` names another
row's record sits under that row; a Task/Agent tool call sits under the subagent it ran (the
`spawn` of the agent id its response names, else the `spawn` pair of the same agent type that
stopped at or before the call was written); a tool call made inside a subagent (its
`context.agent_id`, as Claude Code reports it) sits under that subagent's `spawn`. Each row
has its depth, its start offset and duration in seconds, its outcome and one line saying what
it was (the tool and its command or file, as capture stored it: redacted already). Pure: no
I/O, stdlib only.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from ..redact.sanitize import clip
from ..timeutil import format_ts
from .tool_activity import action_target
from .track_pairs import OPEN, closes

TYPE_CHECKING = False  # typing costs milliseconds on cold paths; mypy still sees it
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

WHAT_CHARS = 200  # the one-line "what" of a row, after the stored (redacted) text
SUBAGENT_TOOLS = ("Task", "Agent")


@dataclass(slots=True)
class TimelineRow:
    """One row: a record, or a tracked start with its outcome (`records`, oldest first)."""

    id: str  # the id of its first record (what children's `parent` names)
    type: str
    what: str
    outcome: str | None
    records: list[dict[str, Any]]
    depth: int = 0
    parent: str | None = None  # the id of the row it sits under
    start: float = 0.0  # seconds after the session's first moment
    duration: float | None = None
    last: int = 0  # the index (in `Timeline.rows`) of its last descendant; itself when none
    children: list[TimelineRow] = field(default_factory=list, repr=False)

    @property
    def failed(self) -> bool:
        return self.outcome in ("failure", "blocked")

    @property
    def end(self) -> float:
        return self.start + (self.duration or 0.0)


@dataclass(slots=True)
class Timeline:
    """The rows in tree order (each parent before its children, siblings oldest first), the
    session's span in seconds and its first moment (a timestamp)."""

    rows: list[TimelineRow]
    span: float
    began: str | None


def _seconds(ts: Any) -> float | None:
    if not isinstance(ts, str):
        return None
    try:
        moment = datetime.fromisoformat(ts)
    except ValueError:
        return None
    if moment.tzinfo is None:  # naive times are UTC, as the log writes them
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def _number(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return float(value)
    return None


def _context(record: dict[str, Any]) -> dict[str, Any]:
    context = record.get("context")
    return context if isinstance(context, dict) else {}


def what_of(record: dict[str, Any]) -> str:
    """One line for `record`: a tool call's tool and its command, file, pattern... (as the
    brief names it, `action_target`; a Task call its description); another action's type
    and what it was about (its description, prompt, subagent type, service or epic)."""
    kind, target = action_target(record)
    context = _context(record)
    if kind in SUBAGENT_TOOLS and isinstance(context.get("description"), str):
        target = context["description"] or target  # its subagent's row names the type
    if target is None or record.get("type") != "tool_call":
        for key in ("description", "prompt", "agent_type", "summary"):
            value = context.get(key)
            if isinstance(value, str) and value.strip():
                target = value
                break
    text = f"{kind} {target}" if target else kind
    return clip(" ".join(text.split()), WHAT_CHARS)


def _tool(record: dict[str, Any]) -> str | None:
    if record.get("type") != "tool_call":
        return None
    tool = _context(record).get("tool")
    return tool if isinstance(tool, str) else None


def _agent_id(record: dict[str, Any]) -> str | None:
    """The subagent a record belongs to: a spawn's own agent id, or the id of the subagent
    that made a tool call (absent for the main agent's calls)."""
    value = _context(record).get("agent_id")
    return value if isinstance(value, str) and value else None


def _launched(record: dict[str, Any]) -> str | None:
    """The agent id a Task/Agent call's response names (Claude Code's `agentId`)."""
    response = _context(record).get("response")
    value = response.get("agentId") if isinstance(response, dict) else None
    return value if isinstance(value, str) and value else None


def _move(row: TimelineRow, owner: TimelineRow, top: list[TimelineRow]) -> None:
    """`row`, a top-level row, put under `owner` (a row written before its subagent's start)."""
    for n in range(len(top) - 1, -1, -1):  # by identity, from the newest: it is recent
        if top[n] is row:
            del top[n]
            break
    row.parent = owner.id
    owner.children.append(row)


def build_timeline(records: Iterable[dict[str, Any]]) -> Timeline:
    """The tree of one session's action records, given oldest first (see the module)."""
    rows: list[TimelineRow] = []
    top: list[TimelineRow] = []
    by_record: dict[str, TimelineRow] = {}  # every record's id -> its row
    moments: dict[int, tuple[float | None, float | None]] = {}  # id(row) -> (begin, end)
    spawned: dict[str, list[TimelineRow]] = {}  # agent type -> stopped subagents without a call
    agents: dict[str, TimelineRow] = {}  # agent id -> its spawn's row
    early: dict[str, list[TimelineRow]] = {}  # agent id -> its rows written before its spawn
    points: list[TimelineRow] = []  # records with a time and no duration
    for record in records:
        rid = record.get("id")
        parent_id = record.get("parent")
        owner = by_record.get(parent_id) if isinstance(parent_id, str) else None
        at = _seconds(record.get("ts"))
        took = _number(record.get("duration_s"))
        if (
            owner is not None
            and owner.id == parent_id
            and len(owner.records) == 1
            and closes(owner.records[0], record)
        ):  # a tracked action's outcome: the same row, closed
            owner.records.append(record)
            owner.outcome = record.get("outcome")
            begin = moments[id(owner)][0]
            end = at if took is None or begin is None else begin + took
            moments[id(owner)] = (begin, end)
            if isinstance(rid, str):
                by_record[rid] = owner
            agent = _context(record).get("agent_type")
            ran = any(_tool(child.records[0]) in SUBAGENT_TOOLS for child in owner.children)
            if owner.type == "spawn" and isinstance(agent, str) and agent and not ran:
                spawned.setdefault(agent, []).append(owner)
            continue
        row = TimelineRow(
            id=rid if isinstance(rid, str) else f"#{len(rows)}",
            type=str(record.get("type") or "-"),
            what=what_of(record),
            outcome=record.get("outcome") if isinstance(record.get("outcome"), str) else None,
            records=[record],
        )
        if record.get("outcome") == OPEN or took is None or at is None:
            moments[id(row)] = (at, None)  # an open start, or a moment of unknown length
            if record.get("outcome") != OPEN:
                points.append(row)
        else:  # written when it ended, `took` after it began
            moments[id(row)] = (at - took, at)
        tool, launched = _tool(record), None
        if owner is None and tool in SUBAGENT_TOOLS:
            launched = _launched(record)
            owner = agents.get(launched) if launched else None
            waiting = spawned.get(str(_context(record).get("subagent"))) or []
            if owner is not None:
                waiting[:] = [w for w in waiting if w is not owner]
            elif waiting and launched is None:
                owner = waiting.pop()
            elif launched is not None:
                early.setdefault(launched, []).append(row)  # launched first: its spawn adopts it
        if owner is None and tool is not None and launched is None:
            inside = _agent_id(record)  # a call a subagent made
            owner = agents.get(inside) if inside else None
            if owner is None and inside:  # written before its spawn (hooks write detached)
                early.setdefault(inside, []).append(row)
        if record.get("type") == "spawn":
            agent_id = _agent_id(record)
            if agent_id is not None and agent_id not in agents:
                agents[agent_id] = row
                for adopted in early.pop(agent_id, ()):
                    _move(adopted, row, top)
        if owner is not None:
            row.parent = owner.id
            owner.children.append(row)
        else:
            top.append(row)
        if isinstance(rid, str):
            by_record[rid] = row
        rows.append(row)
    return _laid_out(top, moments, points)


def _laid_out(
    top: list[TimelineRow],
    moments: dict[int, tuple[float | None, float | None]],
    points: list[TimelineRow],
) -> Timeline:
    """The rows in tree order with depth, `last`, start offsets and durations (a row with no
    end of its own ends with its last child; a moment of unknown length has none)."""
    ends = {id(row): moments[id(row)][0] for row in points}  # where a point ends its parent
    ordered: list[TimelineRow] = []
    stack: list[tuple[TimelineRow, int]] = [(row, 0) for row in reversed(top)]
    while stack:  # depth first, without recursion: a chain of parents can be long
        row, depth = stack.pop()
        row.depth = depth
        ordered.append(row)
        stack.extend((child, depth + 1) for child in reversed(row.children))
    index = {id(row): n for n, row in enumerate(ordered)}
    for n in range(len(ordered) - 1, -1, -1):  # children before their parent
        row = ordered[n]
        begin, end = moments[id(row)]
        row.last = index[id(row.children[-1])] if row.children else n
        if row.children:
            row.last = ordered[row.last].last
            found = [moments[id(c)][1] or ends.get(id(c)) for c in row.children]
            latest = max((e for e in found if e is not None), default=None)
            if latest is not None and (end is None or (row.outcome == OPEN and latest > end)):
                end = latest
            moments[id(row)] = (begin, end)
    starts = [b for b, _ in moments.values() if b is not None]
    first = min(starts) if starts else 0.0
    last = first
    for row in ordered:
        begin, end = moments[id(row)]
        row.start = (begin - first) if begin is not None else 0.0
        row.duration = max(end - begin, 0.0) if begin is not None and end is not None else None
        last = max(last, first + row.end, ends.get(id(row)) or first)
    began = format_ts(datetime.fromtimestamp(first, UTC)) if starts else None
    return Timeline(ordered, last - first, began)
