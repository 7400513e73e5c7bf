"""Git for review's commits, learning history and staleness, through the git binary.

A `Repo` is a repository found from the store (`open_repo`), named by its work tree's top
level; every function runs git there through `binary`'s runner, so failures are the same
one-line `LoreError`s (`GitError` with git's own first line). A promotion or a staleness check
runs a handful of git processes (a few ms each).

A branch commit is built in a temporary index (read-tree, update-index, write-tree,
commit-tree), so the user's branch, HEAD, index and working tree stay exactly as they were.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from ..errors import LoreError, UsageError
from ..store import atomic_write
from .binary import GitError, _check, _run, first_line

__all__ = [
    "GitError",
    "PathCommit",
    "Repo",
    "branch_exists",
    "commit_changes",
    "commit_on_new_branch",
    "commits_since",
    "commits_touching_text",
    "current_branch",
    "head_commit",
    "in_index",
    "is_branch_name",
    "last_commit",
    "newest_commit_per_file",
    "open_repo",
    "path_history",
    "push_branch",
    "rel_path",
    "run",
    "text_at_head",
    "text_in_worktree",
    "tracked_in_head",
    "uncommitted",
    "uncommitted_diff_mentions",
    "work_tree",
]


class Repo(NamedTuple):
    """A git repository with a work tree, by its top level (as git names it)."""

    top: Path


def open_repo(root: Path) -> Repo:
    """The git repository holding `root`; LoreError when there is none."""
    repo = find_repo(root)
    if repo is None:
        raise LoreError(
            "{} is not inside a git repository: learnings are reviewed through git", root
        )
    return repo


def find_repo(root: Path) -> Repo | None:
    """The git repository holding `root`, None when there is none (a plain directory); GitError
    when git fails otherwise."""
    done = _run(root, "rev-parse", "--show-toplevel", env={"LC_ALL": "C", "LANGUAGE": "C"})
    if done.returncode == 0 and done.stdout.strip():
        return Repo(Path(done.stdout.rstrip("\n")))
    detail = first_line(done.stderr or done.stdout)
    if "not a git repository" in detail or not root.is_dir():
        return None
    raise GitError("git rev-parse failed: {}", detail)


def run(
    repo: Repo, *args: str, env: Mapping[str, str] | None = None, timeout: float | None = None
) -> str:
    """`git <args>` at the repository's top level; GitError with git's message when it fails.
    No time limit by default: a commit runs the user's hooks, which may take a while."""
    return _check(repo.top, *args, env=env, timeout=timeout)


def work_tree(repo: Repo) -> Path:
    return repo.top


def rel_path(repo: Repo, path: Path) -> str:
    """`path` relative to the repository's top level, with '/' separators (ValueError when it
    is outside). The file itself is not resolved: git tracks a symlink as the link."""
    top = work_tree(repo).resolve()
    real = path.resolve() if path.name in ("", "..") else path.parent.resolve() / path.name
    return real.relative_to(top).as_posix()


def _answer(repo: Repo, *args: str) -> str | None:
    """The output of a git query that exits 1 for "no such thing" (None then); GitError when
    it fails otherwise."""
    done = _run(repo.top, *args)
    if done.returncode == 0:
        return done.stdout.strip()
    if done.returncode == 1 and not done.stderr.strip():
        return None
    raise GitError("git {} failed: {}", args[0], first_line(done.stderr or done.stdout))


def head_commit(repo: Repo) -> str | None:
    """The commit HEAD names; None before the first commit."""
    return _answer(repo, "rev-parse", "--verify", "-q", "HEAD^{commit}")


def current_branch(repo: Repo) -> str | None:
    """The branch HEAD is on (also before its first commit); None when HEAD is detached."""
    ref = _answer(repo, "symbolic-ref", "-q", "HEAD")
    return ref.removeprefix("refs/heads/") if ref else None


def is_branch_name(repo: Repo, name: str) -> bool:
    try:
        run(repo, "check-ref-format", "--branch", name)
    except GitError:
        return False
    return True


def branch_exists(repo: Repo, name: str) -> bool:
    return _answer(repo, "show-ref", "--verify", "-q", f"refs/heads/{name}") is not None


