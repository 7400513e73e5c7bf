"""`Lorebook.timeline`: a session's records as a tree of rows (a tracked action once, children
under their parent, subagents' Task calls under their spawn), with start offsets, durations
and what each row was; on records written through the API and on a real Claude Code session
imported with `lore import claude`."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from lorebook import Lorebook
from lorebook.render import timeline as waterfall
from test_import_sessions import picked, place, run_import

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return START + timedelta(seconds=seconds)


def traced(store: Path) -> tuple[Lorebook, str]:
    """A session: a plan, a tracked deploy (started at 10 s, failed at 70 s) holding two tool
    calls, one of them failing, and a file read after it."""
    book = Lorebook.open(store, env={})
    session = book.start_session(agent="PS", project="shop", now=START).id
    book.log("plan", session=session, context={"description": "ship the cart"}, now=at(1))
    opened = book.log("deploy", session=session, outcome="in_progress", epic="e-1", now=at(10))
    book.log(
        "tool_call",
        session=session,
        parent=opened["id"],
        context={"tool": "Bash", "command": "make build"},
        duration_s=20,
        now=at(35),
    )
    book.log(
        "tool_call",
        session=session,
        parent=opened["id"],
        outcome="failure",
        error="exit 2",
        context={"tool": "Bash", "command": "make deploy"},
        duration_s=5,
        now=at(60),
    )
    book.log("deploy", session=session, outcome="failure", parent=opened["id"], now=at(70))
    book.log("tool_call", session=session, context={"tool": "Read", "file": "src/cart.py"},
             now=at(80))  # fmt: skip
    return book, session


def test_a_tracked_action_is_one_row_with_its_children_under_it(store: Path) -> None:
    book, session = traced(store)
    tree = book.timeline(session)
    shape = [("  " * r.depth + r.what, r.outcome, r.start, r.duration) for r in tree.rows]
    assert shape == [
        ("plan ship the cart", "success", 0.0, None),
        ("deploy e-1", "failure", 9.0, 60.0),
        ("  Bash make build", "success", 14.0, 20.0),
        ("  Bash make deploy", "failure", 54.0, 5.0),
        ("Read src/cart.py", "success", 79.0, None),
    ]
    deploy = tree.rows[1]
    assert [r["outcome"] for r in deploy.records] == ["in_progress", "failure"]
    assert [r.parent for r in tree.rows] == [None, None, deploy.id, deploy.id, None]
    assert [r.last for r in tree.rows] == [0, 3, 2, 3, 4]
    assert tree.span == 79.0 and tree.began == "2026-03-02T09:00:01.000Z"
    assert sum(len(r.records) for r in tree.rows) == len(book.actions(session=session, limit=None))


def test_an_open_start_lasts_until_its_last_child(store: Path) -> None:
    book = Lorebook.open(store, env={})
    session = book.start_session(agent="PS", now=START).id
    opened = book.log("migrate", session=session, outcome="in_progress", now=at(0))
    book.log("tool_call", session=session, parent=opened["id"], duration_s=4, now=at(30),
             context={"tool": "Bash", "command": "alembic upgrade head"})  # fmt: skip
    first, child = book.timeline(session).rows
    assert (first.outcome, first.duration, child.depth) == ("in_progress", 30.0, 1)


def test_the_waterfall_line_of_a_row() -> None:
    assert waterfall.bar(0, 10, 40, 8) == "██      "
    assert waterfall.bar(20, 20, 40, 8) == "    ████"
    assert waterfall.bar(10, None, 40, 8) == "  │     "
    assert waterfall.bar(39.99, 0, 40, 8) == "       ▕"  # a short call still shows
    assert waterfall.bar(0, 0.1, 40, 8) == "▏       "
    assert waterfall.bar(0, 10, 40, 0) == ""
    assert waterfall.bar_width(3) == 0 and waterfall.bar_width(12) == 12


def test_a_real_claude_code_session_with_subagents(store: Path, tmp_path: Path) -> None:
    """9667a07f ran six review subagents through the Task tool: each one is one row (its
    start and stop), its Task call under it; every record of the log is in one row."""
    session = next(s for s in picked() if s["id"].startswith("9667a07f"))
    place(session, tmp_path / "claude", store)
    assert run_import(store, tmp_path, "claude").code == 0
    book = Lorebook.open(store, env={})
    tree = book.timeline(session["id"])
    records = book.actions(session=session["id"], limit=None)
    assert sum(len(r.records) for r in tree.rows) == len(records) == 37
    assert len({id(rec) for r in tree.rows for rec in r.records}) == len(records)
    spawns = [r for r in tree.rows if r.type == "spawn"]
    assert len(spawns) == 6
    for spawn in spawns:
        assert [r["outcome"] for r in spawn.records] == ["in_progress", "success"]
        assert spawn.depth == 0 and spawn.duration is not None and spawn.duration > 50
        (task,) = spawn.children
        assert task.parent == spawn.id and task.depth == 1
        ran = task.records[0]["context"]["subagent"]
        assert ran == spawn.records[0]["context"]["agent_type"] and spawn.what == f"spawn {ran}"
        assert tree.rows[tree.rows.index(spawn) + 1] is task  # right under its parent
    whats = [r.what for r in tree.rows]
    assert "Bash git diff main...HEAD" in whats
    assert "Edit cmd/entire/cli/strategy/common.go" in whats
    assert whats[0] == "prompt /workflows:review"
    assert "Task Security review" in whats  # a subagent's call by its description
    assert all(r.depth == 0 for r in tree.rows if r.type != "tool_call" or r.parent is None)
    assert round(tree.span) == 1516  # 25 minutes from the first prompt to the last


def subagents_at_work(store: Path, *, launched_first: bool) -> tuple[Lorebook, str]:
    """Two subagents of one type at once, each making a call (`context.agent_id`, as Claude
    Code's hooks report it), and the main agent's own call after them. `launched_first`: the
    Agent calls are written before the subagents start (Claude Code 2.1's background launch);
    else after they stop (a Task that waits, as older versions and imports write it)."""
    book = Lorebook.open(store, env={})
    session = book.start_session(agent="PS", now=START).id

    def call(agent: str, second: float) -> None:
        book.log("tool_call", session=session, now=at(second),
                 context={"tool": "Agent", "subagent": "review", "description": f"check {agent}",
                          "response": {"agentId": agent, "status": "async_launched"}})  # fmt: skip

    if launched_first:
        call("a1", 1)
        call("b2", 2)
    starts = {}
    for agent, second in (("a1", 3), ("b2", 4)):
        starts[agent] = book.log("spawn", session=session, outcome="in_progress", now=at(second),
                                 context={"agent_id": agent, "agent_type": "review"})  # fmt: skip
    book.log("tool_call", session=session, now=at(10), duration_s=2,
             context={"tool": "Grep", "pattern": "TODO", "agent_id": "b2"})  # fmt: skip
    book.log("tool_call", session=session, now=at(12), duration_s=1,
             context={"tool": "Bash", "command": "go test ./...", "agent_id": "a1"})  # fmt: skip
    for agent, second in (("a1", 20), ("b2", 30)):
        book.log("spawn", session=session, parent=starts[agent]["id"], now=at(second),
                 context={"agent_id": agent, "agent_type": "review"})  # fmt: skip
    if not launched_first:
        call("b2", 31)
        call("a1", 32)
    book.log("tool_call", session=session, context={"tool": "Read", "file": "main.go"},
             now=at(40))  # fmt: skip
    return book, session


@pytest.mark.parametrize("launched_first", [True, False])
def test_a_subagents_own_calls_sit_under_it(store: Path, launched_first: bool) -> None:
    book, session = subagents_at_work(store, launched_first=launched_first)
    tree = book.timeline(session)
    shape = [("  " * r.depth + r.what, r.start, r.duration) for r in tree.rows]
    first = ["  Agent check a1", "  Bash go test ./..."]
    second = ["  Grep TODO", "  Agent check b2"]
    if launched_first:
        first, second = first, [second[1], second[0]]
    else:
        first = [first[1], first[0]]
    assert [s[0] for s in shape] == [
        "spawn review",
        *first,
        "spawn review",
        *second,
        "Read main.go",
    ]
    a1, b2 = (r for r in tree.rows if r.type == "spawn")
    assert [r.records[0]["context"]["agent_id"] for r in (a1, b2)] == ["a1", "b2"]
    assert (a1.duration, b2.duration) == (17.0, 26.0)
    assert all(r.parent == a1.id for r in tree.rows[1:3])
    assert all(r.parent == b2.id for r in tree.rows[4:6])
    assert tree.rows[-1].depth == 0
    assert sum(len(r.records) for r in tree.rows) == len(book.actions(session=session, limit=None))


def test_a_call_naming_an_unknown_subagent_stays_at_the_top(store: Path) -> None:
    """A subagent whose start was not captured (hooks wired later, or capture only): its
    calls stay where they are, nothing is lost."""
    book = Lorebook.open(store, env={})
    session = book.start_session(agent="PS", now=START).id
    book.log("tool_call", session=session, now=at(1),
             context={"tool": "Bash", "command": "ls", "agent_id": "zz9"})  # fmt: skip
    (row,) = book.timeline(session).rows
    assert (row.depth, row.parent, row.what) == (0, None, "Bash ls")


def subagent_file(folder: Path, session: str, agent: str, second: int, *, named: bool) -> None:
    """A subagent's transcript as Claude Code writes it beside its session: one Grep call at
    14:39:<second>; `named`: its lines carry the `agentId` (else only the file's name has it)."""
    base = {"sessionId": session, "isSidechain": True, "cwd": str(folder),
            "timestamp": f"2026-01-05T14:39:{second:02d}.000Z"}  # fmt: skip
    if named:
        base["agentId"] = agent
    call = f"toolu_01SIDE{agent}"
    lines = [
        {**base, "type": "user", "message": {"role": "user", "content": "review it"}},
        {**base, "type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": call, "name": "Grep", "input": {"pattern": agent}}]}},
        {**base, "type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": call, "content": "a.go"}]},
         "toolUseResult": {"mode": "files_with_matches", "filenames": ["a.go"]}},
    ]  # fmt: skip
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"agent-{agent}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))


