"""`lore mirror postgres` folds the sessions a batch read in full from its own records, without
syncing the catalog, and stores what `lore sessions` folds: tracked pairs counted once, turn
ends that are no end, a start after an end, a line repeated by a union merge, free text
redacted. A session spanning an old and a new shard, or with a record in another session's
shard, is folded by the catalog. A secret planted by hand in a new shard never reaches
PostgreSQL. Against the real PostgreSQL of tests/pg_server.py."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from lorebook import Lorebook
from lorebook.ids import new_ulid
from lorebook.log.writer import encode
from pg_server import Server, pg_server
from test_mirror_postgres import lore_json, make_repo, query

__all__ = ["pg_server"]  # the session fixture, used by name

psycopg = pytest.importorskip("psycopg")
TOKEN = "ghp_" + "Zq8Lr2Vt6Xw0Yb4Nc7Md1Pf5Hs9Jk3Ga8Ue"  # a GitHub token's shape
DAY = datetime(2026, 11, 20, 9, tzinfo=UTC)


class Shards:
    """Hand-written shards: records with explicit times, lines as the writer encodes them."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.minute = 0

    def at(self, day: int) -> datetime:
        self.minute += 1
        return DAY + timedelta(days=day, minutes=self.minute)

    def record(self, day: int, session: str, kind: str, **fields: Any) -> dict[str, Any]:
        moment = self.at(day)
        record = {"v": 1, "kind": kind, "id": new_ulid(int(moment.timestamp() * 1000)),
                  "ts": moment.strftime("%Y-%m-%dT%H:%M:00.000Z"),
                  "session": session, "agent": "PS", "project": "alpha", "meta": {}}  # fmt: skip
        if kind == "action":
            record.update(outcome="success", context={})
        record.update(fields)
        return record

    def write(self, day: int, name: str, records: list[dict[str, Any]], raw: bytes = b"") -> Path:
        folder = self.root / "actionlog" / (DAY + timedelta(days=day)).strftime("%Y/%m/%d")
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{name}.jsonl"
        with path.open("ab") as handle:
            handle.write(b"".join(encode(r) for r in records) + raw)
        return path


def sid() -> str:
    return new_ulid()


def session_day(s: Shards, day: int, session: str, *, end: str | None = None) -> list[Any]:
    """A session's day: a start, a plan, a tracked deploy (start and outcome), a turn end, an
    action whose parent is an in_progress start of another type (not its outcome)."""
    start = s.record(day, session, "session", event="start", session_type="cli")
    plan = s.record(day, session, "action", type="plan")
    deploy = s.record(day, session, "action", type="deploy", outcome="in_progress")
    done = s.record(day, session, "action", type="deploy", outcome="failure",
                    parent=deploy["id"], error="health check failed")  # fmt: skip
    turn = s.record(day, session, "session", event="end", reason="stop")
    other = s.record(day, session, "action", type="commit", parent=deploy["id"])
    records = [start, plan, deploy, done, turn, other]
    if end is not None:
        records.append(s.record(day, session, "session", event="end", reason=end))
    return records


def as_stored(row: dict[str, Any]) -> tuple[Any, ...]:
    def ts(value: str | None) -> datetime | None:
        return None if value is None else datetime.fromisoformat(value.replace("Z", "+00:00"))

    return (row["agent"] or "", row["project"], ts(row["started"]), ts(row["last_activity"]),
            ts(row["ended"]), row["session_type"] or "", row["end_reason"],
            row["action_count"])  # fmt: skip


def mirrored(dsn: str) -> dict[str, tuple[Any, ...]]:
    rows = query(dsn, "SELECT session_id, supervisor_type, project, started_at, last_activity,"
                      " ended_at, session_type, disconnect_reason, total_actions"
                      " FROM supervisor_sessions")  # fmt: skip
    return {str(r[0]): tuple(r[1:]) for r in rows}


