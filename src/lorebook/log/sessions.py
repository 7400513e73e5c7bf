"""Session summaries derived from the log: nothing about a session is stored but its events.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from datetime import datetime, timedelta
from pathlib import Path

from ..ids import resolve_prefix
from ..model import ULID_RE
from ..timeutil import format_ts, horizon
from .identity import TURN_END

TYPE_CHECKING = False  # typing costs milliseconds on cold paths; mypy still sees it
if TYPE_CHECKING:
    from typing import Any, Protocol

    from ..contracts.records import SessionRow, SessionStatus

    class Redacts(Protocol):
        def sanitize(self, value: Any, path: str = "") -> tuple[Any, int]: ...


STATUSES = ("active", "ended", "disconnected")


_FIELDS = ("id", "agent", "project", "session_type", "started", "last_activity", "ended",
           "end_reason", "status", "action_count")  # fmt: skip


class SessionInfo:
    """What `lore sessions` shows for one session (a plain class: `dataclasses` costs a cold
    `lore resume` ~10 ms of imports)."""

    __slots__ = (*_FIELDS, "opened")  # opened: a start event was folded (not shown)

    def __init__(
        self,
        id: str,
        agent: str | None = None,
        project: str | None = None,
        session_type: str | None = None,
        started: str | None = None,
        last_activity: str | None = None,
        ended: str | None = None,
        end_reason: str | None = None,
        status: SessionStatus = "active",
        action_count: int = 0,
    ) -> None:
        self.id = id
        self.agent = agent
        self.project = project
        self.session_type = session_type
        self.started = started
        self.last_activity = last_activity
        self.ended = ended
        self.end_reason = end_reason
        self.status = status
        self.action_count = action_count
        self.opened = False

    def to_dict(self) -> SessionRow:
        """One row of `lore sessions --json`."""
        return {
            "id": self.id,
            "agent": self.agent,
            "project": self.project,
            "session_type": self.session_type,
            "started": self.started,
            "last_activity": self.last_activity,
            "ended": self.ended,
            "end_reason": self.end_reason,
            "status": self.status,
            "action_count": self.action_count,
        }

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SessionInfo) and self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]  # mutable, as the dataclass was

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in _FIELDS)
        return f"SessionInfo({fields})"


def session_status(
    ended: str | None, last_activity: str | None, now: datetime, idle: float
) -> SessionStatus:
    """`ended` with an end event (see `observe`); `disconnected` when silent longer than
    `idle` minutes."""
    if ended:
        return "ended"
    if last_activity and last_activity < format_ts(now - timedelta(minutes=idle)):
        return "disconnected"
    return "active"


def observe(info: SessionInfo, record: dict[str, Any]) -> None:
    """Fold one record (in time order) into a session summary.

    A session has ended when its latest end comes after its latest start: `lore session
    start --id S` after an end opens S again. Only a start again does: a session's first
    start, folded after its end, is dated after it by a clock that went back, and the session
    stays ended. An end with reason `stop` is a Claude Code turn ending (the session goes on
    at the next prompt), not an end of the session. An action marked `closes` (the outcome
    of an `in_progress` start of its type in the same session, named by `parent`) is not
    counted again: a tracked action counts once."""
    ts = record["ts"]
    info.agent = info.agent or record.get("agent")
    info.project = info.project or record.get("project")
    if info.started is None or ts < info.started:
        info.started = ts
    if info.last_activity is None or ts > info.last_activity:
        info.last_activity = ts
    if record["kind"] == "action":
        if not record.get("closes"):  # a tracked action's outcome: its start was counted
            info.action_count += 1
        return
    event = record.get("event")
    if event == "start":
        info.started = ts
        if info.opened:
            info.ended = info.end_reason = None  # started again after an end: open
        info.opened = True
        info.session_type = record.get("session_type") or info.session_type
        info.agent = record.get("agent") or info.agent
        info.project = record.get("project") or info.project
    elif event == "end" and record.get("reason") != TURN_END:
        info.ended = ts
        info.end_reason = record.get("reason") or "normal"


def latest_first(infos: list[SessionInfo], now: datetime) -> list[SessionInfo]:
    """`infos` (most recently active first) with the sessions last active more than
    timeutil.SKEW after `now` (a wrong clock) moved last: never taken for the latest."""
    latest = horizon(now)
    return sorted(infos, key=lambda s: (s.last_activity or "") > latest)  # (stable)


def summarize(records: Iterable[dict[str, Any]], now: datetime, idle: float) -> list[SessionInfo]:
    """Every session seen in `records`, most recently active first (see `latest_first`)."""
    sessions: dict[str, SessionInfo] = {}
    starts: dict[str, tuple[str, str, str]] = {}  # in_progress id -> (session, type, ts)
    for record in records:
        sid = record["session"]
        info = sessions.get(sid)
        if info is None:
            info = sessions[sid] = SessionInfo(id=sid)
        if record["kind"] == "action":
            if record.get("outcome") == "in_progress":
                starts[record["id"]] = (sid, record["type"], record["ts"])
            else:
                start = starts.get(record.get("parent") or "")
                if start is not None and start[:2] == (sid, record["type"]):
                    record = {**record, "closes": start[2] <= record["ts"]}
        observe(info, record)
    for info in sessions.values():
        info.status = session_status(info.ended, info.last_activity, now, idle)
    infos = sorted(sessions.values(), key=lambda s: (s.last_activity or "", s.id), reverse=True)
    return latest_first(infos, now)


def redact_summaries(sanitizer: Redacts, infos: list[SessionInfo]) -> list[SessionInfo]:
    """`infos` summarized from raw records, their free-text fields redacted as `writer.redacted`
    would have redacted them in the records (under the same keys): the same summaries for the
    price of four fields a session instead of every field of every record. A field too long is
    always cut (the records' redaction cut it only when another field held a secret)."""
    for info in infos:
        fields = {"agent": info.agent, "project": info.project,
                  "session_type": info.session_type, "reason": info.end_reason}  # fmt: skip
        clean = sanitizer.sanitize(fields)[0]
        info.agent, info.project = clean["agent"], clean["project"]
        info.session_type, info.end_reason = clean["session_type"], clean["reason"]
    return infos


def session_names(actionlog: Path) -> Iterator[str]:
    """Every session id that has a shard, live or archived (names only: nothing is read)."""
    for year in _dirs(actionlog):
        if year.name == "archive":
            for y in _dirs(year):
                for m in _dirs(y):
                    for name in _files(m):
                        if name.endswith(".jsonl.gz") and name[2:3] == "-":
                            yield name[3:-9]
            continue
        for month in _dirs(year):
            for day in _dirs(month):
                for name in _files(day):
                    if name.endswith(".jsonl"):
                        yield name[:-6]


def _dirs(path: Path) -> list[Path]:
    try:
        return [Path(e.path) for e in os.scandir(path) if e.is_dir(follow_symlinks=False)]
    except OSError:
        return []


def _files(path: Path) -> list[str]:
    try:
        return [e.name for e in os.scandir(path) if e.is_file(follow_symlinks=False)]
    except OSError:
        return []


def resolve_session(actionlog: Path, given: str, now: datetime) -> str:
    """The session `given` names: itself when it has a shard today or yesterday (no scan) or
    is a whole ULID, else the one session id it is a prefix of, as git takes a hash prefix
    (a UsageError lists the candidates when several are); `given` when none is."""
    if ULID_RE.match(given):
        return given
    for day in (now, now - timedelta(days=1)):
        if (actionlog / day.strftime("%Y/%m/%d") / f"{given}.jsonl").is_file():
            return given
    return resolve_prefix(given, session_names(actionlog), "session") or given