def test_an_imported_subagents_calls_sit_under_it(store: Path, tmp_path: Path) -> None:
    """9667a07f's subagents a1f7b71 and a2eaee4 with a transcript each (the data set dropped
    theirs): each one's call is imported with its agent id and sits under its spawn, beside
    its Task call, as the hooks' records do."""
    session = next(s for s in picked() if s["id"].startswith("9667a07f"))
    path = place(session, tmp_path / "claude", store)
    folder = path.parent / session["id"] / "subagents"
    subagent_file(folder, session["id"], "a1f7b71", 20, named=True)
    subagent_file(folder, session["id"], "a2eaee4", 30, named=False)
    assert run_import(store, tmp_path, "claude").code == 0
    tree = Lorebook.open(store, env={}).timeline(session["id"])
    for agent, task in (("a1f7b71", "Simplicity review"), ("a2eaee4", "Performance review")):
        spawns = [r for r in tree.rows if r.type == "spawn"]
        (spawn,) = [r for r in spawns if r.records[0]["context"]["agent_id"] == agent]
        assert sorted(r.what for r in spawn.children) == [f"Grep {agent}", f"Task {task}"]
        (grep,) = [r for r in spawn.children if r.what.startswith("Grep")]
        assert grep.records[0]["context"]["agent_id"] == agent and grep.depth == 1
        assert spawn.start <= grep.start <= spawn.end
    assert sum(len(r.records) for r in tree.rows) == 37 + 2


def test_a_subagents_call_written_before_its_start_is_adopted(store: Path) -> None:
    """Capture hooks write from detached processes: a subagent's first call can land before
    its SubagentStart's record; it still sits under the subagent."""
    book = Lorebook.open(store, env={})
    session = book.start_session(agent="PS", now=START).id
    book.log("tool_call", session=session, now=at(1), duration_s=1,
             context={"tool": "Bash", "command": "ls", "agent_id": "c3"})  # fmt: skip
    book.log("spawn", session=session, outcome="in_progress", now=at(2),
             context={"agent_id": "c3", "agent_type": "Explore"})  # fmt: skip
    spawn, call = book.timeline(session).rows
    assert (spawn.type, call.parent, call.depth, call.what) == ("spawn", spawn.id, 1, "Bash ls")
