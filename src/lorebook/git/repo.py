"""GitPython access for the knowledge base: open the repository, run git, clean errors.

Imported only by review and staleness; never by `import lorebook` or the append path.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import git

from ..errors import LoreError


class GitError(LoreError):
    """A git operation failed; the message is git's own first line."""


def open_repo(root: Path) -> git.Repo:
    """The git repository holding `root`; LoreError when there is none."""
    try:
        return git.Repo(root, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise LoreError(
            f"{root} is not inside a git repository: learnings are reviewed through git"
        ) from None


def first_line(text: str) -> str:
    """The line of git's output that says what went wrong (GitPython wraps it in quotes)."""
    lines = [
        line.strip().removeprefix("stderr:").strip().strip("'").strip()
        for line in text.strip().splitlines()
    ]
    lines = [line for line in lines if line]
    hint = [line for line in lines if line.lower().startswith(("fatal:", "error:"))]
    return (hint or lines or ["(no message)"])[0]


def run(repo: git.Repo, *args: str, env: Mapping[str, str] | None = None) -> str:
    """`git <args>` in the repository; GitError with git's message when it fails."""
    kwargs: dict[str, Any] = {"env": dict(env)} if env else {}
    try:
        out: str = repo.git.execute(["git", *args], **kwargs)
    except git.GitCommandError as exc:
        detail = first_line(str(exc.stderr or exc.stdout or exc))
        raise GitError(f"git {args[0]} failed: {detail}") from None
    return out


def rel_path(repo: git.Repo, path: Path) -> str:
    """`path` relative to the repository's top level, with '/' separators (ValueError when it
    is outside). The file itself is not resolved: git tracks a symlink as the link."""
    top = Path(repo.working_tree_dir or ".").resolve()
    real = path.resolve() if path.name in ("", "..") else path.parent.resolve() / path.name
    return real.relative_to(top).as_posix()


def store_blob(repo: git.Repo, data: bytes, scratch: Path) -> str:
    """Write a blob into the object database (via a file in `scratch`); its hex id."""
    path = scratch / "blob"
    path.write_bytes(data)
    return run(repo, "hash-object", "-w", "--no-filters", "--", str(path)).strip()


def head_commit(repo: git.Repo) -> str | None:
    try:
        return repo.head.commit.hexsha
    except ValueError:  # no commits yet
        return None


def current_branch(repo: git.Repo) -> str | None:
    try:
        return repo.active_branch.name
    except TypeError:  # detached HEAD
        return None


def staged_paths(repo: git.Repo) -> list[str]:
    """Paths whose staged content differs from HEAD (everything staged, without commits)."""
    if head_commit(repo) is None:
        out = run(repo, "ls-files", "--cached", "-z")
    else:
        out = run(repo, "diff", "--cached", "--name-only", "-z", "HEAD")
    return [p for p in out.split("\0") if p]


def tracked_in_head(repo: git.Repo, rel: str) -> bool:
    if head_commit(repo) is None:
        return False
    return bool(run(repo, "ls-tree", "--name-only", "HEAD", "--", rel).strip())
