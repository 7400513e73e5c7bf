"""A team of clones: shared-session repeats after union merges, concurrent syncs, git's whole
error, and logging while a rebase is paused. Real git (a bare remote and clones), the real `lore`.
"""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from conftest import assert_one_error_line, git, shard_files, stored_actions
from lorebook import Lorebook
from test_sync import env, log_actions, make_team, run


def log_at(root: Path, session: str, count: int, at: datetime) -> None:
    """`log_actions` through the API at one moment (`at` in whole seconds, the lines ms apart):
    the session's lines share one day's shard, where a run of `lore log` calls crossing
    midnight UTC would split them over two."""
    with Lorebook.open(root, env={}) as book:
        book.start_session(session_id=session, now=at)
        for n in range(count):
            book.log("plan", session=session, context={"step": n},
                     now=at + timedelta(milliseconds=n + 1))  # fmt: skip


def repeated_lines(root: Path) -> int:
    total = 0
    for path in shard_files(root):
        lines = path.read_bytes().splitlines()
        total += len(lines) - len(set(lines))
    return total


def sync_ok(root: Path) -> None:
    done = run(root, "sync")
    assert done.code == 0, done.err


# -- case 12: union-merge repeats ------------------------------------------------------------
def sync_at_once(clones: list[Path]) -> list[str]:
    """`lore sync` in every clone, started together; the errors of those that failed."""
    failures: list[str] = []
    gate = threading.Barrier(len(clones))

    def one(clone: Path) -> None:
        gate.wait()
        done = run(clone, "sync")
        if done.code != 0:
            failures.append(done.err)

    threads = [threading.Thread(target=one, args=(c,)) for c in clones]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return failures


def test_three_clones_in_one_shared_session_stay_checkable(tmp_path: Path) -> None:
    _, clones = make_team(tmp_path, [f"c{n}" for n in range(3)])
    failures: list[str] = []
    for step in range(4):  # each round: everyone logs into one session, then all sync at once
        for n, clone in enumerate(clones):
            done = run(
                clone,
                "log",
                "plan",
                "--session",
                "shared",
                "--context",
                json.dumps({"clone": n, "step": step}),
            )
            assert done.code == 0, done.err
        failures += sync_at_once(clones)
    for clone in clones + clones:  # everyone sees everything
        run(clone, "sync")
    ids = {r["id"] for r in stored_actions(clones[0])}
    assert len(ids) == 12
    for clone in clones:
        checked = run(clone, "check")
        assert checked.code == 0, checked.out + checked.err
        assert repeated_lines(clone) == 0
        assert {r["id"] for r in stored_actions(clone)} == ids
        assert git(clone, "status", "--porcelain", "--", "actionlog") == ""
    assert failures == []


def test_check_fix_removes_exact_repeats_and_reports_a_conflicting_pair(store: Path) -> None:
    log_at(store, "sess-a", 3, datetime.now(UTC).replace(microsecond=0))
    (shard,) = shard_files(store)
    lines = shard.read_bytes().splitlines(keepends=True)
    planted = lines + lines[1:3] + [lines[1]]
    shard.write_bytes(b"".join(planted))
    before = run(store, "check", "--json")
    assert before.code == 0, before.out + before.err  # exact repeats are not damage
    fixed = run(store, "check", "--fix")
    assert fixed.code == 0, fixed.out + fixed.err
    assert shard.read_bytes() == b"".join(lines)  # every record, first order, no repeats
    # two different records with one id are still a finding, and --fix keeps both
    other = json.loads(lines[1])
    other["type"] = "deploy"
    changed = json.dumps(other, sort_keys=True, separators=(",", ":")).encode() + b"\n"
    shard.write_bytes(b"".join(lines) + changed)
    again = run(store, "check", "--fix")
    assert again.code == 1
    assert f"duplicate id {other['id']}" in again.out + again.err
    assert shard.read_bytes() == b"".join(lines) + changed


# -- case 13: concurrent syncs and git's whole error -----------------------------------------
def test_concurrent_syncs_all_succeed(tmp_path: Path) -> None:
    _, clones = make_team(tmp_path, [f"c{n}" for n in range(6)])
    failures: list[str] = []
    for step in range(3):
        for n, clone in enumerate(clones):
            done = run(
                clone, "log", "plan", "--session", f"s{n}", "--context", json.dumps({"step": step})
            )
            assert done.code == 0, done.err
        failures += sync_at_once(clones)
    assert failures == []
    sync_ok(clones[0])
    assert len(stored_actions(clones[0])) == 18


