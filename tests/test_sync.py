"""`lore sync` against real git: a bare remote and two clones, the real `lore` command."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import assert_one_error_line, clean_env, git, lore, stored_actions

IDENTITY = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
}


def env(root: Path) -> dict[str, str]:
    return clean_env(root, **IDENTITY)


def run(root: Path, *args: str):  # type: ignore[no-untyped-def]
    return lore(*args, cwd=root, env=env(root))


def subjects(root: Path) -> list[str]:
    return git(root, "log", "--format=%s").splitlines()


def log_actions(root: Path, session: str, count: int) -> None:
    started = run(root, "session", "start", "--id", session)
    assert started.code == 0, started.err
    for n in range(count):
        done = run(root, "log", "plan", "--session", session, "--context", f'{{"step": {n}}}')
        assert done.code == 0, done.err


def make_team(tmp_path: Path, names: list[str]) -> tuple[Path, list[Path]]:
    """A bare remote holding an initialised store (committed and pushed by the first clone),
    and a clone of it under each of `names`."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    first = tmp_path / names[0]
    git(tmp_path, "clone", "-q", str(remote), str(first))
    (first / "README.md").write_text("# sample\n")
    assert run(first, "init").code == 0
    git(first, "add", "-A")
    git(first, "commit", "-q", "-m", "initial")
    git(first, "push", "-q", "-u", "origin", "HEAD")
    team = [first]
    for name in names[1:]:
        git(tmp_path, "clone", "-q", str(remote), str(tmp_path / name))
        team.append(tmp_path / name)
    return remote, team


