"""Where was I? The last session's state rebuilt from the newest shards and git, offline.

Cost does not grow with history: candidate sessions are found by reading only the tail of the
newest day directories' shards, and the chosen session is read backwards from its own shards,
up to `resume.tail_bytes` (plus its start event from the head), so a 2 GB shard costs what a
small one does.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import date, datetime, timedelta
from pathlib import Path

from ..model import INTERNAL_TYPES, decode_line
from ..problems import OnProblem, Problem, ignore
from ..store import SIDE
from .reader import MAX_LINE_BYTES, read_shard, relative, walk_days
from .tail import file_size, line_number, lines_backwards
from .writer import session_start_day

TYPE_CHECKING = False  # typing costs milliseconds on cold paths; mypy still sees it
if TYPE_CHECKING:
    from typing import Any, BinaryIO, NamedTuple
else:
    from ..tuples import NamedTuple

_HEAD_LINES = 100  # a start event is among the first lines of a session's first shard
# how far back a shard is read for a record of real work; past it, the session counts as working
WORK_BYTES = 1 << 18


class Candidate(NamedTuple):
    """What the tail of a session's newest shard says about it."""

    session: str
    day: str
    last_ts: str
    agent: str | None
    project: str | None
    ended_normally: bool
    idle: bool  # nothing done yet: no action but lorebook's own records (prompts, searches)


def _tail_problem(
    handle: BinaryIO, rel: str, offset: int, reason: str, on_problem: OnProblem
) -> None:
    on_problem(Problem(rel, line_number(handle, offset), reason))


def _decoded_backwards(
    handle: BinaryIO, size: int, rel: str, on_problem: OnProblem
) -> Iterator[tuple[int, dict[str, Any], bytes]]:
    """(offset, record, line) newest first; lines that are not records are reported and
    skipped."""
    for offset, raw in lines_backwards(handle, size):
        if raw is None:
            oversize = f"line longer than {MAX_LINE_BYTES} bytes, skipped"
            _tail_problem(handle, rel, offset, oversize, on_problem)
            continue
        record, reason = decode_line(raw)
        if record is None:
            if offset + len(raw) >= size:
                reason = f"torn line at end of file ({reason})"
            _tail_problem(handle, rel, offset, str(reason), on_problem)
            continue
        yield offset, record, raw


def is_work(record: dict[str, Any]) -> bool:
    """A record of real work: an action, but not one of lorebook's own (a prompt, a search)."""
    return record["kind"] == "action" and record.get("type") not in INTERNAL_TYPES


def tail_record(path: Path, rel: str = "", on_problem: OnProblem = ignore) -> dict[str, Any] | None:
    """The last valid record of a shard, reading backwards from its end past any bad lines."""
    return tail_state(path, rel, on_problem)[0]


def tail_state(
    path: Path, rel: str = "", on_problem: OnProblem = ignore
) -> tuple[dict[str, Any] | None, bool]:
    """The last valid record of a shard, and whether the session did real work: a record of
    work in its last `WORK_BYTES`, or no start event in the shard (it began on an earlier day,
    so what it did is not all here). Read backwards, it stops at the first record of work."""
    last: dict[str, Any] | None = None
    started = False
    try:
        with open(path, "rb") as handle:
            size = file_size(handle)
            for offset, record, _ in _decoded_backwards(handle, size, rel or path.name, on_problem):
                last = last or record
                if is_work(record) or size - offset > WORK_BYTES:
                    return last, True
                started = started or _is_start(record)
    except OSError as exc:
        on_problem(Problem(rel or path.name, 0, f"cannot be read: {exc.strerror or exc}"))
    return last, last is not None and not started