def folds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times a mirror asked `Lorebook.sessions` (the catalog's fold)."""
    calls = [0]
    real = Lorebook.sessions

    def counted(self: Lorebook, **kwargs: Any) -> Any:
        calls[0] += 1
        return real(self, **kwargs)

    monkeypatch.setattr(Lorebook, "sessions", counted)
    return calls


def mirror(root: Path, dsn: str) -> Any:
    with Lorebook.open(root, env={}) as book:
        return book.mirror_postgres(dsn)


def test_sessions_read_in_full_are_folded_as_lore_sessions_folds_them(
    pg_server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo(tmp_path / "repo")
    dsn = pg_server.database()
    s = Shards(root)
    spanning, ended = sid(), sid()
    s.write(0, spanning, session_day(s, 0, spanning))
    s.write(0, ended, session_day(s, 0, ended, end="timeout"))
    calls = folds(monkeypatch)
    mirror(root, dsn)
    assert calls[0] == 0  # every session new and read whole: none asked of the catalog
    # a new day: new sessions only, one with a side shard, one reopened after its end, one
    # with an event line repeated by a union merge, one whose agent carries a secret
    side, reopened, repeated, secret = sid(), sid(), sid(), sid()
    s.write(1, side, session_day(s, 1, side))
    s.write(1, side + "~during-git", [s.record(1, side, "action", type="validate")])
    days = session_day(s, 1, reopened, end="normal")
    days += [s.record(1, reopened, "session", event="start"),
             s.record(1, reopened, "action", type="plan")]  # fmt: skip
    s.write(1, reopened, days)
    lines = session_day(s, 1, repeated, end="normal")
    s.write(1, repeated, lines, raw=encode(lines[0]))
    s.write(1, secret, session_day(s, 1, secret, end="normal"))
    shard = s.write(1, secret, [s.record(1, secret, "action", type="plan", agent=TOKEN)])
    assert TOKEN.encode() in shard.read_bytes()
    mirror(root, dsn)
    assert calls[0] == 0
    # the next day: the first session goes on in a new shard (its summary is in the database
    # already), a new one has a record in another session's shard, one repeats an action's
    # line (its key comes twice): the catalog folds them
    stray, newcomer, twice = sid(), sid(), sid()
    s.write(2, spanning, [*session_day(s, 2, spanning, end="error")])
    s.write(2, newcomer, [*session_day(s, 2, newcomer), s.record(2, stray, "action", type="x")])
    lines = session_day(s, 2, twice)
    s.write(2, twice, lines, raw=encode(lines[1]))
    mirror(root, dsn)
    assert calls[0] == 1
    expected = {row["id"]: as_stored(row) for row in lore_json(root, "sessions")}
    assert mirrored(dsn) == expected
    assert expected[spanning][6:] == ("error", 6)  # both days: tracked pairs counted once
    assert expected[reopened][4:7] == (None, "cli", None)  # started again after its end
    assert expected[repeated][6:] == ("normal", 3)
    assert expected[twice][7] == 3
    assert TOKEN not in json.dumps(query(dsn, "SELECT * FROM supervisor_sessions"), default=str)


def test_a_secret_planted_by_hand_in_a_new_shard_never_reaches_postgres(
    pg_server: Server, tmp_path: Path
) -> None:
    root = make_repo(tmp_path / "repo")
    dsn = pg_server.database()
    s = Shards(root)
    first = sid()
    s.write(0, first, session_day(s, 0, first, end="normal"))
    mirror(root, dsn)
    planted = sid()  # written by hand, past the writer's redaction
    records = session_day(s, 1, planted, end="normal")
    records[1]["context"] = {"note": f"deploy with {TOKEN}"}
    records[3]["error"] = f"auth failed for {TOKEN}"
    records[0]["project"] = f"alpha {TOKEN}"
    s.write(1, planted, records)
    assert mirror(root, dsn)["actions"] == 4
    dump = json.dumps(
        [query(dsn, f"SELECT * FROM {table}")
         for table in ("supervisor_actions", "supervisor_sessions")],
        default=str,
    )  # fmt: skip
    assert TOKEN not in dump
    assert "[REDACTED" in dump
    expected = {row["id"]: as_stored(row) for row in lore_json(root, "sessions")}
    assert mirrored(dsn) == expected
