"""Pulling and pushing for `lore sync`, through the `git` binary: a merge left for the caller
to commit (it drops union-merge repeats first), a push that says when another clone pushed
first, and git's whole message when either fails."""

from __future__ import annotations

from pathlib import Path

from .binary import GitError, _check, _run, _top, whole


def pull_merge(root: Path) -> list[str]:
    """`git pull --no-rebase --no-commit` from the upstream: a merge is left staged for the
    caller to commit (`commit_merge`), a fast-forward is done. The conflicting paths when the
    merge stops on conflicts (the merge is aborted, HEAD left as it was), nothing when it
    succeeded; GitError with git's whole message on any other failure."""
    done = _run(root, "pull", "--no-rebase", "--no-commit", "--quiet", timeout=300)
    if done.returncode == 0:
        return []
    listed = _run(root, "diff", "--name-only", "--diff-filter=U", "-z")
    conflicts = [p for p in listed.stdout.split("\0") if p] if listed.returncode == 0 else []
    if not conflicts:
        raise GitError("git pull failed: {}", whole(done.stderr or done.stdout))
    _run(root, "merge", "--abort")
    return conflicts


def merging(root: Path) -> bool:
    """A merge is staged and waits for its commit (`MERGE_HEAD` exists)."""
    return _run(root, "rev-parse", "-q", "--verify", "MERGE_HEAD").returncode == 0


def git_dir(root: Path) -> str | None:
    """The repository's git directory (a worktree's own), or None."""
    done = _run(root, "rev-parse", "--absolute-git-dir")
    return done.stdout.strip() if done.returncode == 0 else None


def commit_merge(root: Path, paths: list[str]) -> None:
    """Stage `paths` (named from the top level) and commit the pending merge, git's message."""
    if paths:
        listed = "".join(f":(top,literal){path}\0" for path in paths)
        _check(root, "add", "--pathspec-from-file=-", "--pathspec-file-nul", input=listed)
    _check(root, "commit", "--quiet", "--no-edit")


def changed_since(root: Path, revision: str, paths: list[str]) -> list[str]:
    """Files under `paths` whose content in the index differs from `revision` (a pull's
    merge or fast-forward brought them), named from the top level."""
    out = _check(root, "diff", "--cached", "--name-only", "-z", revision, "--", *_top(paths))
    return [p for p in out.split("\0") if p]


def push(root: Path) -> bool:
    """Push to the upstream; False when it was rejected as not a fast-forward or lost a race
    for the remote's ref lock (someone pushed first: pull and push again); GitError with git's
    whole message on any other failure."""
    done = _run(root, "push", "--quiet", timeout=300)
    if done.returncode == 0:
        return True
    text = done.stderr or done.stdout
    raced = ("[rejected]", "non-fast-forward", "fetch first", "cannot lock ref")
    if any(mark in text for mark in raced):  # (the last: a push to the same ref at once)
        return False
    raise GitError("git push failed: {}", whole(text))