def tracked_in_head(repo: Repo, rel: str) -> bool:
    """Whether HEAD has `rel` (a file, link or directory); False before the first commit."""
    return _answer(repo, "rev-parse", "--verify", "-q", f"HEAD:{rel}") is not None


def in_index(repo: Repo, rel: str) -> bool:
    return bool(run(repo, "ls-files", "--cached", "--", rel).strip())


def push_branch(repo: Repo, remote: str, branch: str) -> None:
    run(repo, "push", remote, f"refs/heads/{branch}:refs/heads/{branch}")


# -- commits -----------------------------------------------------------------------------------
def _store_blob(repo: Repo, data: bytes, scratch: Path) -> str:
    """Write a blob into the object database (via a file in `scratch`); its hex id."""
    path = scratch / "blob"
    path.write_bytes(data)
    return run(repo, "hash-object", "-w", "--no-filters", "--", str(path)).strip()


def commit_on_new_branch(
    repo: Repo, branch: str, message: str, writes: dict[str, bytes], removes: list[str]
) -> str:
    """A commit on a new branch from HEAD, built in a temporary index; nothing else moves.

    `writes` maps repository paths to their new content, `removes` lists paths to leave out.
    """
    head = head_commit(repo)
    if head is None:
        raise UsageError("the repository has no commits yet: commit once before using --branch")
    with tempfile.TemporaryDirectory(prefix="lore-index-") as tmp:
        env = {"GIT_INDEX_FILE": os.path.join(tmp, "index")}
        run(repo, "read-tree", head, env=env)
        for rel, data in writes.items():
            blob = _store_blob(repo, data, Path(tmp))
            run(repo, "update-index", "--add", "--cacheinfo", f"100644,{blob},{rel}", env=env)
        for rel in removes:
            run(repo, "update-index", "--force-remove", "--", rel, env=env)
        tree = run(repo, "write-tree", env=env).strip()
    commit = run(repo, "commit-tree", tree, "-p", head, "-m", message.rstrip("\n")).strip()
    # create only: fails (and changes nothing) if the branch appeared meanwhile
    run(repo, "update-ref", f"refs/heads/{branch}", commit, "0" * 40)
    return commit


def commit_changes(
    repo: Repo,
    message: str,
    *,
    writes: dict[Path, bytes],
    removes: list[Path],
    rels: list[str],
) -> str:
    """Write/remove files, stage exactly those (`rels`: the written ones), commit on the
    current branch; undo everything on failure."""
    saved = {p: p.read_bytes() for p in removes if p.exists()}
    removed_rels = [rel_path(repo, p) for p in removes]
    tracked = [r for r in removed_rels if tracked_in_head(repo, r) or in_index(repo, r)]
    written: list[Path] = []  # undo only what was done (on a read-only store: nothing)
    gone: list[Path] = []
    try:
        for path, data in writes.items():
            atomic_write(path, data)
            written.append(path)
        for path in removes:
            try:
                path.unlink(missing_ok=True)
            except OSError as exc:
                raise LoreError(
                    "{}: cannot remove ({}); nothing was committed",
                    rel_path(repo, path),
                    exc.strerror or exc,
                ) from None
            gone.append(path)
        run(repo, "add", "--", *rels)
        if tracked:
            run(repo, "rm", "--cached", "--quiet", "--ignore-unmatch", "--", *tracked)
        run(repo, "commit", "--quiet", "-m", message.rstrip("\n"))
    except LoreError:
        for path in written:
            path.unlink(missing_ok=True)
        for path in gone:
            if path in saved:
                atomic_write(path, saved[path])
        if head_commit(repo) is not None:
            with contextlib.suppress(GitError):  # best effort: the original error is the news
                run(repo, "reset", "--quiet", "HEAD", "--", *rels, *tracked)
        raise
    return run(repo, "rev-parse", "HEAD").strip()


# -- history -----------------------------------------------------------------------------------
class PathCommit(NamedTuple):
    """One commit that touched one of some paths, and how (A, M, D, or R for a move)."""

    commit: str
    short: str
    author: str
    date: str
    subject: str
    change: str
    path: str


