"""What `lore log --session S` needs to know of S, found in a few stat calls and one read.

Every record of a session carries the session's identity, so the first line of its newest shard
is enough: `lore log --session S` then inherits it instead of falling back to defaults. Whether
S has ended is in the tail of that shard: its last session event (start, end) is in the last
block, unless the session logged a great deal after it (then nothing is said).

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import os

from ..model import decode_line
from ..timeutil import datetime, timedelta
from .writer import session_start_day, shard_path

TYPE_CHECKING = False  # the append path imports neither typing nor pathlib
if TYPE_CHECKING:
    from pathlib import Path

_HEAD_LINES = 5


def _first_record_identity(path: str) -> tuple[str | None, str | None] | None:
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
    actionlog: Path | str, session: str, now: datetime, max_days: int = 14
) -> tuple[str | None, str | None] | None:
    """Identity from the session's newest shard at or before `now`, or None if none is found."""
    oldest = (now - timedelta(days=max_days)).strftime("%Y-%m-%d")
    oldest = max(oldest, session_start_day(session) or oldest)
    day = now
    while (name := day.strftime("%Y-%m-%d")) >= oldest:
        path = shard_path(actionlog, name, session)
        if os.path.isfile(path):
            found = _first_record_identity(path)
            if found is not None:
                return found
        day -= timedelta(days=1)
    return None


TAIL_BYTES = 1 << 16  # the end event is looked for in this much of the newest shard's tail
_SESSION_KEY = b'"kind":"session"'
TURN_END = "stop"  # a Claude Code turn ended: the session goes on at the next prompt


def _last_session_event(path: str) -> tuple[dict[str, object] | None, bool]:
    """(the last session event in the shard's tail, whether the whole file was looked at)."""
    try:
        with open(path, "rb") as handle:
            size = handle.seek(0, 2)
            start = max(0, size - TAIL_BYTES)
            handle.seek(start)
            block = handle.read(size - start)
    except OSError:
        return None, False
    lines = block.split(b"\n")
    if start > 0:
        lines = lines[1:]  # the first piece may be the end of a line that began earlier
    for raw in reversed(lines):
        if _SESSION_KEY in raw:  # only such lines are decoded
            record, _reason = decode_line(raw)
            kind = record.get("kind") if record is not None else None
            if record is not None and kind == "session" and record.get("event") in ("start", "end"):
                return record, True
    return None, start == 0


def ended_event(
    actionlog: Path | str, session: str, now: datetime, max_days: int = 14
) -> dict[str, object] | None:
    """The end event of `session` when it has ended (and was not started again since), read
    from the tail of its newest shards; None when it is open or nothing can be told. An end
    with reason `stop` (a Claude Code turn) does not end the session."""
    oldest = (now - timedelta(days=max_days)).strftime("%Y-%m-%d")
    oldest = max(oldest, session_start_day(session) or oldest)
    day = now
    while (name := day.strftime("%Y-%m-%d")) >= oldest:
        path = shard_path(actionlog, name, session)
        if os.path.isfile(path):
            event, whole = _last_session_event(path)
            if event is not None:
                ended = event.get("event") == "end" and event.get("reason") != TURN_END
                return event if ended else None
            if not whole:
                return None  # a long run of actions: the last event is out of reach
        day -= timedelta(days=1)
    return None
