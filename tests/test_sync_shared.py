"""`lore sync` when a team shares the store: the union-merge rule is committed once, file names
never leak a secret, and two clones editing one learning get a conflict they can resolve.

Real git (a bare remote and two clones) and the real `lore` command.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import assert_one_error_line, git, stored_actions
from lorebook.paths import UNION_COMMENT
from test_sync import clones, env, log_actions, run  # noqa: F401  (clones is a fixture)

RULE = "actionlog/**/*.jsonl merge=union"
OURS = f"{UNION_COMMENT}\n{RULE}\n"
# built at run time so that no token-shaped literal sits in the source
SECRET = "ghp_" + "x7Kq2Lm9Pw4Rt8Yv1Bn6Cz3Df5Gh0Jk2Ls4Q"


@pytest.fixture
def uncommitted_init(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A bare remote with a plain project; alice ran `lore init` and committed nothing of it;
    bob is a second clone."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    alice = tmp_path / "alice"
    git(tmp_path, "clone", "-q", str(remote), str(alice))
    (alice / "README.md").write_text("# sample\n")
    (alice / ".gitattributes").write_text("*.png binary\n")
    git(alice, "add", "-A")
    git(alice, "commit", "-q", "-m", "initial")
    git(alice, "push", "-q", "-u", "origin", "HEAD")
    assert run(alice, "init").code == 0
    bob = tmp_path / "bob"
    git(tmp_path, "clone", "-q", str(remote), str(bob))
    return remote, alice, bob


def committed_files(root: Path) -> list[str]:
    return git(root, "show", "--name-only", "--format=", "HEAD").split()


def shard_names(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in (root / "actionlog").rglob("*.jsonl"))


# -- .gitattributes ---------------------------------------------------------------------------
def test_the_union_rule_is_committed_once_and_merges_the_next_pull(
    uncommitted_init: tuple[Path, Path, Path],
) -> None:
    remote, alice, bob = uncommitted_init
    log_actions(alice, "sess-shared", 2)
    done = run(alice, "sync", "--json")
    assert done.code == 0, done.err
    result = done.json()
    assert isinstance(result, dict)
    assert {"path": ".gitattributes", "change": "M", "kind": "attributes"} in result["files"]
    assert result["counts"]["shard"] == 1 and "attributes" not in result["counts"]
    assert ".gitattributes" in committed_files(alice)
    assert "M .gitattributes" in git(alice, "log", "-1", "--format=%b")
    assert git(alice, "show", "HEAD:.gitattributes") == "*.png binary\n" + OURS
    assert git(alice, "status", "--porcelain", "--", ".gitattributes") == ""
    # bob (cloned before) runs init too and writes into the same shard: both commit the same
    # rule, which merges cleanly, and his shard merges by union
    assert run(bob, "init").code == 0
    log_actions(bob, "sess-shared", 3)
    second = run(bob, "sync")
    assert second.code == 0, second.err
    assert "pulled from origin/main" in second.out
    assert len(stored_actions(bob)) == 5
    again = run(alice, "sync")
    assert again.code == 0, again.err
    assert ".gitattributes" not in committed_files(alice)
    assert len(stored_actions(alice)) == 5
    # a clone made now has the rule from its first checkout, before any lore command
    carol = remote.parent / "carol"
    git(remote.parent, "clone", "-q", str(remote), str(carol))
    shard = shard_names(carol)[0]
    assert git(carol, "check-attr", "merge", "--", shard).strip().endswith("merge: union")


def test_only_lorebooks_lines_of_gitattributes_are_committed(
    uncommitted_init: tuple[Path, Path, Path],
) -> None:
    _, alice, _ = uncommitted_init
    attributes = alice / ".gitattributes"
    attributes.write_text(attributes.read_text() + "*.sh text eol=lf\n")  # the user's, unstaged
    log_actions(alice, "sess-a", 1)
    done = run(alice, "sync")
    assert done.code == 0, done.err
    assert git(alice, "show", "HEAD:.gitattributes") == "*.png binary\n" + OURS
    assert attributes.read_text() == "*.png binary\n" + OURS + "*.sh text eol=lf\n"
    assert git(alice, "diff", "--cached", "--name-only") == ""
    diff = git(alice, "diff", "HEAD", "--", ".gitattributes").splitlines()
    assert [d for d in diff if d.startswith(("+", "-")) and d[:3] not in ("+++", "---")] == [
        "+*.sh text eol=lf"
    ]


def test_gitattributes_staged_as_lore_init_wrote_it_is_committed(
    uncommitted_init: tuple[Path, Path, Path],
) -> None:
    _, alice, _ = uncommitted_init
    git(alice, "add", ".gitattributes")
    done = run(alice, "sync")
    assert done.code == 0, done.err
    assert "store layout" in done.out  # nothing but the rule to commit
    assert git(alice, "show", "HEAD:.gitattributes") == "*.png binary\n" + OURS


def test_other_staged_changes_to_gitattributes_are_refused(
    uncommitted_init: tuple[Path, Path, Path],
) -> None:
    _, alice, _ = uncommitted_init
    attributes = alice / ".gitattributes"
    attributes.write_text(attributes.read_text() + "*.sh text eol=lf\n")
    git(alice, "add", ".gitattributes")
    log_actions(alice, "sess-a", 1)
    head = git(alice, "rev-parse", "HEAD")
    staged = git(alice, "show", ":.gitattributes")
    refused = run(alice, "sync")
    assert_one_error_line(
        refused, "staged changes outside the store", ".gitattributes", "nothing was committed"
    )
    assert git(alice, "rev-parse", "HEAD") == head
    assert git(alice, "show", ":.gitattributes") == staged


def test_an_untracked_gitattributes_is_added_with_the_rule(store: Path) -> None:
    log_actions(store, "sess-a", 1)
    done = run(store, "sync")
    assert done.code == 0, done.err
    assert git(store, "show", "HEAD:.gitattributes") == OURS
    assert "A .gitattributes" in git(store, "log", "-1", "--format=%b")


def test_a_repository_without_commits_gets_the_rule_in_its_first(tmp_path: Path) -> None:
    root = tmp_path / "fresh"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    assert run(root, "init").code == 0
    log_actions(root, "sess-a", 1)
    done = run(root, "sync")
    assert done.code == 0, done.err
    assert git(root, "show", "HEAD:.gitattributes") == OURS
    assert git(root, "rev-list", "--count", "HEAD").strip() == "1"


# -- file names holding a secret --------------------------------------------------------------
def test_a_secret_in_a_file_name_never_reaches_the_message_or_output(
    clones: tuple[Path, Path, Path],  # noqa: F811
) -> None:
    _, alice, _ = clones
    (alice / "learnings" / "drafts" / f"{SECRET}.md").write_text("---\ntitle: x\n---\nbody\n")
    for args in (("sync", "--no-push", "--json"),):
        done = run(alice, *args)
        assert done.code == 0, done.err
        assert SECRET not in done.out + done.err
        assert "[REDACTED:" in done.out
    message = git(alice, "log", "-1", "--format=%B")
    assert SECRET not in message
    assert re.search(r"A learnings/drafts/\[REDACTED:[a-z_]+\]\.md", message), message


def test_a_staged_secret_named_file_outside_the_store_is_refused_redacted(
    clones: tuple[Path, Path, Path],  # noqa: F811
) -> None:
    _, alice, _ = clones
    (alice / f"{SECRET}.txt").write_text("notes\n")
    git(alice, "add", f"{SECRET}.txt")
    refused = run(alice, "sync")
    line = assert_one_error_line(refused, "staged changes outside the store", "[REDACTED:")
    assert SECRET not in line


def test_a_message_holding_a_secret_is_redacted(clones: tuple[Path, Path, Path]) -> None:  # noqa: F811
    _, alice, _ = clones
    log_actions(alice, "sess-a", 1)
    done = run(alice, "sync", "--message", f"memory; token {SECRET}")
    assert done.code == 0, done.err
    assert SECRET not in git(alice, "log", "-1", "--format=%B") + done.out


# -- two clones edit one learning -------------------------------------------------------------
def write_learning(root: Path, publish: bool) -> Path:
    made = run(
        root,
        "learn",
        "new",
        "--title",
        "Retry the flaky fixture",
        "--json",
        *(["--publish"] if publish else []),
    )
    assert made.code == 0, made.err
    data = made.json()
    assert isinstance(data, dict)
    return root / data["path"]


def edit(path: Path, line: str) -> None:
    text = path.read_text()
    path.write_text(text.replace("## Solution\n", f"## Solution\n{line}\n", 1))


@pytest.mark.parametrize("publish", [True, False], ids=["learning", "draft"])
def test_two_clones_editing_one_learning_are_told_how_to_resolve(
    clones: tuple[Path, Path, Path],  # noqa: F811
    publish: bool,
) -> None:
    remote, alice, bob = clones
    path = write_learning(alice, publish)
    rel = path.relative_to(alice).as_posix()
    assert run(alice, "sync").code == 0
    assert run(bob, "sync").code == 0
    edit(alice / rel, "Alice: retry three times.")
    assert run(alice, "sync").code == 0
    edit(bob / rel, "Bob: mark the fixture as flaky.")
    log_actions(bob, "sess-b", 1)
    failed = run(bob, "sync")
    kind = "learning" if publish else "draft"
    line = assert_one_error_line(
        failed,
        f"conflicts in {rel} ({kind})",
        "changed in both clones",
        "merge aborted",
        "is kept",
        "git pull --no-rebase",
        "conflict markers",
        "git add",
        "lore sync again",
    )
    assert "README" not in line
    # the store commit is kept, the merge is not left half done, nothing else was touched
    assert git(bob, "log", "-1", "--format=%s").startswith("lore sync: ")
    assert rel in committed_files(bob)
    assert not (bob / ".git" / "MERGE_HEAD").exists()
    assert git(bob, "status", "--porcelain", "--untracked-files=no") == ""
    assert git(remote, "rev-parse", "main") != git(bob, "rev-parse", "HEAD")
    # following the message resolves it
    pulled = run_git_allowing_failure(bob, "pull", "--no-rebase", "--no-edit")
    assert "CONFLICT" in pulled
    text = (bob / rel).read_text()
    resolved = re.sub(r"<<<<<<< [^\n]*\n|=======\n|>>>>>>> [^\n]*\n", "", text)
    assert "Alice: retry" in resolved and "Bob: mark" in resolved
    (bob / rel).write_text(resolved)
    git(bob, "add", rel)
    git(bob, "commit", "-q", "--no-edit")
    done = run(bob, "sync")
    assert done.code == 0, done.err
    assert "pushed to origin/main" in done.out
    assert git(remote, "rev-parse", "main") == git(bob, "rev-parse", "HEAD")


def run_git_allowing_failure(root: Path, *args: str) -> str:
    import subprocess

    done = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, env=env(root)
    )
    return done.stdout + done.stderr
