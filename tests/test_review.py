"""Review through git: promote (here, on a branch, pushed, with a PR), reject, history."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from conftest import assert_one_error_line, clean_env, cli_run, git, lore, stored_actions
from lorebook import Lorebook
from lorebook.errors import LoreError, UsageError

IDENTITY = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
}


@pytest.fixture(autouse=True)
def _git_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in IDENTITY.items():
        monkeypatch.setenv(key, value)


def _status(root: Path) -> str:
    return git(root, "status", "--porcelain=v1", "--untracked-files=all")


def _draft(book: Lorebook, title: str = "RLS blocks INSERT", **fields: object) -> str:
    return book.learnings.new(title=title, body="It failed.", **fields).id  # type: ignore[arg-type]


def test_promote_commits_on_the_current_branch(book: Lorebook) -> None:
    lid = _draft(book, tags=["rls"])
    result = book.learnings.promote(lid)
    root = book.root
    assert git(root, "log", "-1", "--format=%s").strip() == (
        f"lore(learning): publish {lid}: RLS blocks INSERT"
    )
    assert result.commit == git(root, "rev-parse", "HEAD").strip()
    assert result.branch == "main" and result.on_current_branch
    assert not (book.layout.drafts / f"{lid}.md").exists()
    committed = git(root, "show", f"HEAD:learnings/{lid}.md")
    assert "status: published" in committed
    assert book.learnings.get(lid).status == "published"
    assert git(root, "show", "--name-status", "--format=", "HEAD").split() == [
        "A",
        f"learnings/{lid}.md",
    ]
    logged = [a for a in stored_actions(root) if a["type"] == "learning_promoted"]
    assert logged[0]["context"]["learning"] == lid
    assert logged[0]["context"]["commit"] == result.commit


def test_promote_a_committed_draft_records_the_move_and_history_follows_it(
    book: Lorebook,
) -> None:
    lid = _draft(book)
    git(book.root, "add", f"learnings/drafts/{lid}.md")
    git(book.root, "commit", "-q", "-m", "draft it")
    book.learnings.promote(lid)
    names = git(book.root, "show", "--no-renames", "--name-status", "--format=", "HEAD").split()
    assert sorted(zip(names[::2], names[1::2], strict=True)) == [
        ("A", f"learnings/{lid}.md"),
        ("D", f"learnings/drafts/{lid}.md"),
    ]
    entries = book.learnings.history(lid)
    assert [e.subject for e in entries] == [
        f"lore(learning): publish {lid}: RLS blocks INSERT",
        "draft it",
    ]
    assert [e.change for e in entries] == ["R", "A"]
    assert [e.path for e in entries] == [f"learnings/{lid}.md", f"learnings/drafts/{lid}.md"]


def test_promote_on_a_new_branch_leaves_the_users_work_alone(book: Lorebook) -> None:
    root = book.root
    lid = _draft(book)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "store and draft")
    # work in progress: a staged change, an unstaged change, an untracked file
    (root / "staged.txt").write_text("staged\n")
    git(root, "add", "staged.txt")
    (root / "README.md").write_text("# edited, not staged\n")
    (root / "scratch.txt").write_text("untracked\n")
    head = git(root, "rev-parse", "HEAD")
    status = _status(root)
    cached = git(root, "diff", "--cached")
    result = book.learnings.promote(lid, branch="")
    assert result.branch == f"lore/learning/{lid}" and not result.on_current_branch
    assert git(root, "rev-parse", "HEAD") == head
    assert git(root, "branch", "--show-current").strip() == "main"
    assert git(root, "diff", "--cached") == cached
    assert (root / "README.md").read_text() == "# edited, not staged\n"
    assert (root / "scratch.txt").read_text() == "untracked\n"
    assert (book.layout.drafts / f"{lid}.md").exists()
    # the action log got one more line; everything else is as it was
    strip = [line for line in _status(root).splitlines() if "actionlog/" not in line]
    assert strip == [line for line in status.splitlines() if "actionlog/" not in line]
    branch = result.branch
    assert git(root, "rev-parse", f"{branch}^").strip() == head.strip()
    assert (
        git(root, "log", "-1", "--format=%s", branch)
        .strip()
        .startswith(f"lore(learning): publish {lid}")
    )
    changed = git(root, "diff", "--no-renames", "--name-status", "HEAD", branch).split()
    assert sorted(zip(changed[::2], changed[1::2], strict=True)) == [
        ("A", f"learnings/{lid}.md"),
        ("D", f"learnings/drafts/{lid}.md"),
    ]
    assert "status: published" in git(root, "show", f"{branch}:learnings/{lid}.md")
    assert "staged.txt" not in git(root, "ls-tree", "-r", "--name-only", branch)


def test_promote_branch_name_taken_or_invalid(book: Lorebook) -> None:
    lid = _draft(book)
    git(book.root, "branch", "taken")
    with pytest.raises(UsageError, match="branch 'taken' already exists"):
        book.learnings.promote(lid, branch="taken")
    with pytest.raises(UsageError, match="not a valid branch name"):
        book.learnings.promote(lid, branch="bad..name")
    assert (book.layout.drafts / f"{lid}.md").exists()


def test_promote_push_to_a_bare_remote(book: Lorebook, tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(book.root, "remote", "add", "origin", str(remote))
    lid = _draft(book)
    result = book.learnings.promote(lid, branch="review/rls", push=True)
    assert result.pushed and result.remote == "origin"
    assert git(remote, "rev-parse", "review/rls").strip() == result.commit
    assert git(book.root, "branch", "--show-current").strip() == "main"


def test_promote_push_failure_says_what_was_done(book: Lorebook) -> None:
    lid = _draft(book)
    with pytest.raises(LoreError) as info:
        book.learnings.promote(lid, branch="review/x", push=True, remote="nowhere")
    message = str(info.value)
    assert message.startswith(f"published {lid} in ")
    assert "on branch review/x, but git push failed: fatal: 'nowhere'" in message
    assert "\n" not in message
    assert git(book.root, "rev-parse", "--verify", "review/x").strip()
    logged = [a for a in stored_actions(book.root) if a["type"] == "learning_promoted"]
    assert logged[0]["context"]["branch"] == "review/x"
    assert logged[0]["context"]["pushed"] is False


def test_push_from_a_detached_head_is_refused_before_committing(book: Lorebook) -> None:
    lid = _draft(book)
    git(book.root, "checkout", "-q", "--detach")
    head = git(book.root, "rev-parse", "HEAD")
    with pytest.raises(UsageError, match="HEAD is detached"):
        book.learnings.promote(lid, push=True)
    assert git(book.root, "rev-parse", "HEAD") == head
    assert (book.layout.drafts / f"{lid}.md").exists()


def _fake_gh(tmp_path: Path, body: str) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    gh = bin_dir / "gh"
    gh.write_text(f"#!/bin/sh\n{body}\n")
    gh.chmod(gh.stat().st_mode | stat.S_IEXEC)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


def test_promote_pr_runs_gh(
    book: Lorebook, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(book.root, "remote", "add", "origin", str(remote))
    args_file = tmp_path / "gh-args"
    env = _fake_gh(tmp_path, f'printf "%s\\n" "$@" > {args_file}\necho https://forge.example/pr/7')
    monkeypatch.setenv("PATH", env["PATH"])
    lid = _draft(book)
    result = book.learnings.promote(lid, branch="", pr=True)
    assert result.pr_url == "https://forge.example/pr/7"
    args = args_file.read_text().splitlines()
    assert args[:4] == ["pr", "create", "--head", f"lore/learning/{lid}"]
    assert args[4:6] == ["--base", "main"]
    assert f"lore(learning): publish {lid}: RLS blocks INSERT" in args
    assert git(remote, "rev-parse", f"lore/learning/{lid}").strip() == result.commit


def test_promote_pr_without_gh_prints_the_command(store: Path, tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(store, "remote", "add", "origin", str(remote))
    book = Lorebook.open(store, env={})
    lid = _draft(book)
    env = clean_env(store, **IDENTITY, PATH=os.path.dirname(_git_path()))
    done = lore("promote", lid, "--branch", "--pr", env=env)
    assert done.code == 0, done.err
    assert done.out.startswith(f"published {lid} in ")
    warning = done.err.strip().splitlines()
    assert len(warning) == 1
    assert warning[0].startswith(
        "lore: warning: gh is not on PATH; open the pull request with: "
        f"gh pr create --head lore/learning/{lid} --base main --title "
    )


def test_promote_branch_takes_an_optional_name(store: Path) -> None:
    """`--branch` alone (last, or before another option) names the branch itself; `--branch
    NAME` and `--branch=NAME` name it."""
    book = Lorebook.open(store, env={})
    first, second, third = (_draft(book, title) for title in ("One", "Two", "Three"))
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", "drafts")
    env = clean_env(store, **IDENTITY)
    for args, branch in (
        ([first, "--branch"], f"lore/learning/{first}"),
        ([second, "--branch", "review/two", "--json"], "review/two"),
        ([third, "--branch=review/three"], "review/three"),
    ):
        done = lore("promote", *args, env=env)
        assert done.code == 0, done.err
        assert branch in done.out
        assert git(store, "rev-parse", "--verify", "-q", branch).strip()
    assert git(store, "branch", "--show-current").strip() == "main"


def _git_path() -> str:
    import shutil

    found = shutil.which("git")
    assert found
    return found


def test_promote_pr_gh_failure_is_one_line(
    book: Lorebook, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(book.root, "remote", "add", "origin", str(remote))
    env = _fake_gh(tmp_path, 'echo "gh: not logged in" >&2; exit 4')
    monkeypatch.setenv("PATH", env["PATH"])
    lid = _draft(book)
    with pytest.raises(LoreError, match=r"`gh pr create` failed: gh: not logged in"):
        book.learnings.promote(lid, branch="", pr=True)


def test_promote_refuses_a_dirty_index_and_changes_nothing(book: Lorebook) -> None:
    root = book.root
    lid = _draft(book)
    (root / "README.md").write_text("# staged edit\n")
    git(root, "add", "README.md")
    head = git(root, "rev-parse", "HEAD")
    status = _status(root)
    result = cli_run(["--root", str(root), "promote", lid])
    assert_one_error_line(result, "staged changes (README.md)", "git restore --staged")
    assert git(root, "rev-parse", "HEAD") == head
    assert _status(root) == status
    assert (book.layout.drafts / f"{lid}.md").exists()
    assert not (book.layout.learnings / f"{lid}.md").exists()


def test_failed_commit_hook_rolls_everything_back(book: Lorebook) -> None:
    root = book.root
    lid = _draft(book)
    hook = root / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'refused by policy' >&2\nexit 1\n")
    hook.chmod(0o755)
    draft_text = (book.layout.drafts / f"{lid}.md").read_text()
    status = _status(root)
    with pytest.raises(LoreError, match="git commit failed: refused by policy"):
        book.learnings.promote(lid)
    assert (book.layout.drafts / f"{lid}.md").read_text() == draft_text
    assert not (book.layout.learnings / f"{lid}.md").exists()
    assert _status(root) == status
    assert git(root, "diff", "--cached", "--name-only") == ""


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["promote", "nope"], ["no draft with id 'nope'"]),
        (["promote", "../x"], ["invalid learning id '../x'"]),
        (["promote", "a/b"], ["invalid learning id 'a/b'"]),
        (["reject", "nope", "--reason", "dup"], ["no draft with id 'nope'"]),
        (["history", "x/../y"], ["invalid learning id"]),
        (["history", "nope"], ["no learning or draft with id 'nope'"]),
    ],
)
def test_bad_ids_are_one_line_errors(store: Path, args: list[str], needles: list[str]) -> None:
    assert_one_error_line(cli_run(["--root", str(store), *args]), *needles)


def test_promote_a_published_learning_or_pr_without_branch(book: Lorebook) -> None:
    lid = book.learnings.new(title="Done", publish=True).id
    with pytest.raises(UsageError, match="already published"):
        book.learnings.promote(lid)
    draft = _draft(book)
    with pytest.raises(UsageError, match="--pr needs --branch"):
        book.learnings.promote(draft, pr=True)


def test_promote_outside_git(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    book = Lorebook.init(root, env={})
    lid = _draft(book)
    result = cli_run(["--root", str(root), "promote", lid])
    assert_one_error_line(result, "is not inside a git repository")
    assert (book.layout.drafts / f"{lid}.md").exists()


def test_reject_a_committed_draft(book: Lorebook) -> None:
    root = book.root
    lid = _draft(book)
    git(root, "add", f"learnings/drafts/{lid}.md")
    git(root, "commit", "-q", "-m", "draft it")
    result = cli_run(
        [
            "--root",
            str(root),
            "reject",
            lid,
            "--reason",
            "duplicate of the RLS lesson, see bob@example.com",
            "--json",
        ]
    )
    assert result.code == 0, result.err
    data = result.json()
    assert isinstance(data, dict)
    assert data["commit"] == git(root, "rev-parse", "HEAD").strip()
    message = git(root, "log", "-1", "--format=%B")
    assert message.startswith(f"lore(learning): reject {lid}: RLS blocks INSERT\n\nReason: ")
    assert "bob@example.com" not in message and "[REDACTED:email]" in message
    assert not (book.layout.drafts / f"{lid}.md").exists()
    logged = [a for a in stored_actions(root) if a["type"] == "learning_rejected"]
    assert logged[0]["context"]["reason"].startswith("duplicate of the RLS lesson")
    assert [e.change for e in book.learnings.history(lid)] == ["D", "A"]


def test_reject_an_uncommitted_draft_and_bad_reasons(book: Lorebook) -> None:
    lid = _draft(book)
    with pytest.raises(UsageError, match="needs a reason"):
        book.learnings.reject(lid, reason="  ")
    assert (book.layout.drafts / f"{lid}.md").exists()
    head = git(book.root, "rev-parse", "HEAD")
    result = book.learnings.reject(lid, reason="not a lesson")
    assert result["commit"] is None
    assert git(book.root, "rev-parse", "HEAD") == head
    assert not (book.layout.drafts / f"{lid}.md").exists()


def test_cli_promote_and_history_via_subprocess(store: Path) -> None:
    env = clean_env(store, **IDENTITY)
    made = lore("learn", "new", "--title", "Pin torch", "--json", env=env)
    assert made.code == 0, made.err
    lid = made.json()["id"]  # type: ignore[index]
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", "draft")
    done = lore("promote", lid, "--json", env=env)
    assert done.code == 0, done.err
    assert done.json()["path"] == f"learnings/{lid}.md"  # type: ignore[index]
    hist = lore("history", lid, "--json", env=env)
    assert hist.code == 0
    entries = hist.json()
    assert isinstance(entries, list)
    assert [e["change"] for e in entries] == ["R", "A"]
    human = lore("history", lid, env=env)
    assert "lore(learning): publish" in human.out.splitlines()[0]
    dirty = lore("promote", "nope", "--json", env=env)
    assert dirty.code == 1 and dirty.out == ""
    assert dirty.err.strip().startswith('{"error": "no draft with id')


def test_two_branches_learning_the_same_thing_the_same_day_merge_cleanly(book: Lorebook) -> None:
    root = book.root
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "store")
    git(root, "checkout", "-q", "-b", "other")
    theirs = book.learnings.new(title="Pin torch", publish=True).id
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "theirs")
    git(root, "checkout", "-q", "main")
    ours = book.learnings.new(title="Pin torch", publish=True).id
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "ours")
    assert ours != theirs and ours[:-8] == theirs[:-8]  # same date and slug, own suffix
    git(root, "merge", "-q", "--no-edit", "other")
    assert {x.id for x in book.learnings.all()} == {ours, theirs}
    assert cli_run(["--root", str(root), "check"]).code == 0


def test_the_reviewers_promote_and_reject_leave_no_active_session(store: Path) -> None:
    """A review is one closed session: `lore sessions` lists no new active one after it."""
    env = clean_env(store, **IDENTITY)
    book = Lorebook.open(store, env={})
    ids = [_draft(book, title) for title in ("Pin torch", "Drop cache")]
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", "drafts")
    assert lore("promote", ids[0], env=env).code == 0
    assert lore("reject", ids[1], "--reason", "duplicate", env=env).code == 0
    listed = lore("sessions", "--json", env=env).json()
    assert isinstance(listed, list) and listed
    assert [s["status"] for s in listed] == ["ended"] * len(listed)
    logged = [a["type"] for a in stored_actions(store)]
    assert "learning_promoted" in logged and "learning_rejected" in logged


def test_a_draft_published_on_a_branch_is_known_and_not_published_twice(book: Lorebook) -> None:
    lid, other = _draft(book), _draft(book, "Other")
    git(book.root, "add", "-A")
    git(book.root, "commit", "-q", "-m", "drafts")
    assert book.learnings.published_branches() == {}
    book.learnings.promote(lid, branch="review/one")
    assert book.learnings.published_branches() == {lid: "review/one"}
    with pytest.raises(UsageError, match="already published on branch review/one"):
        book.learnings.promote(lid, branch="again")
    assert book.learnings.published_branches() == {lid: "review/one"}
    assert (book.layout.drafts / f"{other}.md").exists()


def test_outside_git_no_draft_is_published_on_a_branch(tmp_path: Path) -> None:
    book = Lorebook.init(tmp_path, env={})
    book.learnings.new(title="Pin torch", body="Install the CPU build first.")
    assert book.learnings.published_branches() == {}
