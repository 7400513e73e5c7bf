"""Session summaries derived from the log: nothing about a session is stored but its events."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from typing import Any

from ..timeutil import format_ts

STATUSES = ("active", "ended", "disconnected")


@dataclass
class SessionInfo:
    """What `lore sessions` shows for one session."""

    id: str
    agent: str | None = None
    project: str | None = None
    session_type: str | None = None
    started: str | None = None
    last_activity: str | None = None
    ended: str | None = None
    end_reason: str | None = None
    status: str = "active"
    action_count: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def session_status(ended: str | None, last_activity: str | None, now: datetime, idle: float) -> str:
    """`ended` with an end event; `disconnected` when silent longer than `idle` minutes."""
    if ended:
        return "ended"
    if last_activity and last_activity < format_ts(now - timedelta(minutes=idle)):
        return "disconnected"
    return "active"


def observe(info: SessionInfo, record: dict[str, Any]) -> None:
    """Fold one record (in time order) into a session summary."""
    ts = record["ts"]
    info.agent = info.agent or record.get("agent")
    info.project = info.project or record.get("project")
    if info.started is None or ts < info.started:
        info.started = ts
    if info.last_activity is None or ts > info.last_activity:
        info.last_activity = ts
    if record["kind"] == "action":
        info.action_count += 1
        return
    event = record.get("event")
    if event == "start":
        info.started = ts
        info.session_type = record.get("session_type") or info.session_type
        info.agent = record.get("agent") or info.agent
        info.project = record.get("project") or info.project
    elif event == "end":
        info.ended = ts
        info.end_reason = record.get("reason") or "normal"


def summarize(records: Iterable[dict[str, Any]], now: datetime, idle: float) -> list[SessionInfo]:
    """Every session seen in `records`, most recently active first."""
    sessions: dict[str, SessionInfo] = {}
    for record in records:
        sid = record["session"]
        info = sessions.get(sid)
        if info is None:
            info = sessions[sid] = SessionInfo(id=sid)
        observe(info, record)
    for info in sessions.values():
        info.status = session_status(info.ended, info.last_activity, now, idle)
    return sorted(sessions.values(), key=lambda s: (s.last_activity or "", s.id), reverse=True)
