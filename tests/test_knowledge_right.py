"""Knowledge that is right: preflight ranks a pattern's solutions by their own outcomes, a
trend needs evidence, preflight never prints an empty takeaway, `lore stale` gates CI, one
automatic draft per trigger, expertise learned from a session's own work into a domain it is
about."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from conftest import clean_env, cli_run, lore, stored_actions
from lorebook import Lorebook
from lorebook.knowledge.stats import trend
from lorebook.timeutil import format_ts
from search_fixtures import open_book, write_learning

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
TASK = "deploy the api container, port conflict risk"


def _pattern(root: Path, solutions: list[str]) -> None:
    write_learning(
        root,
        "pat-port",
        kind="pattern",
        category="deployment",
        severity="high",
        created="2026-11-01",
        title="Port conflict when deploying the api container",
        solutions=[{"id": f"s{i}", "text": t} for i, t in enumerate(solutions, 1)],
        prevention=["Check which ports are taken before deploying"],
    )


def _record(root: Path, outcomes: dict[str, tuple[int, int]]) -> None:
    book = open_book(root)
    for solution, (successes, total) in outcomes.items():
        for i in range(total):
            book.knowledge.record(
                "pat-port",
                solution=solution,
                success=i < successes,
                minutes=5,
                via_search=False,
                session="s",
            )


def _preflight(root: Path) -> dict[str, Any]:
    result = cli_run(
        ["preflight", TASK, "--phase", "deploy", "--json"], env={"LORE_ROOT": str(root)}
    )
    assert result.code == 0, result.err
    data = result.json()
    assert isinstance(data, dict)
    return data


def _pattern_of(data: dict[str, Any]) -> dict[str, Any]:
    [found] = [p for p in data["patterns"] if p["id"] == "pat-port"]
    return found


def test_preflight_recommends_the_solution_that_worked(search_store: Path) -> None:
    _pattern(search_store, ["Allocate ports from a registry", "Stop the old container first"])
    _record(search_store, {"s2": (2, 2), "s1": (0, 1)})
    data = _preflight(search_store)
    pattern = _pattern_of(data)
    assert pattern["best_solution"] == "Stop the old container first"
    assert [s["id"] for s in pattern["solutions"]] == ["s2", "s1"]
    assert "best solution: Stop the old container first (2/2 succeeded, 100%)" in data["text"]
    assert "also s1: Allocate ports from a registry (0/1 succeeded, 0%)" in data["text"]
    assert "67%" not in data["text"]  # the pattern-wide rate is not any solution's


def test_one_success_does_not_beat_nine_of_ten(search_store: Path) -> None:
    _pattern(search_store, ["Allocate ports from a registry", "Stop the old container first"])
    _record(search_store, {"s1": (1, 1), "s2": (9, 10)})
    pattern = _pattern_of(_preflight(search_store))
    assert [s["id"] for s in pattern["solutions"]] == ["s2", "s1"]
    assert (
        pattern["solutions"][0]["times_successful"],
        pattern["solutions"][0]["times_applied"],
    ) == (9, 10)


def test_no_evidence_is_unproven(search_store: Path) -> None:
    _pattern(search_store, ["Allocate ports from a registry"])
    data = _preflight(search_store)
    assert _pattern_of(data)["success_rate"] is None
    assert "best solution: Allocate ports from a registry (unproven)" in data["text"]


def test_preflight_omits_an_empty_takeaway(search_store: Path) -> None:
    write_learning(
        search_store,
        "bare",
        title="Port 5000 conflict on deploy",
        category="deployment",
        severity="high",
        created="2026-11-01",
        body="## Problem\nPort 5000 taken.\n",
    )
    data = _preflight(search_store)
    assert any(item["id"] == "bare" and not item["takeaway"] for item in data["learnings"])
    assert "- Port 5000 conflict on deploy\n" in data["text"]
    assert "Port 5000 conflict on deploy: " not in data["text"]


def test_a_burst_in_one_minute_is_not_a_trend() -> None:
    times = [format_ts(NOW - timedelta(seconds=s)) for s in (5, 20, 40)]
    assert trend(times, NOW) == "not enough data"


def test_a_rising_weekly_series_is_increasing() -> None:
    days = [50, 20, 12, 9, 5, 3, 1]  # one in the earlier 30 days, six spread over recent weeks
    assert trend([format_ts(NOW - timedelta(days=d)) for d in days], NOW) == "increasing"


def test_many_in_one_week_is_not_enough() -> None:
    times = [format_ts(NOW - timedelta(hours=h)) for h in range(1, 10)]
    assert trend(times, NOW) == "not enough data"


def test_rank_solutions_uses_a_prior_and_keeps_documented_order_on_ties() -> None:
    from lorebook.knowledge.stats import SolutionFigures, rank_solutions

    documented = [{"id": f"s{i}", "text": f"fix {i}"} for i in (1, 2, 3, 4)]
    figures = {
        "s1": SolutionFigures(1, 1),
        "s2": SolutionFigures(10, 9),
        "s4": SolutionFigures(1, 0),
    }
    ranked = rank_solutions(documented, figures)
    assert [s["id"] for s in ranked] == ["s2", "s1", "s3", "s4"]  # 0.83, 0.67, 0.5, 0.33
    assert ranked[2]["times_applied"] == 0 and ranked[2]["success_rate"] is None


# -- one draft per trigger (epic, issue, validation streak) --------------------------------------
def _drafts(root: Path) -> list[str]:
    return sorted(p.stem for p in (root / "learnings" / "drafts").glob("*.md"))


def _epic_work(book: Lorebook, epic: str, *, error: str) -> None:
    book.log("plan", session="s", epic=epic, context={"title": "Authentication"})
    book.log("validate", session="s", epic=epic, outcome="failure", error=error)
    book.log("commit", session="s", epic=epic, context={"message": f"fix {error}"})


def test_one_epic_completed_twice_gives_one_draft(book: Lorebook) -> None:
    _epic_work(book, "epic-012", error="refresh token accepted twice")
    book.log("epic_complete", session="s", epic="epic-012")
    [first] = _drafts(book.root)
    assert first.startswith("auto-epic-012-")
    # more work, then the epic is marked complete again: a different text, still the same trigger
    _epic_work(book, "epic-012", error="cookie domain wrong behind the proxy")
    book.log("epic_complete", session="s", epic="epic-012")
    assert _drafts(book.root) == [first]
    blocked = [
        a
        for a in stored_actions(book.root)
        if a["type"] == "learning_draft" and a["outcome"] == "blocked"
    ]
    assert blocked[-1]["error"] == f"epic:epic-012 was drafted before as {first}: not written"


def test_no_new_draft_once_the_first_was_promoted_or_rejected(book: Lorebook) -> None:
    _epic_work(book, "epic-1", error="refresh token accepted twice")
    book.log("epic_complete", session="s", epic="epic-1")
    [first] = _drafts(book.root)
    book.learnings.promote(first)
    _epic_work(book, "epic-2", error="port 5000 already allocated")
    book.log("epic_complete", session="s", epic="epic-2")
    [second] = _drafts(book.root)
    book.learnings.reject(second, reason="not a lesson")
    for epic, error in (("epic-1", "a new failure"), ("epic-2", "another new failure")):
        _epic_work(book, epic, error=error)
        book.log("epic_complete", session="s", epic=epic)
    assert _drafts(book.root) == []
    assert book.learnings.get(first).status == "published"


def test_one_bug_issue_resolved_twice_gives_one_draft(book: Lorebook) -> None:
    resolution = (
        "The login page looped because the session cookie was set for the wrong "
        "domain after the proxy change. We now derive the cookie domain from the "
        "request host and added a regression test for the redirect chain."
    )
    for extra in ("", " Reopened: the fix also needed the proxy header documented."):
        book.log(
            "issue_resolved",
            session="s",
            issue="42",
            context={"labels": ["bug"], "resolution": resolution + extra},
        )
    [draft] = _drafts(book.root)
    assert draft.startswith("auto-issue-42-")


def test_two_processes_completing_one_epic_write_one_draft(store: Path) -> None:
    book = Lorebook.open(store, env={})
    _epic_work(book, "epic-7", error="refresh token accepted twice")
    env = clean_env(store)
    command = [
        sys.executable,
        "-m",
        "lorebook",
        "log",
        "epic_complete",
        "--epic",
        "epic-7",
        "--session",
    ]
    runs = [
        subprocess.Popen(
            [*command, f"p{i}"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for i in range(4)
    ]
    for run in runs:
        _, err = run.communicate(timeout=120)
        assert run.returncode == 0, err
    [draft] = _drafts(store)
    assert draft.startswith("auto-epic-7-")
    outcomes = sorted(a["outcome"] for a in stored_actions(store) if a["type"] == "learning_draft")
    assert outcomes == ["blocked", "blocked", "blocked", "success"]


def test_one_validation_streak_drafts_once(book: Lorebook) -> None:
    from lorebook.knowledge.triggers import on_failed_validate

    failures = [
        book.log("validate", session="s", epic="e-1", outcome="failure", error=f"check {i}")
        for i in range(3)
    ]
    [draft] = _drafts(book.root)
    again = on_failed_validate(book.knowledge, failures[-1])  # the same streak, counted again
    assert getattr(again, "status", None) == "drafted"
    assert _drafts(book.root) == [draft]


# -- expertise learns from the session's own work, into a domain the session is about -----------
AUTH_FILES = {
    "src/auth/tokens.py": "def rotate(token): ...\n",
    "src/auth/jwt.py": "ALGORITHM = 'RS256'\n",
    "tests/test_tokens.py": "def test_rotate(): ...\n",
}
DRAFT_TITLE = "Add an index to the orders table before the schema migration"


def _project(store: Path) -> Lorebook:
    for rel, text in AUTH_FILES.items():
        (store / rel).parent.mkdir(parents=True, exist_ok=True)
        (store / rel).write_text(text)
    return Lorebook.open(store, env={})


def _tool(s: Any, name: str, **context: Any) -> None:
    s.log("tool_call", context={"tool": name, **context})


def test_an_auth_session_is_learned_from_its_own_work_only(store: Path) -> None:
    book = _project(store)
    with book.session(session_id="auth-1") as s:
        _tool(s, "Read", file_path=str(store / "src/auth/tokens.py"))
        s.log("apply_learning", outcome="failure")  # lorebook's bookkeeping, without an error
        _tool(s, "Edit", file_path=str(store / "src/auth/tokens.py"))
        _tool(s, "Edit", file_path="src/auth/jwt.py")
        _tool(s, "Bash", command="pytest -q")
        s.log("commit", context={"files": ["src/auth/tokens.py", "tests/test_tokens.py"]})
        s.log("search", context={"query": "database index migration", "results": []})
        s.log("learning_draft", context={"title": DRAFT_TITLE, "learning": "auto-x"})
    result = book.expertise.learn("auth-1", commit=False)
    assert result["domain"] == "security"
    assert result["action_count"] == 5  # the work, not the search, draft or application
    assert not (store / ".expertise" / "database.yaml").exists()
    content = book.expertise.get("security")
    assert content["core_files"] == [
        "src/auth/tokens.py",
        "src/auth/jwt.py",
        "tests/test_tokens.py",
    ]
    assert not content.get("learned_from_failures")  # "unknown error" is no lesson
    [technique] = content["successful_techniques"]
    assert DRAFT_TITLE not in technique and "learning_draft" not in technique
    assert technique.startswith("completed task: Read → Edit → test → commit")


def test_learning_refuses_a_domain_with_too_little_evidence(store: Path) -> None:
    book = _project(store)
    with book.session(session_id="weak-1") as s:
        s.log("plan", context={"task": "tidy the orders table"})  # one database keyword
    env = clean_env(store)
    result = cli_run(["expertise", "learn", "--session", "weak-1"], env={"LORE_ROOT": str(store)})
    assert result.code == 1 and result.out == ""
    assert result.err.strip().splitlines() == [
        "lore: error: session 'weak-1' not learned: its best domain, database, scores 1 "
        "(matched: table), below expertise.learn_min_score 2; name the domain with --domain, "
        "or add keywords or globs for it under expertise.domains"
    ]
    assert not list((store / ".expertise").glob("*.yaml"))
    chosen = lore(
        "expertise", "learn", "--session", "weak-1", "--domain", "database", "--no-commit", env=env
    )
    assert chosen.code == 0, chosen.err  # a domain named explicitly is the person's choice
    (store / ".lore" / "config.yaml").write_text("expertise:\n  learn_min_score: 1\n")
    again = Lorebook.open(store, env={})
    assert again.expertise.learn("weak-1", commit=False)["domain"] == "database"


def test_a_session_of_bookkeeping_only_teaches_nothing(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (store / ".lore" / "config.yaml").write_text("expertise:\n  learn_on_session_end: true\n")
    book = Lorebook.open(store, env={})
    book.install_subscribers()
    with book.session(session_id="pf-1") as s:
        s.log("search", context={"query": "deploy the docker container", "results": []})
        s.log("learning_draft", context={"title": "Docker deploy release pipeline"})
        _tool(s, "Bash", command="lore preflight 'deploy the docker container'")
    assert not list((store / ".expertise").glob("*.yaml"))
    assert "warning" not in capsys.readouterr().err


def test_on_session_end_a_weak_domain_is_one_warning(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (store / ".lore" / "config.yaml").write_text("expertise:\n  learn_on_session_end: true\n")
    book = Lorebook.open(store, env={})
    book.install_subscribers()
    with book.session(session_id="weak-2") as s:
        s.log("plan", context={"task": "tidy the orders table"})
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("lore: warning: expertise not updated for session weak-2: ")
    assert "its best domain, database, scores 1 (matched: table)" in line
    assert not list((store / ".expertise").glob("*.yaml"))