def find_candidates(
    actionlog: Path,
    *,
    project: str | tuple[str, ...] | None,
    agent: str | None,
    limit: int,
    base: Path | None = None,
    on_problem: OnProblem = ignore,
    horizon: str | None = None,
) -> list[Candidate]:
    """Up to `limit` sessions matching the filters, most recently active first; those last
    active after `horizon` (dated by a wrong clock) last, not counted until the others are.
    `project` may be several names of one project (its repository's, its folder's)."""
    projects = (project,) if isinstance(project, str) else project
    found: list[Candidate] = []
    ahead: list[Candidate] = []
    seen: set[str] = set()
    for day, path in walk_days(actionlog, newest_first=True):
        todays: list[Candidate] = []
        try:
            names = [e.name for e in os.scandir(path) if e.name.endswith(".jsonl") and e.is_file()]
        except OSError:
            continue
        for name in names:
            session = name[: -len(".jsonl")].removesuffix(SIDE)  # (a side shard: its session)
            if session in seen:
                continue
            seen.add(session)
            shard = path / name
            rel = relative(shard, base or actionlog.parent)
            record, worked = tail_state(shard, rel, on_problem)
            if record is None:
                continue
            if projects is not None and record.get("project") not in projects:
                continue
            if agent is not None and record.get("agent") != agent:
                continue
            is_end = record["kind"] == "session" and record.get("event") == "end"
            todays.append(
                Candidate(
                    session=session,
                    day=day,
                    last_ts=record["ts"],
                    agent=record.get("agent"),
                    project=record.get("project"),
                    ended_normally=is_end and (record.get("reason") or "normal") == "normal",
                    idle=not worked,
                )
            )
        todays.sort(key=lambda c: (c.last_ts, c.session), reverse=True)
        found.extend(todays)
        if horizon is not None:  # future-dated sessions do not use up the lookback
            ahead = ahead + [c for c in found if c.last_ts > horizon]
            found = [c for c in found if c.last_ts <= horizon]
        if len(found) >= limit:
            break
    return (found + ahead)[:limit]


def choose(candidates: list[Candidate], horizon: str) -> Candidate | None:
    """The newest session not ended normally (with something done), else the newest.

    Sessions last active after `horizon` (a wrong clock: see timeutil.SKEW) are passed over
    while a session of the present is among the candidates, whatever their dates say."""
    present = [c for c in candidates if c.last_ts <= horizon]
    return _choose(present) if present else _choose(candidates)


def _choose(candidates: list[Candidate]) -> Candidate | None:
    """Sessions that did nothing yet (a question asked, no tool used) are passed over: the
    previous meaningful session is the one to resume; only when none did anything, the newest."""
    useful = [c for c in candidates if not c.idle] or candidates
    for candidate in useful:
        if not candidate.ended_normally:
            return candidate
    return useful[0] if useful else None


class SessionTail:
    """The newest records of one session, and how much older history was left unread."""

    __slots__ = ("lines", "origin", "records", "skipped_bytes", "whole")

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []
        self.lines: dict[str, bytes] = {}  # id -> the line a record was decoded from
        self.origin: dict[str, str] = {}  # id -> the shard it was read from
        # shard -> (inode, size, mtime, ctime) of each shard whose every line is one of
        # `records` (read whole, no bad line, no id seen twice): what a clean memo may vouch for
        self.whole: dict[str, tuple[int, int, int, int]] = {}
        self.skipped_bytes = 0


