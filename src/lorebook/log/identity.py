"""The (agent, project) an explicit session was started with, found in a few stat calls.

Every record of a session carries the session's identity, so the first line of its newest shard
is enough: `lore log --session S` then inherits it instead of falling back to defaults.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from ..model import decode_line
from .writer import session_start_day, shard_path

_HEAD_LINES = 5


def _first_record_identity(path: Path) -> tuple[str | None, str | None] | None:
    try:
        with open(path, "rb") as handle:
            for _ in range(_HEAD_LINES):
                raw = handle.readline(1 << 16)
                if not raw:
                    break
                record, _reason = decode_line(raw)
                if record is not None:
                    return record.get("agent"), record.get("project")
    except OSError:
        return None
    return None


def session_identity(
    actionlog: Path, session: str, now: datetime, max_days: int = 14
) -> tuple[str | None, str | None] | None:
    """Identity from the session's newest shard at or before `now`, or None if none is found."""
    oldest = (now - timedelta(days=max_days)).strftime("%Y-%m-%d")
    oldest = max(oldest, session_start_day(session) or oldest)
    day = now
    while (name := day.strftime("%Y-%m-%d")) >= oldest:
        path = shard_path(actionlog, name, session)
        if path.is_file():
            found = _first_record_identity(path)
            if found is not None:
                return found
        day -= timedelta(days=1)
    return None
