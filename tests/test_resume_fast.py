"""`lore resume` at catalog speed: the sessions table and the shards' tails give the same answer,
git is asked only for what resume shows, and the plain path imports no click, torch or chromadb."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from conftest import clean_env, git, lore
from lorebook import Lorebook
from lorebook.git.binary import git_state
from lorebook.log import resume_state

T0 = datetime(2026, 2, 1, 9, 0, tzinfo=UTC)
AGENTS = ("claude", "codex", "gemini")
PROJECTS = ("consilio", "lorebook")
TYPES = ("commit", "plan", "validate", "spawn", "tool_call", "deploy")


def _generate(book: Lorebook, seed: int, sessions: int = 14) -> datetime:
    """Sessions over several days: ended normally, ended with an error, left active (recent)
    or disconnected (old, never ended), some with nothing done; returns the last time used."""
    rng = random.Random(seed)
    when = T0
    for n in range(sessions):
        when += timedelta(hours=rng.choice((1, 5, 20, 30)))
        agent, project = rng.choice(AGENTS), rng.choice(PROJECTS)
        current = book.start_session(agent=agent, project=project, now=when)
        for _ in range(rng.randrange(0, 6)):
            when += timedelta(minutes=rng.randrange(1, 40))
            outcome = rng.choice(("success", "success", "failure", "in_progress"))
            book.log(
                rng.choice(TYPES),
                session=current.id,
                outcome=outcome,
                epic=rng.choice((None, "epic-7", "epic-9")),
                now=when,
            )
        ending = rng.choice(("normal", "error", None, None))
        if ending is not None:
            when += timedelta(minutes=3)
            book.end_session(current.id, reason=ending, now=when)
        if n % 5 == 4:  # a second session open at the same time, in another day directory
            book.log("tool_call", session=current.id, now=when + timedelta(days=1))
    return when


def _no_tail_reading(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("the shards' tails were read although the catalog is fresh")


def _answers(book: Lorebook, now: datetime) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for project in (None, *PROJECTS, "nowhere"):
        for agent in (None, *AGENTS):
            try:
                out[f"{project}/{agent}"] = book.resume(project=project, agent=agent, now=now)
            except Exception as exc:
                out[f"{project}/{agent}"] = f"{type(exc).__name__}: {exc}"
    return out


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_catalog_and_shard_tails_choose_the_same_session(
    store: Path, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    book = Lorebook.open(store, env={})
    last = _generate(book, seed)
    statuses: set[str] = set()
    for now in (last + timedelta(minutes=5), last + timedelta(days=3)):  # active, disconnected
        assert not book.catalog.catalog.exists()
        from_tails = _answers(book, now)
        assert book.catalog.open(create=True) is not None
        with monkeypatch.context() as patch:  # the catalog answers alone
            patch.setattr(resume_state, "find_candidates", _no_tail_reading)
            from_catalog = _answers(Lorebook.open(store, env={}), now)
        assert from_catalog == from_tails
        statuses.update(a["session"]["status"] for a in from_tails.values() if isinstance(a, dict))
        book.catalog.catalog.path.unlink()
    assert {"disconnected", "ended"} <= statuses  # and "active" for some seeds


def test_catalog_answer_follows_appends_made_after_it_was_built(store: Path) -> None:
    """A catalog older than the shards is synced before it answers."""
    book = Lorebook.open(store, env={})
    last = _generate(book, 5, sessions=6)
    assert book.catalog.open(create=True) is not None
    newer = book.start_session(agent="late", project="consilio", now=last + timedelta(hours=1))
    book.log("commit", session=newer.id, outcome="in_progress", now=last + timedelta(hours=2))
    answer = Lorebook.open(store, env={}).resume(now=last + timedelta(hours=2))
    assert answer["session"]["id"] == newer.id
    book.catalog.catalog.path.unlink()
    assert Lorebook.open(store, env={}).resume(now=last + timedelta(hours=2)) == answer


def test_resume_never_builds_a_catalog(store: Path) -> None:
    """Resume must cost what the newest shards cost: without a catalog it reads their tails."""
    book = Lorebook.open(store, env={})
    _generate(book, 6, sessions=3)
    result = lore("resume", "--json", env=clean_env(store))
    assert result.code == 0, result.err
    assert not (store / ".lore" / "cache" / "catalog.sqlite").exists()


def test_cli_answer_is_the_same_with_and_without_a_catalog(store: Path) -> None:
    book = Lorebook.open(store, env={})
    _generate(book, 7)
    without = lore("resume", "--json", env=clean_env(store))
    assert without.code == 0, without.err
    assert lore("catalog", env=clean_env(store)).code == 0
    with_catalog = lore("resume", "--json", env=clean_env(store))
    assert with_catalog.code == 0, with_catalog.err
    assert json.loads(with_catalog.out) == json.loads(without.out)


# -- git -------------------------------------------------------------------------------------
def test_git_state_leaves_the_log_out_and_keeps_everything_else(store: Path) -> None:
    book = Lorebook.open(store, env={})
    book.log("commit", now=T0)
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", "log")
    (store / "README.md").write_text("# changed\n")  # tracked, modified
    (store / "notes.txt").write_text("new\n")  # untracked file
    (store / "newdir").mkdir()
    (store / "newdir" / "a.py").write_text("x = 1\n")  # untracked directory, shown collapsed
    (store / "empty").mkdir()  # an empty directory is not a change
    (store / "ignored.log").write_text("x\n")
    (store / ".gitignore").write_text("*.log\n")
    for shard in (store / "actionlog").rglob("*.jsonl"):
        shard.write_text(shard.read_text() + "\n")  # the log's own changes are left out
    (store / "actionlog" / "stray.txt").write_text("x\n")
    fast = git_state(store, exclude=("actionlog",))
    full = git_state(store, exclude=("actionlog/", "nested/never"))  # the single-status path
    assert fast is not None and full is not None
    assert (
        sorted(fast["dirty"])
        == sorted(full["dirty"])
        == [".gitignore", "README.md", "newdir/", "notes.txt"]
    )
    assert fast == {**full, "dirty": fast["dirty"]}
    assert fast["branch"] == "main" and fast["last_commit"]["subject"] == "log"


def test_git_state_reports_a_deleted_tracked_directory(store: Path) -> None:
    (store / "src").mkdir()
    (store / "src" / "a.py").write_text("x = 1\n")
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", "src")
    (store / "src" / "a.py").unlink()
    (store / "src").rmdir()
    state = git_state(store, exclude=("actionlog",))
    assert state is not None and state["dirty"] == ["src/a.py"]


def test_git_state_outside_a_repository_is_none(tmp_path: Path) -> None:
    assert git_state(tmp_path, exclude=("actionlog",)) is None


# -- what the cold path imports --------------------------------------------------------------
WRAPPER = """
import json, sys
import lorebook.cli
code = lorebook.cli.main(sys.argv[1:])
sys.stdout.flush()
print("\\n" + json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def _run(root: Path, *args: str) -> tuple[int, str, set[str]]:
    done = subprocess.run(
        [sys.executable, "-c", WRAPPER, *args],
        capture_output=True,
        text=True,
        env=clean_env(root),
        timeout=60,
    )
    lines = done.stdout.rstrip("\n").splitlines()
    report = json.loads(lines[-1])
    return report["code"], "\n".join(lines[:-2]), {m.split(".")[0] for m in report["modules"]}


def test_resume_json_imports_neither_torch_nor_chromadb(store: Path) -> None:
    book = Lorebook.open(store, env={})
    _generate(book, 8, sessions=3)
    code, out, modules = _run(store, "resume", "--json")
    assert code == 0
    assert json.loads(out)["session"]["id"]
    assert modules & {"torch", "chromadb", "sentence_transformers", "onnxruntime"} == set()


def test_resume_fast_path_imports_no_click(store: Path) -> None:
    book = Lorebook.open(store, env={})
    _generate(book, 9, sessions=3)
    for args in (("resume", "--json"), ("resume",), ("resume", "--limit", "3", "--json")):
        code, out, modules = _run(store, *args)
        assert code == 0, out
        assert "click" not in modules, args
        assert out.strip()


@pytest.mark.parametrize(
    "args",
    [
        ["--json"],
        [],
        ["--limit=2"],
        ["--project", "consilio", "--json"],
        ["--agent", "codex"],
        ["--project", "nowhere", "--json"],
        ["--project", "nowhere"],
        ["--session", "NOPE", "--json"],
    ],
)
def test_the_root_option_prints_the_same(store: Path, args: list[str]) -> None:
    book = Lorebook.open(store, env={})
    _generate(book, 10, sessions=8)
    fast = lore("resume", *args, env=clean_env(store))
    # the same command with the store named by `--root` instead of LORE_ROOT
    slow = lore("--root", str(store), "resume", *args, env=clean_env())
    assert (fast.code, fast.out, fast.err) == (slow.code, slow.out, slow.err)


def test_odd_arguments_are_answered(store: Path) -> None:
    for args, needle in (
        (["--limit", "0"], "--limit"),
        (["--bogus"], "--bogus"),
        (["extra"], "extra"),
    ):
        result = lore("resume", *args, env=clean_env(store))
        assert result.code != 0 and needle in result.err, (args, result.err)
    helped = lore("resume", "--help", env=clean_env(store))
    assert helped.code == 0 and "--limit" in helped.out and "\\b" not in helped.out


# -- relevant learnings ------------------------------------------------------------------------
def _session_about_tokens(store: Path) -> None:
    book = Lorebook.open(store, env={})
    current = book.start_session(agent="claude", project="consilio", now=T0)
    book.log(
        "validate",
        session=current.id,
        outcome="failure",
        epic="epic-12",
        error="refresh token reuse is not detected",
        now=T0 + timedelta(minutes=5),
    )


def _learnings(store: Path) -> None:
    from search_fixtures import write_learning

    (store / ".lore" / "config.yaml").write_text("embedding:\n  enabled: false\n")
    write_learning(
        store,
        "2026-01-10-refresh-tokens-single-use",
        title="A refresh token must be single-use",
        created="2026-01-10",
        category="security",
        severity="high",
        body="## Key Takeaway\nRotate refresh tokens and detect reuse.",
    )
    write_learning(
        store,
        "2026-01-11-port-conflict",
        title="Deploy failed on a busy port",
        created="2026-01-11",
        category="deploy",
        severity="low",
        body="## Key Takeaway\nFree port 5000 before deploying.",
    )
    write_learning(
        store,
        "2026-01-12-token-draft",
        folder="learnings/drafts",
        status="draft",
        title="Refresh token reuse draft",
        created="2026-01-12",
        category="security",
        severity="low",
        body="## Key Takeaway\nrefresh token reuse detected",
    )


def test_resume_lists_the_learnings_relevant_to_the_session(store: Path) -> None:
    _session_about_tokens(store)
    _learnings(store)
    before = lore("resume", "--json", env=clean_env(store))
    assert before.code == 0 and before.json()["learnings"] == []  # no index yet: none
    assert lore("index", env=clean_env(store)).code == 0
    code, out, modules = _run(store, "resume", "--json")
    assert code == 0
    found = json.loads(out)["learnings"]
    assert [item["id"] for item in found] == ["2026-01-10-refresh-tokens-single-use"]  # no draft
    assert found[0]["title"] == "A refresh token must be single-use"
    assert (
        modules & {"torch", "chromadb", "sentence_transformers", "onnxruntime", "click", "pydantic"}
        == set()
    )
    brief = lore("resume", env=clean_env(store))
    assert "Relevant learnings:" in brief.out.splitlines()
    assert "`lore show 2026-01-10-refresh-tokens-single-use`" in brief.out


def test_a_damaged_index_leaves_the_learnings_out_without_failing(store: Path) -> None:
    _session_about_tokens(store)
    folder = store / ".lore" / "cache" / "index"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "manifest.json").write_text("{not json")
    result = lore("resume", "--json", env=clean_env(store))
    assert result.code == 0, result.err
    assert result.json()["learnings"] == []
