"""Where was I? The last session's state rebuilt from the newest shards and git, offline.

Cost does not grow with history: candidate sessions are found by reading only the tail of the
newest day directories' shards, and the chosen session is read from its own shards only.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from ..model import decode_line
from .reader import OnProblem, _ignore, read_shard, relative, walk_days
from .writer import session_start_day

_TAIL_BYTES = 1 << 16


@dataclass(frozen=True)
class Candidate:
    """What the tail of a session's newest shard says about it."""

    session: str
    day: str
    last_ts: str
    agent: str | None
    project: str | None
    ended_normally: bool
    idle: bool  # the last record is a start event: nothing to resume yet


def tail_record(path: Path) -> dict[str, Any] | None:
    """The last valid record of a shard, reading only its final bytes."""
    try:
        with open(path, "rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            handle.seek(max(0, size - _TAIL_BYTES))
            chunk = handle.read()
    except OSError:
        return None
    lines = chunk.split(b"\n")
    if size > _TAIL_BYTES:
        lines = lines[1:]  # the first piece may be the middle of a line
    for raw in reversed(lines):
        if raw.strip():
            record, _ = decode_line(raw)
            if record is not None:
                return record
    return None


def find_candidates(
    actionlog: Path,
    *,
    project: str | None,
    agent: str | None,
    limit: int,
) -> list[Candidate]:
    """Up to `limit` sessions matching the filters, most recently active first."""
    found: list[Candidate] = []
    seen: set[str] = set()
    for day, path in walk_days(actionlog, newest_first=True):
        todays: list[Candidate] = []
        try:
            names = [e.name for e in os.scandir(path) if e.name.endswith(".jsonl") and e.is_file()]
        except OSError:
            continue
        for name in names:
            session = name[: -len(".jsonl")]
            if session in seen:
                continue
            seen.add(session)
            record = tail_record(path / name)
            if record is None:
                continue
            if project is not None and record.get("project") != project:
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
                    idle=record["kind"] == "session" and record.get("event") == "start",
                )
            )
        todays.sort(key=lambda c: (c.last_ts, c.session), reverse=True)
        found.extend(todays)
        if len(found) >= limit:
            break
    return found[:limit]


def choose(candidates: list[Candidate]) -> Candidate | None:
    """The newest session not ended normally (with something done), else the newest."""
    useful = [c for c in candidates if not c.idle] or candidates
    for candidate in useful:
        if not candidate.ended_normally:
            return candidate
    return useful[0] if useful else None


def session_records(
    actionlog: Path,
    session: str,
    *,
    base: Path,
    last_day: str | None = None,
    max_days: int = 14,
    on_problem: OnProblem = _ignore,
) -> list[dict[str, Any]]:
    """All records of one session, read from its own shards only (newest day backwards)."""
    first_day = session_start_day(session)
    if first_day is None:
        if last_day is None:  # an explicit session without a date in its id: from the newest day
            newest = next(walk_days(actionlog, newest_first=True), None)
            last_day = newest[0] if newest else "9999-12-31"
        first_day_bound = _minus_days(last_day, max_days)
    else:
        first_day_bound = first_day
    records: list[dict[str, Any]] = []
    days = walk_days(actionlog, newest_first=True, first=first_day_bound, last=last_day)
    for _, path in days:
        shard = path / f"{session}.jsonl"
        if not shard.exists():
            continue
        chunk = [rec for _, rec in read_shard(shard, relative(shard, base), on_problem)]
        records.extend(chunk)
        if first_day is None and any(
            r["kind"] == "session" and r.get("event") == "start" for r in chunk
        ):
            break
    records.sort(key=lambda r: (r["ts"], r["id"]))
    return records


def _minus_days(day: str, count: int) -> str:
    start = datetime.strptime(day, "%Y-%m-%d") - timedelta(days=count)
    return start.strftime("%Y-%m-%d")