def test_a_failed_pull_prints_the_whole_git_error(tmp_path: Path) -> None:
    _, (alice, bob) = make_team(tmp_path, ["c0", "c1"])
    for name in ("first-file.txt", "second-file.txt"):
        (bob / name).write_text("bob's\n")
    git(bob, "add", "-A")
    git(bob, "commit", "-q", "-m", "notes")
    git(bob, "push", "-q")
    for name in ("first-file.txt", "second-file.txt"):
        (alice / name).write_text("alice's, untracked\n")
    log_actions(alice, "sess-a", 1)
    done = run(alice, "sync")
    assert done.code == 1
    assert "Traceback" not in done.err
    assert done.err.startswith("lore: error: ")
    assert "first-file.txt" in done.err and "second-file.txt" in done.err


# -- case 15: logging while a rebase is paused -----------------------------------------------
@pytest.fixture
def paused_rebase(store: Path) -> Path:
    """A store whose shard of `sess-a` is committed, paused in a rebase on a conflict."""
    conflicting_branches(store)
    git(store, "checkout", "-q", "topic")
    stopped = run_git(store, "rebase", "main")
    assert stopped != 0
    assert (store / ".git" / "rebase-merge").exists()
    done = run(store, "log", "plan", "--session", "sess-a", "--context", '{"during": "rebase"}')
    assert done.code == 0, done.err
    return store


def run_git(root: Path, *args: str) -> int:
    import subprocess

    return subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, env=env(root)
    ).returncode


def during(root: Path) -> list[dict[str, object]]:
    return [r for r in stored_actions(root) if r["context"] == {"during": "rebase"}]


def test_a_record_logged_during_a_rebase_survives_abort(paused_rebase: Path) -> None:
    assert run_git(paused_rebase, "rebase", "--abort") == 0
    assert len(during(paused_rebase)) == 1
    assert run(paused_rebase, "check").code == 0


def test_a_record_logged_during_a_rebase_survives_continue(paused_rebase: Path) -> None:
    (paused_rebase / "f.txt").write_text("resolved\n")
    git(paused_rebase, "add", "f.txt")
    assert run_git(paused_rebase, "-c", "core.editor=true", "rebase", "--continue") == 0
    assert not (paused_rebase / ".git" / "rebase-merge").exists()
    assert len(during(paused_rebase)) == 1
    done = run(paused_rebase, "sync")  # folds it into its shard and commits it
    assert done.code == 0, done.err
    assert len(during(paused_rebase)) == 1
    assert git(paused_rebase, "status", "--porcelain", "--", "actionlog") == ""


def test_sync_refuses_during_a_rebase(paused_rebase: Path) -> None:
    head = git(paused_rebase, "rev-parse", "HEAD")
    refused = run(paused_rebase, "sync")
    assert_one_error_line(refused, "rebase", "git rebase --continue", "--abort")
    assert git(paused_rebase, "rev-parse", "HEAD") == head


def conflicting_branches(root: Path) -> None:
    """`main` and `topic` both change f.txt; HEAD on main; the shard of sess-a committed."""
    log_actions(root, "sess-a", 1)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "store")
    (root / "f.txt").write_text("base\n")
    git(root, "add", "f.txt")
    git(root, "commit", "-q", "-m", "base")
    git(root, "checkout", "-q", "-b", "topic")
    (root / "f.txt").write_text("topic\n")
    git(root, "commit", "-q", "-am", "topic")
    git(root, "checkout", "-q", "main")
    (root / "f.txt").write_text("main\n")
    git(root, "commit", "-q", "-am", "main")


