"""`lore session start|end` and the session status (active, ended, disconnected)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from conftest import (
    ULID,
    assert_one_error_line,
    clean_env,
    cli_run,
    git,
    lore,
    shard_files,
    stored,
)
from lorebook import Lorebook
from lorebook.ids import ulid_ms
from lorebook.log.writer import host_name

T0 = datetime(2026, 3, 4, 12, 0, tzinfo=UTC)


def test_start_prints_a_new_id_and_writes_the_start_event(store: Path) -> None:
    result = lore(
        "session",
        "start",
        "--agent",
        "PS",
        "--project",
        "consilio",
        "--type",
        "mcp",
        env=clean_env(store),
    )
    assert result.code == 0, result.err
    session_id = result.out.strip()
    assert result.out == session_id + "\n"
    assert ULID.match(session_id)
    (start,) = stored(store)
    assert start == {
        "v": 1,
        "kind": "session",
        "event": "start",
        "id": start["id"],
        "ts": start["ts"],
        "session": session_id,
        "agent": "PS",
        "project": "consilio",
        "session_type": "mcp",
        "meta": {"host": host_name(), "repo": f"root:{git(store, 'rev-parse', 'HEAD').strip()}"},
    }  # the repository a session belongs to: its remote, else its first commit
    assert abs(ulid_ms(session_id) - ulid_ms(start["id"])) < 5_000
    (shard,) = shard_files(store)
    assert shard.name == f"{session_id}.jsonl"


def test_start_with_an_explicit_id_and_defaults(store: Path) -> None:
    result = cli_run(["--root", str(store), "session", "start", "--id", "claude-7f3a"])
    assert result.code == 0, result.err
    assert result.out == "claude-7f3a\n"
    (start,) = stored(store)
    assert start["session"] == "claude-7f3a"
    assert start["session_type"] == "cli"
    assert start["agent"] == "agent"
    assert start["project"] == store.name


def test_start_json(store: Path) -> None:
    result = cli_run(
        ["--root", str(store), "session", "start", "--agent", "PS", "--type", "hook", "--json"]
    )
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert data == {
        "session": data["session"],
        "agent": "PS",
        "project": store.name,
        "session_type": "hook",
    }
    assert ULID.match(data["session"])


def test_full_cycle_with_lore_session(store: Path) -> None:
    env = clean_env(store)
    session_id = lore(
        "session", "start", "--agent", "PS", "--project", "consilio", env=env
    ).out.strip()
    env["LORE_SESSION"] = session_id
    action_id = lore("log", "plan", "--epic", "epic-1", env=env).out.strip()
    ended = lore("session", "end", "--reason", "network_disconnect", env=env)
    assert ended.code == 0, ended.err
    assert ended.out.strip() == f"ended {session_id} (network_disconnect)"
    records = stored(store)
    assert [(r["kind"], r.get("event")) for r in records] == [
        ("session", "start"),
        ("action", None),
        ("session", "end"),
    ]
    assert {r["session"] for r in records} == {session_id}
    assert records[1]["id"] == action_id
    assert records[2]["reason"] == "network_disconnect"
    assert "session_type" not in records[2]


def test_end_with_session_option_json(store: Path) -> None:
    cli_run(["--root", str(store), "session", "start", "--id", "s-1"])
    result = cli_run(["--root", str(store), "session", "end", "--session", "s-1", "--json"])
    assert result.code == 0, result.err
    end = json.loads(result.out)
    assert end == stored(store)[-1]
    assert (end["event"], end["reason"], end["session"]) == ("end", "normal", "s-1")


def test_end_event_carries_the_sessions_agent_and_project(store: Path) -> None:
    """`lore session end --session S` without --agent/--project records S's identity,
    not the defaults (resume and `--agent`/`--project` filters read the last record)."""
    env = clean_env(store)
    sid = lore("session", "start", "--agent", "PS", "--project", "consilio", env=env).out.strip()
    assert lore("session", "end", "--session", sid, env=env).code == 0
    end = stored(store)[-1]
    assert (end["agent"], end["project"]) == ("PS", "consilio")
    book = Lorebook.open(store, env={})
    state = book.resume(project="consilio", agent="PS")
    assert state["session"]["id"] == sid


@pytest.mark.parametrize(
    ("args", "env_extra", "needles"),
    [
        (["start", "--type", "desktop"], {}, ["desktop", "cli, browser, mcp, hook"]),
        (["start", "--id", "bad id!"], {}, ["bad id!"]),
        (["end"], {}, ["no session to end", "--session", "LORE_SESSION"]),
        (["end", "--session", "s-1", "--reason", "Gave Up"], {}, ["Gave Up"]),
    ],
)
def test_bad_session_commands(
    store: Path, args: list[str], env_extra: dict[str, str], needles: list[str]
) -> None:
    result = lore("session", *args, env=clean_env(store, **env_extra))
    assert_one_error_line(result, *needles)
    assert shard_files(store) == []


def test_session_commands_need_a_store(tmp_path: Path) -> None:
    result = lore("session", "start", env=clean_env(tmp_path))
    assert_one_error_line(result, "lore init")


# -- status ------------------------------------------------------------------------------------
def _status(book: Lorebook, now: datetime) -> dict[str, str]:
    return {s.id: s.status for s in book.sessions(now=now)}


def test_status_active_ended_disconnected(book: Lorebook) -> None:
    ended = book.start_session(session_id="ended", now=T0 - timedelta(hours=3))
    book.log("plan", session="ended", now=T0 - timedelta(hours=3))
    book.end_session("ended", now=T0 - timedelta(hours=2, minutes=59))
    book.start_session(session_id="gone", now=T0 - timedelta(minutes=45))
    book.log("spawn", session="gone", outcome="in_progress", now=T0 - timedelta(minutes=31))
    book.start_session(session_id="busy", now=T0 - timedelta(hours=5))
    book.log("plan", session="busy", now=T0 - timedelta(minutes=29))
    assert ended.id == "ended"
    assert _status(book, T0) == {"ended": "ended", "gone": "disconnected", "busy": "active"}
    # an ended session stays ended however old; a silent one becomes disconnected
    assert _status(book, T0 + timedelta(days=30)) == {
        "ended": "ended",
        "gone": "disconnected",
        "busy": "disconnected",
    }


def test_status_uses_configured_idle_minutes(store: Path) -> None:
    (store / ".lore" / "config.yaml").write_text("sessions: {idle_minutes: 5}\n")
    book = Lorebook.open(store, env={})
    book.start_session(session_id="a", now=T0 - timedelta(minutes=6))
    book.start_session(session_id="b", now=T0 - timedelta(minutes=4))
    assert _status(book, T0) == {"a": "disconnected", "b": "active"}


def test_end_reason_error_is_ended_not_disconnected(book: Lorebook) -> None:
    book.start_session(session_id="crashed", now=T0 - timedelta(hours=1))
    book.end_session("crashed", reason="error", now=T0 - timedelta(minutes=50))
    (info,) = book.sessions(now=T0)
    assert (info.status, info.end_reason) == ("ended", "error")


def test_status_through_the_cli(store: Path) -> None:
    book = Lorebook.open(store, env={})
    now = datetime.now(UTC)
    book.start_session(session_id="old", agent="PS", now=now - timedelta(hours=2))
    book.start_session(session_id="new", agent="PS", now=now - timedelta(minutes=1))
    result = lore("sessions", "--json", env=clean_env(store))
    assert result.code == 0, result.err
    assert [(s["id"], s["status"]) for s in json.loads(result.out)] == [
        ("new", "active"),
        ("old", "disconnected"),
    ]