def session_records(
    actionlog: Path,
    session: str,
    *,
    base: Path,
    last_day: str | None = None,
    max_days: int = 14,
    tail_bytes: int = 1 << 62,
    on_problem: OnProblem = ignore,
) -> SessionTail:
    """The newest records of one session, read backwards from its own shards only.

    Reading stops once `tail_bytes` of lines were read; the session's start event is then read
    from the head of its first shard. Memory is bounded by `tail_bytes`, not by the session.
    """
    first_day = session_start_day(session)
    if first_day is None:
        if last_day is None:  # an explicit session without a date in its id: from the newest day
            newest = next(walk_days(actionlog, newest_first=True), None)
            last_day = newest[0] if newest else "9999-12-31"
        first_day_bound = _minus_days(last_day, max_days)
    else:
        first_day_bound = first_day
    out = SessionTail()
    seen: set[str] = set()
    used = 0  # bytes of the newer shards already read
    started = False
    shards = _session_shards(actionlog, session, first_day_bound, last_day)
    for shard in shards:
        if used >= tail_bytes:
            out.skipped_bytes += _size(shard)
            continue
        rel = relative(shard, base)
        try:
            handle = open(shard, "rb")  # noqa: SIM115 - closed below
        except OSError as exc:
            on_problem(Problem(rel, 0, f"cannot be read: {exc.strerror or exc}"))
            continue
        name = str(shard)
        bad: list[Problem] = []
        report = _recording(on_problem, bad)

        with handle:
            st = os.fstat(handle.fileno())
            size = file_size(handle)
            read = size
            whole = size == st.st_size
            for offset, record, raw in _decoded_backwards(handle, size, rel, report):
                if record["id"] not in seen:
                    seen.add(record["id"])
                    out.records.append(record)
                    out.lines[record["id"]] = raw
                    out.origin[record["id"]] = name
                else:
                    whole = False
                started = started or _is_start(record)
                if used + size - offset >= tail_bytes:
                    read = size - offset
                    out.skipped_bytes += offset
                    whole = whole and offset == 0
                    break
            used += read
            if whole and not bad:
                out.whole[name] = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        if started and first_day is None:
            break
    if out.skipped_bytes and not started and shards:
        for record in _head_starts(shards[-1], relative(shards[-1], base), on_problem):
            if record["id"] not in seen:
                seen.add(record["id"])
                out.records.append(record)
    out.records.sort(key=lambda r: (r["ts"], r["id"]))
    return out


def _recording(on_problem: OnProblem, into: list[Problem]) -> OnProblem:
    """`on_problem`, also keeping each problem in `into` (a shard with one is not whole)."""

    def report(problem: Problem) -> None:
        into.append(problem)
        on_problem(problem)

    return report


def _session_shards(actionlog: Path, session: str, first: str, last: str | None) -> list[Path]:
    """The session's shards from day `last` back to day `first`, newest first. A short range
    is probed day by day (a stat each) instead of listing the month directories."""
    days: Iterator[str] | None = None
    span = _span(first, last)
    if span is not None and 0 <= span[1] <= 62:
        high, count = span
        days = ((high - timedelta(days=n)).isoformat() for n in range(count + 1))
    if days is None:
        days = (day for day, _ in walk_days(actionlog, newest_first=True, first=first, last=last))
    root, sep, name = str(actionlog), os.sep, f"{session}.jsonl"
    out = []
    for day in days:
        path = f"{root}{sep}{day[:4]}{sep}{day[5:7]}{sep}{day[8:10]}{sep}{name}"
        if os.path.exists(path):
            out.append(Path(path))
    return out


def _span(first: str, last: str | None) -> tuple[date, int] | None:
    """Day `last` and how many days it is after `first` (None when either is not a date)."""
    if last is None:
        return None
    try:
        high = date.fromisoformat(last)
        return high, (high - date.fromisoformat(first)).days
    except ValueError:
        return None


def _is_start(record: dict[str, Any]) -> bool:
    return record["kind"] == "session" and record.get("event") == "start"


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _head_starts(shard: Path, rel: str, on_problem: OnProblem) -> list[dict[str, Any]]:
    """The session's start event from the head of its oldest shard (the first few lines only)."""
    for number, record in read_shard(shard, rel, on_problem):
        if _is_start(record):
            return [record]
        if number >= _HEAD_LINES:
            break
    return []


def _minus_days(day: str, count: int) -> str:
    start = datetime.strptime(day, "%Y-%m-%d") - timedelta(days=count)
    return start.strftime("%Y-%m-%d")