def path_history(repo: Repo, paths: list[str]) -> list[PathCommit]:
    """The commits reachable from HEAD that touched `paths`, newest first. A commit that adds
    one of them and deletes the other is a move (R, naming the added path)."""
    if head_commit(repo) is None:
        return []
    fields = "%H%x00%h%x00%an%x00%aI%x00%s"
    out = run(
        repo, "log", f"--format=\x01{fields}", "--name-status", "--no-renames", "HEAD", "--", *paths
    )
    entries: list[PathCommit] = []
    for chunk in out.split("\x01")[1:]:
        header, _, names = chunk.partition("\n")
        full, short, author, date, subject = (header.split("\0") + [""] * 5)[:5]
        changes = [line.split("\t") for line in names.splitlines() if "\t" in line]
        kinds = {c[0][0] for c in changes}
        path = changes[-1][-1] if changes else ""
        change = (
            "R"
            if kinds == {"A", "D"} and len(changes) == 2
            else (changes[0][0][0] if changes else "M")
        )
        if change == "R":
            path = next(c[1] for c in changes if c[0].startswith("A"))
        entries.append(PathCommit(full, short, author, date, subject, change, path))
    return entries


def newest_commit_per_file(repo: Repo, dirs: list[str]) -> dict[str, str]:
    """The newest commit per file under `dirs` (one `git log` for all of them)."""
    out = run(repo, "log", "--format=\x01%H", "--name-only", "--no-renames", "HEAD", "--", *dirs)
    newest: dict[str, str] = {}
    for chunk in out.split("\x01")[1:]:
        sha, _, names = chunk.partition("\n")
        for name in names.splitlines():
            if name:
                newest.setdefault(name, sha.strip())
    return newest


def last_commit(repo: Repo, rel: str) -> str | None:
    """The short hash of the newest commit that touched `rel` (None: never committed)."""
    return run(repo, "log", "-1", "--format=%h", "HEAD", "--", rel).strip() or None


def commits_since(repo: Repo, since: str, rel: str) -> list[str]:
    """Short hashes of the commits after `since` that touched `rel`, newest first."""
    return run(repo, "log", "--format=%h", f"{since}..HEAD", "--", rel).split()


def commits_touching_text(repo: Repo, since: str, rel: str, text: str) -> list[str]:
    """Short hashes of the commits after `since` whose diff of `rel` adds or removes a line
    (or names a hunk) containing `text`, newest first."""
    out = run(repo, "log", "-p", "--format=\x01%h", "--unified=0", f"{since}..HEAD", "--", rel)
    commits = []
    for chunk in out.split("\x01")[1:]:
        short, _, patch = chunk.partition("\n")
        if _patch_mentions(patch, text):
            commits.append(short.strip())
    return commits


def _patch_mentions(patch: str, text: str) -> bool:
    """Whether a unified diff adds or removes a line (or names a hunk) containing `text`."""
    for line in patch.splitlines():
        changed = line.startswith(("+", "-", "@@")) and not line.startswith(("+++", "---"))
        if changed and text in line:
            return True
    return False


def uncommitted(repo: Repo) -> dict[str, str]:
    """Paths whose staged or working-tree state differs from HEAD: "D" deleted, "?" untracked,
    "M" otherwise (modified, added, type changed). One `git status` for the whole tree."""
    out = run(repo, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames")
    found: dict[str, str] = {}
    for entry in out.split("\0"):
        if len(entry) < 4:
            continue
        code, path = entry[:2], entry[3:]
        found[path] = "?" if code == "??" else "D" if "D" in code else "M"
    return found


def uncommitted_diff_mentions(repo: Repo, rel: str, text: str) -> bool:
    """Whether the uncommitted change of `rel` (staged and not, against HEAD) adds or removes a
    line containing `text`."""
    return _patch_mentions(run(repo, "diff", "HEAD", "--unified=0", "--", rel), text)


def text_in_worktree(repo: Repo, rel: str) -> str:
    """The lines of `rel` (a tracked file, or the tracked files under a directory) as they are
    in the working tree."""
    try:  # git reads the tracked files as they are on disk, and never follows a symlink
        return run(repo, "grep", "-h", "-e", "", "--", rel)
    except GitError:
        return ""


def text_at_head(repo: Repo, rel: str) -> str:
    """The text of `rel` at HEAD; for a directory, the lines of every file under it."""
    try:
        return run(repo, "show", f"HEAD:{rel}")
    except GitError:
        return run(repo, "grep", "-h", "-e", "", "HEAD", "--", rel)