@pytest.fixture
def clones(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A bare remote holding an initialised store, and two clones of it."""
    remote, (first, second) = make_team(tmp_path, ["alice", "bob"])
    return remote, first, second


@pytest.mark.parametrize("same_session", [False, True], ids=["two-sessions", "one-shard"])
def test_two_clones_sync_and_both_see_every_action(
    clones: tuple[Path, Path, Path], same_session: bool
) -> None:
    remote, alice, bob = clones
    log_actions(alice, "sess-alice", 3)
    log_actions(bob, "sess-alice" if same_session else "sess-bob", 2)
    first = run(alice, "sync")
    assert first.code == 0, first.err
    assert "pushed to origin/main" in first.out
    second = run(bob, "sync")
    assert second.code == 0, second.err
    assert "pulled from origin/main" in second.out and "pushed" in second.out
    third = run(alice, "sync")
    assert third.code == 0, third.err
    assert "pulled from origin/main" in third.out
    for clone in (alice, bob):
        assert len(stored_actions(clone)) == 5
        assert not (clone / ".git" / "MERGE_HEAD").exists()
        assert git(clone, "status", "--porcelain", "--", "actionlog") == ""
        checked = run(clone, "check")
        assert checked.code == 0, checked.out
    assert git(alice, "rev-parse", "HEAD") == git(remote, "rev-parse", "main")
    assert git(bob, "rev-parse", "HEAD") == git(remote, "rev-parse", "main")


def test_the_commit_counts_and_lists_the_store_files(clones: tuple[Path, Path, Path]) -> None:
    _, alice, _ = clones
    log_actions(alice, "sess-a", 1)
    made = lore(
        "learn",
        "new",
        "--title",
        "Retry the flaky fixture",
        "--body-file",
        "-",
        cwd=alice,
        env=env(alice),
        stdin="It needs a retry.\n",
    )
    assert made.code == 0, made.err
    done = run(alice, "sync", "--json")
    assert done.code == 0, done.err
    result = done.json()
    assert isinstance(result, dict)
    shards = result["counts"]["shard"]
    assert shards >= 1 and result["counts"]["draft"] == 1
    message = git(alice, "log", "-1", "--format=%B")
    plural = "shard" if shards == 1 else "shards"
    assert message.startswith(f"lore sync: {shards} {plural}, 1 draft\n\n"), message
    assert all(f["path"] in message for f in result["files"])
    assert git(alice, "status", "--porcelain", "--", "actionlog", "learnings") == ""


def test_message_replaces_the_subject(clones: tuple[Path, Path, Path]) -> None:
    _, alice, _ = clones
    log_actions(alice, "sess-a", 1)
    assert run(alice, "sync", "--message", "memory of the auth work").code == 0
    assert subjects(alice)[0] == "memory of the auth work"
    assert "actionlog/" in git(alice, "log", "-1", "--format=%b")


def test_files_outside_the_store_are_never_committed(clones: tuple[Path, Path, Path]) -> None:
    _, alice, _ = clones
    log_actions(alice, "sess-a", 1)
    (alice / "notes.txt").write_text("unrelated, unstaged\n")
    (alice / "README.md").write_text("# changed, not staged\n")
    done = run(alice, "sync")
    assert done.code == 0, done.err
    committed = git(alice, "show", "--name-only", "--format=", "HEAD").split()
    assert committed and all(p.startswith("actionlog/") for p in committed)
    assert "notes.txt" in git(alice, "status", "--porcelain")
    assert " M README.md" in git(alice, "status", "--porcelain")


def test_staged_changes_outside_the_store_are_refused(clones: tuple[Path, Path, Path]) -> None:
    _, alice, _ = clones
    log_actions(alice, "sess-a", 1)
    (alice / "README.md").write_text("# staged by the user\n")
    git(alice, "add", "README.md")
    head = git(alice, "rev-parse", "HEAD")
    refused = run(alice, "sync")
    assert_one_error_line(
        refused, "staged changes outside the store", "README.md", "nothing was committed"
    )
    assert git(alice, "rev-parse", "HEAD") == head
    assert git(alice, "diff", "--cached", "--name-only").split() == ["README.md"]
    assert "actionlog/" in git(alice, "status", "--porcelain", "-uall")


def test_no_remote_commits_only(store: Path) -> None:
    log_actions(store, "sess-a", 2)
    done = run(store, "sync")
    assert done.code == 0, done.err
    assert "no remote: committed only" in done.out
    assert subjects(store)[0].startswith("lore sync: ")
    again = run(store, "sync")
    assert again.code == 0 and "nothing to commit" in again.out


def test_no_upstream_commits_only(clones: tuple[Path, Path, Path]) -> None:
    _, alice, _ = clones
    git(alice, "checkout", "-q", "-b", "topic")
    log_actions(alice, "sess-a", 1)
    done = run(alice, "sync")
    assert done.code == 0, done.err
    assert "no upstream branch: committed only" in done.out


def test_no_push_commits_and_pulls(clones: tuple[Path, Path, Path]) -> None:
    remote, alice, bob = clones
    log_actions(bob, "sess-b", 1)
    assert run(bob, "sync").code == 0
    log_actions(alice, "sess-a", 1)
    before = git(remote, "rev-parse", "main")
    done = run(alice, "sync", "--no-push")
    assert done.code == 0, done.err
    assert "pulled from origin/main" in done.out and "not pushed (--no-push)" in done.out
    assert git(remote, "rev-parse", "main") == before
    assert len(stored_actions(alice)) == 2


def test_nothing_to_sync(clones: tuple[Path, Path, Path]) -> None:
    _, alice, _ = clones
    done = run(alice, "sync")
    assert done.code == 0, done.err
    assert done.out.strip() == "nothing to commit, nothing to pull: up to date with origin/main"


def test_a_conflict_outside_the_store_aborts_the_merge(clones: tuple[Path, Path, Path]) -> None:
    _, alice, bob = clones
    (bob / "README.md").write_text("# bob's title\n")
    git(bob, "commit", "-q", "-am", "bob's readme")
    git(bob, "push", "-q")
    (alice / "README.md").write_text("# alice's title\n")
    git(alice, "commit", "-q", "-am", "alice's readme")
    log_actions(alice, "sess-a", 1)
    failed = run(alice, "sync")
    assert_one_error_line(failed, "conflicts in README.md", "merge aborted", "is kept")
    assert subjects(alice)[0].startswith("lore sync: ")
    assert not (alice / ".git" / "MERGE_HEAD").exists()
    assert git(alice, "status", "--porcelain", "--untracked-files=no") == ""


def test_not_a_repository(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    assert run(plain, "init").code == 0
    assert_one_error_line(run(plain, "sync"), "not in a git repository", "git init")


def test_not_initialised(repo: Path) -> None:
    failed = run(repo, "sync")
    assert_one_error_line(failed, "lore init")


def test_empty_message_is_refused(store: Path) -> None:
    assert_one_error_line(run(store, "sync", "--message", " "), "--message")


def test_library_sync(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lorebook import Lorebook

    for name, value in IDENTITY.items():
        monkeypatch.setenv(name, value)
    book = Lorebook.open(store)
    book.log("plan", context={"step": 1})
    result = book.sync()
    assert result["committed"] == git(store, "rev-parse", "HEAD").strip()
    assert result["upstream"] is None and result["pushed"] is False
