"""`lore resume`: target choice, open actions (every closure rule), next steps, git state."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from conftest import assert_one_error_line, clean_env, cli_run, git, lore
from lorebook import Lorebook, LoreError
from lorebook.timeutil import format_ts

T0 = datetime(2026, 3, 4, 12, 0, tzinfo=UTC)


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def commit_all(root: Path, message: str = "work") -> str:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)
    return git(root, "rev-parse", "HEAD").strip()


@pytest.fixture
def committed(store: Path) -> Path:
    """A store whose layout is committed, so git only reports what the test changes."""
    commit_all(store, "lore: init store")
    return store


# -- closure rules -----------------------------------------------------------------------------
Step = tuple[str, str, dict[str, Any]]
E1 = {"epic": "e-1"}
CLOSURE_CASES: dict[str, tuple[list[Step], list[int]]] = {
    "parent closes": (
        [("tool_call", "in_progress", {}), ("tool_call", "success", {"parent": 0})],
        [],
    ),
    "parent closes across types": (
        [("plan", "in_progress", {}), ("commit", "success", {"parent": 0})],
        [],
    ),
    "failure with parent closes": (
        [("tool_call", "in_progress", {}), ("tool_call", "failure", {"parent": 0})],
        [],
    ),
    "same type without parent stays open": (
        [("tool_call", "in_progress", {}), ("tool_call", "success", {})],
        [0],
    ),
    "parent naming another action stays open": (
        [
            ("tool_call", "in_progress", {}),
            ("tool_call", "success", {}),
            ("tool_call", "success", {"parent": 1}),
        ],
        [0],
    ),
    "spawn closed by same agent_id": (
        [
            ("spawn", "in_progress", {"context": {"agent_id": "impl-1"}}),
            ("spawn", "success", {"context": {"agent_id": "impl-1"}}),
        ],
        [],
    ),
    "spawn not closed by another agent_id": (
        [
            ("spawn", "in_progress", {"context": {"agent_id": "impl-1"}}),
            ("spawn", "success", {"context": {"agent_id": "impl-2"}}),
        ],
        [0],
    ),
    "spawn without agent_id stays open": (
        [("spawn", "in_progress", {}), ("spawn", "success", {})],
        [0],
    ),
    "agent_id on another type does not close a spawn": (
        [
            ("spawn", "in_progress", {"context": {"agent_id": "impl-1"}}),
            ("tool_call", "success", {"context": {"agent_id": "impl-1"}}),
        ],
        [0],
    ),
    "validate closed by same epic": (
        [("validate", "in_progress", E1), ("validate", "failure", E1)],
        [],
    ),
    "validate epic from context.epic_id": (
        [("validate", "in_progress", {"context": {"epic_id": "e-1"}}), ("validate", "success", E1)],
        [],
    ),
    "validate not closed by another epic": (
        [("validate", "in_progress", E1), ("validate", "success", {"epic": "e-2"})],
        [0],
    ),
    "validate without epic stays open": (
        [("validate", "in_progress", {}), ("validate", "success", {})],
        [0],
    ),
    "deploy closed by same epic": ([("deploy", "in_progress", E1), ("deploy", "success", E1)], []),
    "deploy not closed by another epic": (
        [("deploy", "in_progress", E1), ("deploy", "success", {"epic": "e-2"})],
        [0],
    ),
    "deploy not closed by a validate of the same epic": (
        [("deploy", "in_progress", E1), ("validate", "success", E1)],
        [0],
    ),
    "same epic closes only validate and deploy": (
        [("plan", "in_progress", E1), ("plan", "success", E1)],
        [0],
    ),
    "an earlier action never closes a later one": (
        [("validate", "success", E1), ("validate", "in_progress", E1)],
        [1],
    ),
    "two open spawns, one closed": (
        [
            ("spawn", "in_progress", {"context": {"agent_id": "a"}}),
            ("spawn", "in_progress", {"context": {"agent_id": "b"}}),
            ("spawn", "success", {"context": {"agent_id": "a"}}),
        ],
        [1],
    ),
}


@pytest.mark.parametrize("case", list(CLOSURE_CASES))
def test_closure_rules(book: Lorebook, case: str) -> None:
    steps, expected_open = CLOSURE_CASES[case]
    session = book.start_session(session_id="s", now=at(0))
    ids: list[str] = []
    for index, (action_type, outcome, fields) in enumerate(steps):
        fields = dict(fields)
        if "parent" in fields:
            fields["parent"] = ids[fields["parent"]]
        ids.append(session.log(action_type, outcome=outcome, now=at(index + 1), **fields)["id"])
    state = book.resume(now=at(10))
    assert state["session"]["id"] == "s"
    assert [a["id"] for a in state["open_actions"]] == [ids[i] for i in expected_open]


# -- the JSON contract ---------------------------------------------------------------------------
def _story(book: Lorebook, base: datetime = T0, *, session_id: str = "s-story") -> dict[str, str]:
    """A supervisor session that committed, failed a validation and left a fix subagent running."""

    def when(minutes: float) -> datetime:
        return base + timedelta(minutes=minutes)

    s = book.start_session(session_id=session_id, agent="PS", project="consilio", now=when(0))
    ids = {}
    ids["plan"] = s.log(
        "plan", epic="epic-012", now=when(1), context={"approach": "JWT with refresh rotation"}
    )["id"]
    ids["commit"] = s.log(
        "commit",
        epic="epic-012",
        now=when(2),
        context={"commit_hash": "c0ffee1", "message": "feat: rotation"},
    )["id"]
    ids["validate"] = s.log(
        "validate",
        outcome="failure",
        epic="epic-012",
        now=when(3),
        error="2 of 7 acceptance criteria failed",
        context={"failures": ["reuse not detected", "logout keeps token"]},
    )["id"]
    ids["spawn"] = s.log(
        "spawn",
        outcome="in_progress",
        epic="epic-012",
        now=when(4),
        context={
            "agent_id": "fix-42",
            "subagent_type": "fix",
            "task_description": "Detect refresh-token reuse",
        },
    )["id"]
    return ids


def test_resume_json_contract(committed: Path) -> None:
    book = Lorebook.open(committed, env={})
    ids = _story(book)
    state = book.resume(now=at(60))
    assert set(state) >= {
        "session",
        "last_action",
        "recent_actions",
        "epic",
        "work_in_progress",
        "open_actions",
        "failed_validations",
        "suggested_next_steps",
        "git",
    }
    assert state["session"] == {
        "id": "s-story",
        "agent": "PS",
        "project": "consilio",
        "started": format_ts(at(0)),
        "last_activity": format_ts(at(4)),
        "ended": None,
        "end_reason": None,
        "status": "disconnected",
        "action_count": 4,
    }
    assert state["last_action"]["id"] == ids["spawn"]
    assert [a["id"] for a in state["recent_actions"]] == [
        ids["spawn"],
        ids["validate"],
        ids["commit"],
        ids["plan"],
    ]
    assert state["epic"] == "epic-012"
    assert [a["id"] for a in state["open_actions"]] == [ids["spawn"]]
    assert [a["id"] for a in state["failed_validations"]] == [ids["validate"]]
    wip = state["work_in_progress"]
    assert "\n" not in wip and wip.endswith(".")
    assert "fix-42" in wip and "still running" in wip
    steps = state["suggested_next_steps"]
    assert any(
        "fix-42" in step and step.startswith("Check the status of subagent") for step in steps
    )
    assert any(
        step.startswith("Fix the failures from the validation of epic-012")
        and "2 failures" in step
        and "re-validate" in step
        for step in steps
    )
    assert steps[0].startswith("Check the status of subagent fix-42")
    # a failed validation is pending: no "deploy" suggestion
    assert not any("Deploy" in step for step in steps)


def test_limit_and_recent_actions(book: Lorebook) -> None:
    s = book.start_session(session_id="s", now=at(0))
    ids = [s.log("tool_call", now=at(i + 1), context={"n": i})["id"] for i in range(6)]
    state = book.resume(limit=3, now=at(2))
    assert [a["id"] for a in state["recent_actions"]] == ids[:2:-1]
    assert state["last_action"]["id"] == ids[-1]
    assert state["session"]["action_count"] == 6
    assert state["session"]["status"] == "active"
    with pytest.raises(LoreError, match="limit"):
        book.resume(limit=0)


def test_failed_validation_cleared_by_a_later_success(book: Lorebook) -> None:
    s = book.start_session(session_id="s", now=at(0))
    s.log("validate", outcome="failure", epic="e-1", now=at(1))
    other = s.log("validate", outcome="failure", epic="e-2", now=at(2))
    s.log("validate", outcome="success", epic="e-1", now=at(3))
    state = book.resume(now=at(4))
    assert [a["id"] for a in state["failed_validations"]] == [other["id"]]


def test_deploy_step_for_a_never_deployed_commit(book: Lorebook) -> None:
    s = book.start_session(session_id="s", now=at(0))
    s.log("deploy", epic="e-1", now=at(1), context={"service": "api"})
    s.log("commit", epic="e-1", now=at(2), context={"commit_hash": "abc1234"})
    steps = book.resume(now=at(3))["suggested_next_steps"]
    assert any(step.startswith("Deploy if needed: commit abc1234") for step in steps)
    s.log("deploy", epic="e-1", now=at(4), context={"service": "api"})
    steps = book.resume(now=at(5))["suggested_next_steps"]
    assert not any("Deploy" in step for step in steps)


def test_git_state_and_dirty_paths(committed: Path) -> None:
    book = Lorebook.open(committed, env={})
    book.start_session(session_id="s", now=at(0)).log("plan", now=at(1))
    head = git(committed, "rev-parse", "HEAD").strip()
    state = book.resume(now=at(2))
    git_info = state["git"]
    assert git_info["branch"] == "main"
    assert git_info["head"] == head
    assert git_info["unpushed"] is None  # no upstream
    assert git_info["last_commit"]["hash"] == head
    assert git_info["last_commit"]["subject"] == "lore: init store"
    assert git_info["last_commit"]["author"] == "Test"
    assert all(p.startswith("actionlog/") for p in git_info["dirty"])  # only our own shard
    assert not any("uncommitted" in step for step in state["suggested_next_steps"])

    (committed / "README.md").write_text("# changed\n")
    (committed / "notes.txt").write_text("todo\n")
    (committed / "staged.py").write_text("x = 1\n")
    git(committed, "add", "staged.py")
    git_info = book.resume(now=at(2))["git"]
    own = [p for p in git_info["dirty"] if not p.startswith("actionlog/")]
    assert sorted(own) == ["README.md", "notes.txt", "staged.py"]
    steps = book.resume(now=at(2))["suggested_next_steps"]
    (review,) = [step for step in steps if "uncommitted" in step]
    assert review.startswith("Review 3 uncommitted file(s)")
    for name in ("README.md", "notes.txt", "staged.py"):
        assert name in review


def test_unpushed_commits_with_a_real_upstream(committed: Path, tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    git(committed, "remote", "add", "origin", str(remote))
    git(committed, "push", "-q", "-u", "origin", "main")
    book = Lorebook.open(committed, env={})
    book.start_session(session_id="s", now=at(0)).log("plan", now=at(1))
    state = book.resume(now=at(2))
    assert state["git"]["unpushed"] == 0
    assert not any(step.startswith("Push") for step in state["suggested_next_steps"])

    (committed / "feature.py").write_text("print('hi')\n")
    git(committed, "add", "feature.py")
    git(committed, "commit", "-q", "-m", "feat: greet")
    state = book.resume(now=at(2))
    assert state["git"]["unpushed"] == 1
    assert state["git"]["last_commit"]["subject"] == "feat: greet"
    assert "Push 1 unpushed commit(s) on main." in state["suggested_next_steps"]


def test_outside_git_the_git_state_is_null(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    book = Lorebook.init(root, env={})
    book.start_session(session_id="s", now=at(0)).log("plan", now=at(1))
    assert book.resume(now=at(2))["git"] is None


# -- target choice -------------------------------------------------------------------------------
def _session(
    book: Lorebook,
    sid: str,
    start: float,
    *,
    end: str | None = None,
    agent: str = "PS",
    project: str = "consilio",
) -> None:
    s = book.start_session(session_id=sid, agent=agent, project=project, now=at(start))
    s.log("plan", now=at(start + 1))
    if end:
        book.end_session(sid, reason=end, agent=agent, project=project, now=at(start + 2))


def test_prefers_an_older_disconnected_session_over_a_newer_ended_one(book: Lorebook) -> None:
    _session(book, "old-disconnected", 0)
    _session(book, "new-ended", 120, end="normal")
    state = book.resume(now=at(300))
    assert state["session"]["id"] == "old-disconnected"
    assert state["session"]["status"] == "disconnected"


def test_a_session_ended_by_an_error_counts_as_unfinished(book: Lorebook) -> None:
    _session(book, "old-error", 0, end="error")
    _session(book, "new-ended", 120, end="normal")
    assert book.resume(now=at(300))["session"]["id"] == "old-error"


def test_all_ended_gives_the_newest(book: Lorebook) -> None:
    _session(book, "first", 0, end="normal")
    _session(book, "second", 60, end="normal")
    _session(book, "third", 30, end="normal")
    state = book.resume(now=at(300))
    assert state["session"]["id"] == "second"
    assert state["session"]["status"] == "ended"
    assert state["session"]["end_reason"] == "normal"


def test_project_agent_and_session_filters(book: Lorebook) -> None:
    _session(book, "ps-consilio", 0)
    _session(book, "ms-consilio", 10, agent="MS")
    _session(book, "ps-other", 20, project="other")
    _session(book, "ps-consilio-ended", 30, end="normal")
    assert book.resume(now=at(300))["session"]["id"] == "ps-other"
    assert book.resume(project="consilio", now=at(300))["session"]["id"] == "ms-consilio"
    assert (
        book.resume(project="consilio", agent="PS", now=at(300))["session"]["id"] == "ps-consilio"
    )
    assert book.resume(agent="MS", now=at(300))["session"]["id"] == "ms-consilio"
    assert (
        book.resume(session="ps-consilio-ended", now=at(300))["session"]["id"]
        == "ps-consilio-ended"
    )
    with pytest.raises(LoreError, match="no session to resume for project 'nope'"):
        book.resume(project="nope", now=at(300))
    with pytest.raises(LoreError, match="'unknown'"):
        book.resume(session="unknown", now=at(300))


def test_session_spanning_two_utc_days(book: Lorebook) -> None:
    for offset, sid in enumerate((None, "night-shift")):
        night = datetime(2026, 3, 4, 23, 50 + offset, tzinfo=UTC)
        s = book.start_session(session_id=sid, agent="PS", now=night)
        ids = [
            s.log("plan", now=night + timedelta(minutes=5))["id"],
            s.log("commit", now=night + timedelta(minutes=20))["id"],
            s.log(
                "spawn",
                outcome="in_progress",
                context={"agent_id": "x"},
                now=night + timedelta(minutes=30),
            )["id"],
        ]
        days = sorted(
            p.parent.relative_to(book.layout.actionlog).as_posix()
            for p in book.layout.actionlog.rglob(f"{s.id}.jsonl")
        )
        assert days == ["2026/03/04", "2026/03/05"]
        state = book.resume(session=s.id, now=night + timedelta(hours=1))
        assert [a["id"] for a in state["recent_actions"]] == ids[::-1]
        assert state["session"]["started"] == format_ts(night)
        assert state["session"]["action_count"] == 3
        assert [a["id"] for a in state["open_actions"]] == [ids[2]]
        chosen = book.resume(now=night + timedelta(hours=1))
        assert chosen["session"]["id"] == s.id
        assert len(chosen["recent_actions"]) == 3


def test_a_just_started_empty_session_does_not_shadow_the_unfinished_one(book: Lorebook) -> None:
    _session(book, "unfinished", 0)
    book.start_session(session_id="just-started", now=at(200))
    assert book.resume(now=at(201))["session"]["id"] == "unfinished"
    assert book.resume(session="just-started", now=at(201))["session"]["action_count"] == 0


# -- the CLI ---------------------------------------------------------------------------------------
def test_resume_cli_json_and_markdown(committed: Path) -> None:
    book = Lorebook.open(committed, env={})
    now = datetime.now(UTC)
    s = book.start_session(
        session_id="s-cli", agent="PS", project="consilio", now=now - timedelta(hours=2)
    )
    s.log(
        "validate",
        outcome="failure",
        epic="epic-9",
        error="1 test failed",
        now=now - timedelta(hours=1, minutes=59),
    )
    s.log(
        "spawn",
        outcome="in_progress",
        epic="epic-9",
        now=now - timedelta(hours=1, minutes=58),
        context={"agent_id": "fix-1", "subagent_type": "fix"},
    )
    result = lore("resume", "--project", "consilio", "--json", env=clean_env(committed))
    assert result.code == 0, result.err
    state = json.loads(result.out)
    assert state["session"]["id"] == "s-cli"
    assert state["session"]["status"] == "disconnected"
    assert state["open_actions"][0]["context"]["agent_id"] == "fix-1"

    brief = cli_run(["--root", str(committed), "resume", "--limit", "1"])
    assert brief.code == 0, brief.err
    lines = brief.out.splitlines()
    assert lines[2] == "Resume: session s-cli"  # after the notice and the opening delimiter
    for heading in (
        "Open (never closed):",
        "Failed validations:",
        "Suggested next steps:",
        "Repository:",
        "Last 1 actions (newest first):",
    ):
        assert heading in lines
    assert "status **disconnected**" in brief.out
    assert "1. Check the status of subagent fix-1" in brief.out
    assert "- Unpushed commits: no upstream" in lines


def test_resume_cli_errors(store: Path) -> None:
    assert_one_error_line(cli_run(["--root", str(store), "resume"]), "no session to resume")
    assert_one_error_line(
        lore("resume", "--project", "ghost", env=clean_env(store)),
        "no session to resume for project 'ghost'",
    )
    Lorebook.open(store, env={}).log("plan", session="s")
    assert_one_error_line(cli_run(["--root", str(store), "resume", "--limit", "0"]), "limit")
    result = cli_run(["--root", str(store), "resume", "--limit", "0", "--json"])
    assert result.code == 1 and "limit" in json.loads(result.err)["error"]


def test_resume_from_a_fresh_clone(committed: Path, tmp_path: Path) -> None:
    book = Lorebook.open(committed, env={})
    now = datetime.now(UTC).replace(microsecond=0)
    _story(book, now - timedelta(hours=5))  # disconnected
    s = book.start_session(
        session_id="s-ended", agent="PS", project="consilio", now=now - timedelta(minutes=20)
    )
    s.log("plan", now=now - timedelta(minutes=19))
    book.end_session("s-ended", agent="PS", project="consilio", now=now - timedelta(minutes=18))
    commit_all(committed, "lore: action log")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(committed), str(clone)], check=True)
    assert not (clone / ".lore" / "cache").exists()

    original = book.resume(now=now)
    cloned = Lorebook.open(clone, env={}).resume(now=now)
    assert cloned["session"]["id"] == "s-story"
    for key in (
        "session",
        "last_action",
        "recent_actions",
        "epic",
        "work_in_progress",
        "open_actions",
        "failed_validations",
    ):
        assert cloned[key] == original[key], key
    for key in ("branch", "head", "dirty", "last_commit"):
        assert cloned["git"][key] == original["git"][key], key
    assert original["git"]["dirty"] == []
    assert (original["git"]["unpushed"], cloned["git"]["unpushed"]) == (None, 0)

    via_cli = lore("resume", "--json", cwd=clone)
    assert via_cli.code == 0, via_cli.err
    state = json.loads(via_cli.out)
    assert state["session"]["id"] == "s-story"
    assert [a["id"] for a in state["open_actions"]] == [a["id"] for a in original["open_actions"]]


def test_resume_project_filter_uses_the_sessions_identity(store: Path) -> None:
    """Actions logged into an explicit session inherit the identity it was started with."""
    env = clean_env(store)
    sid = lore("session", "start", "--agent", "PS", "--project", "consilio", env=env).out.strip()
    env["LORE_SESSION"] = sid
    assert lore("log", "spawn", "--outcome", "in_progress", env=env).code == 0
    del env["LORE_SESSION"]
    listed = json.loads(lore("sessions", "--project", "consilio", "--json", env=env).out)
    assert [s["id"] for s in listed] == [sid]
    result = lore("resume", "--project", "consilio", "--json", env=env)
    assert result.code == 0, result.err
    assert json.loads(result.out)["session"]["id"] == sid


def test_resume_skips_unreadable_lines_with_a_warning(committed: Path) -> None:
    book = Lorebook.open(committed, env={})
    ids = _story(book, datetime.now(UTC) - timedelta(hours=1))
    shard = max((committed / "actionlog").rglob("s-story.jsonl"))
    with shard.open("a") as handle:
        handle.write('{"v":1,"kind":"action","id":"01')  # a writer died mid-line
    result = cli_run(["--root", str(committed), "resume", "--json"])
    assert result.code == 0, result.err
    state = json.loads(result.out)
    assert state["last_action"]["id"] == ids["spawn"]
    rel = shard.relative_to(committed).as_posix()
    assert result.err.startswith(f"lore: warning: skipped {rel}:6: torn line at end of file")