@pytest.mark.parametrize(
    ("start", "abort"),
    [
        (("merge", "topic"), ("merge", "--abort")),
        (("cherry-pick", "topic"), ("cherry-pick", "--abort")),
        (("revert", "--no-edit", "HEAD"), ("revert", "--abort")),
    ],
    ids=["merge", "cherry-pick", "revert"],
)
def test_a_record_logged_during_a_paused_operation_survives_its_abort(
    store: Path, start: tuple[str, ...], abort: tuple[str, ...]
) -> None:
    conflicting_branches(store)
    if start[0] == "revert":  # reverting main's change conflicts with a later edit of f.txt
        (store / "f.txt").write_text("later\n")
        git(store, "commit", "-q", "-am", "later")
        start = ("revert", "--no-edit", "HEAD~1")
    assert run_git(store, *start) != 0
    done = run(store, "log", "plan", "--session", "sess-a", "--context", '{"during": "rebase"}')
    assert done.code == 0, done.err
    refused = run(store, "sync")
    assert_one_error_line(refused, f"a git {start[0]} is in progress", "--abort")
    assert run_git(store, *abort) == 0
    assert len(during(store)) == 1
    assert run(store, "sync").code == 0
    assert len(during(store)) == 1
    assert git(store, "status", "--porcelain") == ""


def test_a_worktree_rebase_keeps_the_record(store: Path, tmp_path: Path) -> None:
    """In a linked worktree `.git` is a file: its own git dir holds the rebase state."""
    conflicting_branches(store)
    git(store, "checkout", "-q", "--detach")
    other = tmp_path / "linked"
    git(store, "worktree", "add", "-q", str(other), "topic")
    assert run_git(other, "rebase", "main") != 0
    done = run(other, "log", "plan", "--session", "sess-a", "--context", '{"during": "rebase"}')
    assert done.code == 0, done.err
    assert run_git(other, "rebase", "--abort") == 0
    assert len(during(other)) == 1


def test_a_long_lived_writer_notices_the_rebase(store: Path) -> None:
    """One process (an MCP server, say) logging before, during and after a rebase: the cached
    answer is dropped when git creates or removes the rebase state."""
    import os

    from lorebook import Lorebook

    conflicting_branches(store)
    git(store, "checkout", "-q", "topic")
    old = os.stat(store / ".git").st_mtime - 60
    os.utime(store / ".git", (old, old))  # an answer cached now is trusted until the dir changes
    book = Lorebook.open(store, env={})
    book.log("plan", session="sess-b", context={"before": "rebase"})  # (untracked shard)
    assert run_git(store, "rebase", "main") != 0
    book.log("plan", session="sess-a", context={"during": "rebase"})
    assert run_git(store, "rebase", "--abort") == 0
    book.log("plan", session="sess-a", context={"after": "rebase"})
    contexts = [r["context"] for r in stored_actions(store)]
    assert {"during": "rebase"} in contexts and {"after": "rebase"} in contexts
    # the session's newest shard (two when midnight UTC passed since the committed one)
    shard = max(p for p in shard_files(store) if p.name == "sess-a.jsonl")
    assert '"after":"rebase"' in shard.read_text()  # back in the session's own shard


@pytest.mark.parametrize("alice_logs", [True, False], ids=["merge", "fast-forward"])
def test_sync_drops_the_repeats_a_pull_brings(tmp_path: Path, alice_logs: bool) -> None:
    """Bob pushes a shared shard with repeated lines (an earlier union merge made them); alice's
    sync leaves it without repeats, committed (with the merge when there is one) and pushed."""
    remote, (alice, bob) = make_team(tmp_path, ["c0", "c1"])
    at = datetime.now(UTC).replace(microsecond=0)  # alice's lines go to bob's shard
    log_at(bob, "shared", 3, at)
    (shard,) = shard_files(bob)
    lines = shard.read_bytes().splitlines(keepends=True)
    shard.write_bytes(b"".join(lines + lines[1:]))
    git(bob, "add", "-A")
    git(bob, "commit", "-q", "-m", "bob's shard, repeated lines and all")
    git(bob, "push", "-q")
    if alice_logs:
        log_at(alice, "shared", 1, at)
    sync_ok(alice)
    assert repeated_lines(alice) == 0
    assert run(alice, "check").code == 0
    assert git(alice, "status", "--porcelain") == ""
    parents = git(alice, "log", "-1", "--format=%P").split()
    assert len(parents) == (2 if alice_logs else 1)
    rel = shard.relative_to(bob).as_posix()
    pushed = git(remote, "show", f"main:{rel}").splitlines()
    assert len(pushed) == len(set(pushed)) == len(lines) + (2 if alice_logs else 0)
