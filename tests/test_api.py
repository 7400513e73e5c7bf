"""The Python API: `from lorebook import Lorebook`."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

import lorebook
from lorebook import Lorebook, LoreError, Session
from lorebook.errors import NotInitializedError, UsageError

T0 = datetime(2026, 3, 4, 12, 0, tzinfo=UTC)


def on_disk(book: Lorebook) -> list[dict[str, Any]]:
    out = []
    for path in sorted(book.layout.actionlog.rglob("*.jsonl")):
        lines = path.read_text(encoding="utf-8").splitlines()
        out.extend(json.loads(line) for line in lines)
    return sorted(out, key=lambda r: (r["ts"], r["id"]))


# -- opening -------------------------------------------------------------------------------------
def test_public_names() -> None:
    assert lorebook.Lorebook is Lorebook
    assert lorebook.Session is Session
    assert issubclass(NotInitializedError, LoreError)
    with pytest.raises(AttributeError):
        _ = lorebook.NoSuchThing  # type: ignore[attr-defined]


def test_open_explicit_path(store: Path) -> None:
    book = Lorebook.open(store, env={})
    assert book.root == store.resolve()
    assert book.layout.actionlog == store.resolve() / "actionlog"


def test_open_via_lore_root(store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert Lorebook.open(env={"LORE_ROOT": str(store)}).root == store.resolve()
    monkeypatch.setenv("LORE_ROOT", str(store))
    assert Lorebook.open().root == store.resolve()


def test_open_discovers_the_root_from_a_subdirectory(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sub = store / "src" / "deep" / "er"
    sub.mkdir(parents=True)
    monkeypatch.chdir(sub)
    book = Lorebook.open(env={})
    assert book.root == store.resolve()
    book.log("plan")
    assert list((store / "actionlog").rglob("*.jsonl"))
    assert not (sub / "actionlog").exists()


def test_open_refuses_an_uninitialised_directory(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(NotInitializedError, match="lore init"):
        Lorebook.open(repo, env={})
    monkeypatch.chdir(repo)
    with pytest.raises(NotInitializedError, match=re.escape(str(repo.resolve()))):
        Lorebook.open(env={})


def test_init_then_open(tmp_path: Path) -> None:
    root = tmp_path / "new"
    root.mkdir()
    book = Lorebook.init(root, env={})
    assert (root / ".lore").is_dir()
    assert Lorebook.open(root, env={}).root == book.root


def test_env_defaults(store: Path) -> None:
    book = Lorebook.open(
        store, env={"LORE_AGENT": "PS", "LORE_PROJECT": "consilio", "LORE_SESSION": "env-session"}
    )
    record = book.log("commit")
    assert (record["agent"], record["project"], record["session"]) == (
        "PS",
        "consilio",
        "env-session",
    )


# -- sessions ------------------------------------------------------------------------------------
def test_session_context_manager(book: Lorebook) -> None:
    with book.session(agent="PS", project="consilio", session_type="mcp") as session:
        assert isinstance(session, Session)
        action = session.log("plan", epic="epic-1", context={"approach": "x"})
    records = on_disk(book)
    assert [(r["kind"], r.get("event")) for r in records] == [
        ("session", "start"),
        ("action", None),
        ("session", "end"),
    ]
    start, logged, end = records
    assert {r["session"] for r in records} == {session.id}
    assert start["session_type"] == "mcp"
    assert (start["agent"], start["project"]) == ("PS", "consilio")
    assert logged == action
    assert (logged["agent"], logged["project"], logged["epic"]) == ("PS", "consilio", "epic-1")
    assert end["reason"] == "normal"
    assert (end["agent"], end["project"]) == ("PS", "consilio")
    assert session.ended
    (info,) = book.sessions()
    assert (info.id, info.status, info.action_count) == (session.id, "ended", 1)


def test_session_block_that_raises(book: Lorebook) -> None:
    class Boom(Exception):
        pass

    with pytest.raises(Boom, match="kaput"), book.session(agent="PS") as session:
        session.log("plan")
        raise Boom("kaput")
    end = on_disk(book)[-1]
    assert (end["kind"], end["event"], end["reason"]) == ("session", "end", "error")
    assert end["meta"]["exception"] == "Boom"
    (info,) = book.sessions()
    assert (info.status, info.end_reason) == ("ended", "error")


def test_session_end_is_written_once(book: Lorebook) -> None:
    with book.session(session_id="once") as session:
        session.end(reason="user_exit")
    ends = [r for r in on_disk(book) if r.get("event") == "end"]
    assert [e["reason"] for e in ends] == ["user_exit"]


def test_bad_session_type(book: Lorebook) -> None:
    with (
        pytest.raises(UsageError, match="cli, browser, mcp, hook"),
        book.session(session_type="desktop"),
    ):
        pass
    assert on_disk(book) == []


# -- track -----------------------------------------------------------------------------------------
def test_track_success(book: Lorebook) -> None:
    session = book.start_session(session_id="s")
    with session.track("deploy", context={"service": "api"}, epic="e-1") as opened:
        assert opened["outcome"] == "in_progress"
    actions = [r for r in on_disk(book) if r["kind"] == "action"]
    assert [a["outcome"] for a in actions] == ["in_progress", "success"]
    first, done = actions
    assert first == opened
    assert done["parent"] == first["id"]
    assert done["type"] == "deploy"
    assert done["context"] == {"service": "api"}
    assert done["epic"] == "e-1"
    assert isinstance(done["duration_s"], float) and done["duration_s"] >= 0
    assert done["error"] is None
    state = book.resume(session="s")
    assert state["open_actions"] == []


def test_track_failure_reraises(book: Lorebook) -> None:
    session = book.start_session(session_id="s")
    with (
        pytest.raises(ValueError, match="bad input"),
        session.track("validate", epic="e-1") as opened,
    ):
        raise ValueError("bad input")
    actions = [r for r in on_disk(book) if r["kind"] == "action"]
    assert [a["outcome"] for a in actions] == ["in_progress", "failure"]
    failed = actions[1]
    assert failed["parent"] == opened["id"]
    assert failed["error"] == "ValueError: bad input"
    assert failed["duration_s"] >= 0
    assert failed["epic"] == "e-1"
    state = book.resume(session="s")
    assert state["open_actions"] == []
    assert [a["id"] for a in state["failed_validations"]] == [failed["id"]]


def test_track_redacts_secrets_in_the_error(book: Lorebook) -> None:
    session = book.start_session(session_id="s")
    token = "ghp_" + "Zq1Wx2Ec3Rv4Tb5Yn6Um7Ik8Ol9Pa0Sd1Fg2Hj"
    with pytest.raises(RuntimeError), session.track("push"):
        raise RuntimeError(f"auth failed for {token}")
    text = "".join(p.read_text() for p in book.layout.actionlog.rglob("*.jsonl"))
    assert token not in text
    failed = on_disk(book)[-1]
    assert failed["error"].startswith("RuntimeError: auth failed for ")
    assert failed["meta"]["redactions"] == 1


# -- logging ------------------------------------------------------------------------------------
def test_log_validates_arguments(book: Lorebook) -> None:
    with pytest.raises(UsageError, match="lowercase"):
        book.log("Deploy")
    with pytest.raises(UsageError, match="in_progress"):
        book.log("deploy", outcome="done")
    with pytest.raises(UsageError, match="non-negative"):
        book.log("deploy", duration_s=-1)
    with pytest.raises(UsageError, match="ULID"):
        book.log("deploy", parent="123")
    with pytest.raises(UsageError, match="context"):
        book.log("deploy", context=["not", "a", "mapping"])
    assert on_disk(book) == []


def test_log_with_backdated_time(book: Lorebook) -> None:
    record = book.log("plan", session="s", now=T0)
    assert record["ts"] == "2026-03-04T12:00:00.000Z"
    assert (book.layout.actionlog / "2026" / "03" / "04" / "s.jsonl").is_file()


def test_automatic_session_start_event(book: Lorebook) -> None:
    first = book.log("plan", agent="PS", project="p", now=T0)
    second = book.log("commit", agent="PS", project="p", now=T0 + timedelta(minutes=1))
    other_day = book.log("commit", agent="PS", project="p", now=T0 + timedelta(days=1))
    assert first["session"] == second["session"] != other_day["session"]
    assert first["session"].startswith("auto-20260304-")
    assert other_day["session"].startswith("auto-20260305-")
    records = on_disk(book)
    starts = [r for r in records if r.get("event") == "start"]
    assert len(starts) == 2
    assert all(s["meta"]["auto"] is True for s in starts)


# -- reading ------------------------------------------------------------------------------------
def test_actions_and_sessions_queries(book: Lorebook) -> None:
    a = book.start_session(session_id="a", agent="PS", project="consilio", now=T0)
    a.log("plan", epic="e-1", now=T0 + timedelta(minutes=1))
    a.log("commit", epic="e-1", now=T0 + timedelta(minutes=2))
    b = book.start_session(session_id="b", agent="MS", project="other", now=T0)
    b.log("deploy", outcome="failure", now=T0 + timedelta(minutes=3))
    assert [x["type"] for x in book.actions()] == ["deploy", "commit", "plan"]
    assert [x["type"] for x in book.actions(agent="PS")] == ["commit", "plan"]
    assert [x["type"] for x in book.actions(outcome="failure")] == ["deploy"]
    assert [x["type"] for x in book.actions(limit=1)] == ["deploy"]
    assert [x["type"] for x in book.actions(since=T0 + timedelta(minutes=2))] == [
        "deploy",
        "commit",
    ]
    assert [x["type"] for x in book.actions(until=T0 + timedelta(minutes=2))] == ["plan"]
    assert [x["type"] for x in book.actions(category="git")] == ["commit"]
    with pytest.raises(UsageError):
        book.actions(limit=0)
    with pytest.raises(UsageError, match="since"):
        book.actions(since=T0, until=T0)

    now = T0 + timedelta(minutes=10)
    assert [s.id for s in book.sessions(now=now)] == ["b", "a"]
    assert [s.id for s in book.sessions(project="consilio", now=now)] == ["a"]
    assert [s.id for s in book.sessions(agent="MS", now=now)] == ["b"]
    assert [s.id for s in book.sessions(status="active", now=now)] == ["b", "a"]
    assert book.sessions(status="ended", now=now) == []
    with pytest.raises(UsageError, match="active, ended, disconnected"):
        book.sessions(status="gone")
    info = book.sessions(now=now)[1].to_dict()
    assert info["action_count"] == 2 and info["session_type"] == "cli"


def test_resume_through_the_api(book: Lorebook) -> None:
    s = book.start_session(session_id="s", agent="PS", project="consilio", now=T0)
    spawn = s.log(
        "spawn",
        outcome="in_progress",
        now=T0 + timedelta(minutes=1),
        context={"agent_id": "impl-1"},
    )
    state = book.resume(project="consilio", now=T0 + timedelta(hours=1))
    assert state["session"]["id"] == "s"
    assert state["session"]["status"] == "disconnected"
    assert [a["id"] for a in state["open_actions"]] == [spawn["id"]]


def test_listener_receives_each_stored_redacted_record(book: Lorebook) -> None:
    seen: list[dict[str, Any]] = []
    book.on("action", seen.append)
    session = book.start_session(session_id="s")
    logged = session.log("tool_call", context={"api_key": "abc123", "tool_name": "Read"})
    book.log("plan", session="s")
    actions = [r for r in seen if r["kind"] == "action"]
    assert [a["type"] for a in actions] == ["tool_call", "plan"]
    assert actions[0] == logged
    assert actions[0]["context"] == {"api_key": "[REDACTED]", "tool_name": "Read"}
    assert actions[0]["meta"]["redactions"] == 1
    stored = {r["id"]: r for r in on_disk(book)}
    for record in seen:
        assert stored[record["id"]] == record


def test_listener_for_an_unknown_event(book: Lorebook) -> None:
    with pytest.raises(UsageError, match="action"):
        book.on("commit", lambda record: None)


def test_check_through_the_api(book: Lorebook) -> None:
    book.log("plan", session="s", now=T0)
    report = book.check()
    assert (report.ok, report.shards, report.records) == (True, 1, 1)
    shard = book.layout.actionlog / "2026" / "03" / "04" / "s.jsonl"
    with shard.open("a") as handle:
        handle.write("garbage\n")
    report = book.check()
    assert not report.ok
    assert str(report.findings[0]).startswith("actionlog/2026/03/04/s.jsonl:2: invalid JSON")
