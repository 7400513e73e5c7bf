"""`lore demo [DIR]`: a realistic sample store whose resume points at the disconnected session."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import assert_one_error_line, clean_env, cli_run, git, lore
from lorebook import Lorebook
from lorebook.model import INTERNAL_TYPES

DEMO_TOKEN = "ghp_4f9Qz8LmN2pR7sT1uV3wX5yZ6aB8cD0eF2gH"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    target = tmp_path_factory.mktemp("demo") / "consilio"
    result = lore("demo", str(target), "--json", env=clean_env())
    assert result.code == 0, result.err
    return target, json.loads(result.out)


def test_json_shape(demo: tuple[Path, dict[str, Any]]) -> None:
    root, data = demo
    assert set(data) == {
        "root",
        "sessions",
        "resume",
        "expertise",
        "learnings",
        "drafts",
        "stale",
        "report",
        "search",
        "preflight",
    }
    assert data["root"] == str(root.resolve())


def summary_types(report: dict[str, Any]) -> list[str]:
    return [row["type"] for row in report["by_type"]]


def test_report_summary_of_the_demo_week(demo: tuple[Path, dict[str, Any]]) -> None:
    root, data = demo
    summary = data["report"]["summary"]
    # lorebook's own bookkeeping (drafts, searches, ...) is not counted as activity
    everything = Lorebook.open(root, env={}).report(days=7, include_internal=True)
    assert everything["summary"]["total_actions"] == sum(
        s["action_count"] for s in data["sessions"]
    )
    assert 0 < summary["total_actions"] <= everything["summary"]["total_actions"]
    assert not set(summary_types(data["report"])) & set(INTERNAL_TYPES)
    assert summary["active_projects"] == ["consilio"]
    assert data["report"]["deployments"]["total"] >= 1
    assert data["report"]["recent_failures"]


def test_the_finished_session_taught_its_domain(demo: tuple[Path, dict[str, Any]]) -> None:
    root, data = demo
    learned = data["expertise"]
    assert learned["domain"] == "api" and learned["completed"] is True
    assert learned["committed"]
    text = (root / ".expertise" / "api.yaml").read_text(encoding="utf-8")
    assert "address already in use (port 5000)" in text
    assert "after mcp_meta_allocate_port, deploy succeeded" in text
    assert "  - src/api/ratelimit.py\n" in text
    history = lore("expertise", "history", "api", "--json", env=clean_env(root))
    assert json.loads(history.out)[0]["subject"] == "lore(expertise): api: 3 changes"


def test_sessions_over_several_days(demo: tuple[Path, dict[str, Any]]) -> None:
    _, data = demo
    sessions = data["sessions"]
    assert len(sessions) >= 3
    assert len({s["started"][:10] for s in sessions}) >= 3
    statuses = [s["status"] for s in sessions]
    assert statuses.count("disconnected") == 1
    assert statuses[0] == "disconnected"  # the most recently active
    assert all(s == "ended" for s in statuses[1:])
    assert {s["agent"] for s in sessions} >= {"PS"}
    assert all(s["action_count"] > 0 for s in sessions)


def test_resume_targets_the_disconnected_session(demo: tuple[Path, dict[str, Any]]) -> None:
    _, data = demo
    resume = data["resume"]
    disconnected = next(s for s in data["sessions"] if s["status"] == "disconnected")
    assert resume["session"]["id"] == disconnected["id"]
    assert resume["session"]["status"] == "disconnected"
    assert resume["session"]["project"] == "consilio"
    assert resume["epic"] == "epic-012"
    (running,) = resume["open_actions"]
    assert (running["type"], running["outcome"]) == ("spawn", "in_progress")
    assert running["context"]["agent_id"] == "fix-42"
    (failed,) = resume["failed_validations"]
    assert (failed["type"], failed["outcome"], failed["epic"]) == (
        "validate",
        "failure",
        "epic-012",
    )
    assert "fix-42" in resume["work_in_progress"]
    steps = resume["suggested_next_steps"]
    assert any("fix-42" in step for step in steps)
    assert any("re-validate" in step and "epic-012" in step for step in steps)
    assert resume["last_action"]["id"] == running["id"]
    assert "src/auth/tokens.py" in resume["git"]["dirty"]  # the fix subagent's work in progress


def test_files_in_the_sample_repository(demo: tuple[Path, dict[str, Any]]) -> None:
    root, _ = demo
    assert (root / ".git").is_dir()
    assert len(git(root, "log", "--oneline").splitlines()) >= 4
    assert list((root / "learnings").glob("*.md"))
    assert list((root / "learnings" / "drafts").glob("*.md"))
    assert list((root / ".expertise").glob("*.yaml"))
    assert (root / ".lore" / "config.yaml").is_file()
    day_dirs = {p.parent for p in (root / "actionlog").rglob("*.jsonl")}
    assert len(day_dirs) >= 3


def test_demo_shards_pass_check_and_hold_no_token(demo: tuple[Path, dict[str, Any]]) -> None:
    root, _ = demo
    shards = list((root / "actionlog").rglob("*.jsonl"))
    assert shards
    for shard in shards:
        assert DEMO_TOKEN not in shard.read_text(encoding="utf-8"), shard
    # the token was logged (and redacted) inside a command
    actions = Lorebook.open(root, env={}).actions(type="tool_call", limit=None)
    commands = [a["context"].get("command") for a in actions if "command" in a["context"]]
    assert commands and all("REDACTED" in c and "./deploy.sh" in c for c in commands)
    assert lore("check", env=clean_env(root)).code == 0
    # and it is not in the git history either
    assert DEMO_TOKEN not in git(root, "log", "-p", "--all")


def test_lore_commands_work_in_the_demo(demo: tuple[Path, dict[str, Any]]) -> None:
    root, data = demo
    result = lore("resume", "--project", "consilio", "--json", cwd=root)
    assert result.code == 0, result.err
    assert json.loads(result.out)["session"]["id"] == data["resume"]["session"]["id"]


def test_human_output(tmp_path: Path) -> None:
    target = tmp_path / "human"
    result = cli_run(["demo", str(target)])
    assert result.code == 0, result.err
    assert result.out.startswith(f"Sample store created in {target.resolve()}")
    assert "$ lore sessions" in result.out
    assert "disconnected" in result.out
    assert "$ lore resume --project consilio" in result.out
    assert "Resume: session" in result.out
    assert "fix-42" in result.out
    assert "$ lore expertise learn --session" in result.out
    assert ".expertise/api.yaml: 3 changes" in result.out
    assert "$ lore report --days 7" in result.out
    assert "Success rate: " in result.out and "Active projects: consilio" in result.out


def test_refuses_a_non_empty_directory(tmp_path: Path) -> None:
    target = tmp_path / "busy"
    target.mkdir()
    (target / "keep.txt").write_text("mine\n")
    result = lore("demo", str(target))
    assert_one_error_line(result, str(target), "not empty")
    assert [p.name for p in target.iterdir()] == ["keep.txt"]
    assert (target / "keep.txt").read_text() == "mine\n"


def test_refuses_a_regular_file(tmp_path: Path) -> None:
    target = tmp_path / "file.txt"
    target.write_text("x")
    assert_one_error_line(lore("demo", str(target)), str(target))


def test_demo_shows_search_and_preflight(demo: tuple[Path, dict[str, Any]]) -> None:
    _, data = demo
    found = data["search"]
    assert found["query"] == "row level security stops inserts"
    assert found["results"][0]["title"] == "RLS policy blocks INSERT with the anon key"
    brief = data["preflight"]
    assert brief["phase"] == "deploy"
    titles = [item["title"] for item in brief["learnings"]]
    assert "Deploy failed because port 5000 was already allocated" in titles
    assert "RELEVANT PAST LEARNINGS:" in brief["text"]
    assert brief["expertise"] and brief["expertise"][0]["domain"] == "api"
