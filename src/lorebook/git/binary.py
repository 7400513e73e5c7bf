"""Read-only git state for resume, from the git binary (no GitPython import).

`start_git_state` launches its two git processes at once and returns a function that collects
them, so callers overlap git's index scan with their own work.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

GitState = dict[str, Any]


def _spawn(root: Path, *args: str) -> subprocess.Popen[str] | None:
    try:
        return subprocess.Popen(
            ["git", "-C", str(root), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            text=True,
        )
    except OSError:
        return None


def _collect(proc: subprocess.Popen[str] | None, timeout: float = 10) -> str | None:
    if proc is None:
        return None
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return None
    return out if proc.returncode == 0 else None


def _parse_status(status: str) -> tuple[str | None, str | None, int | None, list[str]]:
    branch: str | None = None
    head: str | None = None
    unpushed: int | None = None
    dirty: list[str] = []
    skip_next = False
    for entry in status.split("\0"):
        if skip_next:  # the original path of a rename
            skip_next = False
            continue
        if entry.startswith("# branch.head "):
            name = entry.removeprefix("# branch.head ")
            branch = None if name == "(detached)" else name
        elif entry.startswith("# branch.oid "):
            oid = entry.removeprefix("# branch.oid ")
            head = None if oid == "(initial)" else oid
        elif entry.startswith("# branch.ab "):
            unpushed = int(entry.split()[2].lstrip("+"))
        elif entry.startswith("1 "):
            dirty.append(entry.split(" ", 8)[-1])
        elif entry.startswith("u "):
            dirty.append(entry.split(" ", 10)[-1])
        elif entry.startswith("2 "):
            dirty.append(entry.split(" ", 9)[-1])
            skip_next = True
        elif entry.startswith("? "):
            dirty.append(entry[2:])
    return branch, head, unpushed, dirty


def start_git_state(
    root: Path, *, max_paths: int = 50, exclude: tuple[str, ...] = ()
) -> Callable[[], GitState | None]:
    """Start reading branch, head, dirty paths, unpushed count and the last commit.

    Paths under `exclude` (the action log, whose shards change while work goes on) are left
    out. The returned function gives the state, or None outside a git work tree / without git.
    """
    pathspec = ["--", ".", *(f":(exclude){path}" for path in exclude)] if exclude else []
    status_proc = _spawn(
        root, "status", "--porcelain=v2", "--branch", "-z", "--untracked-files=normal", *pathspec
    )
    log_proc = _spawn(root, "log", "-1", "--format=%H%x00%h%x00%s%x00%an%x00%cI")

    def collect() -> GitState | None:
        status = _collect(status_proc)
        log = _collect(log_proc)  # fails harmlessly on a repository without commits
        if status is None:
            return None
        branch, head, unpushed, dirty = _parse_status(status)
        last_commit = None
        if head and log:
            full, short, subject, author, date = ([*log.rstrip("\n").split("\0"), "", "", ""])[:5]
            last_commit = {
                "hash": full,
                "short": short,
                "subject": subject,
                "author": author,
                "date": date,
            }
        return {
            "branch": branch,
            "head": head,
            "dirty": dirty[:max_paths],
            "dirty_count": len(dirty),
            "unpushed": unpushed,
            "last_commit": last_commit,
        }

    return collect


def git_state(root: Path, *, max_paths: int = 50, exclude: tuple[str, ...] = ()) -> GitState | None:
    """The git state of `root` (see `start_git_state`), waiting for it."""
    return start_git_state(root, max_paths=max_paths, exclude=exclude)()


# -- committing one file (expertise updates) -------------------------------------------------
def run_git(root: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run git in `root`; a missing binary or a timeout becomes a LoreError."""
    from ..errors import LoreError

    try:
        return subprocess.run(
            ["git", "-C", str(root), *args],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=timeout,
        )
    except OSError as exc:
        raise LoreError(f"cannot run git: {exc.strerror or exc}") from None
    except subprocess.TimeoutExpired:
        raise LoreError(f"git {args[0]} took longer than {timeout:.0f}s") from None


def is_work_tree(root: Path) -> bool:
    done = run_git(root, "rev-parse", "--is-inside-work-tree")
    return done.returncode == 0 and done.stdout.strip() == "true"


def staged_paths(root: Path) -> list[str]:
    """Paths with staged changes (relative to the repository top level)."""
    done = run_git(root, "diff", "--cached", "--name-only", "-z")
    if done.returncode != 0:  # e.g. a repository without commits: everything staged is new
        done = run_git(root, "ls-files", "--cached", "-z")
    return [p for p in done.stdout.split("\0") if p]


def repo_path(root: Path, path: Path) -> str:
    """`path` as git names it: relative to the repository's top level."""
    done = run_git(root, "rev-parse", "--show-toplevel")
    top = Path(done.stdout.strip()) if done.returncode == 0 else root
    return path.resolve().relative_to(top.resolve()).as_posix()


def commit_file(root: Path, path: Path, message: str) -> str:
    """Commit exactly `path` (its working-tree content) with `message`; return the commit hash.

    Other staged or unstaged changes are never included (`git commit --only`).
    """
    from ..errors import LoreError

    add = run_git(root, "add", "--", str(path))
    if add.returncode != 0:
        raise LoreError(f"git add failed: {_first_line(add.stderr)}")
    done = _commit_with_message(root, path, message)
    if done.returncode != 0:
        raise LoreError(f"git commit failed: {_first_line(done.stderr or done.stdout)}")
    head = run_git(root, "rev-parse", "HEAD")
    return head.stdout.strip()


def _commit_with_message(root: Path, path: Path, message: str) -> subprocess.CompletedProcess[str]:
    from ..errors import LoreError

    try:
        return subprocess.run(
            ["git", "-C", str(root), "commit", "--quiet", "--only", "-F", "-", "--", str(path)],
            input=message,
            capture_output=True,
            text=True,
            timeout=120,
        )
    except OSError as exc:
        raise LoreError(f"cannot run git: {exc.strerror or exc}") from None
    except subprocess.TimeoutExpired:
        raise LoreError("git commit took longer than 120s") from None


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0] if lines else "(no message from git)"


def file_log(root: Path, path: Path, limit: int | None = None) -> list[dict[str, str]]:
    """The commits that touched `path`, newest first, following renames."""
    fmt = "%H%x1f%h%x1f%an%x1f%aI%x1f%s%x1f%b%x1e"
    args = ["log", "--follow", f"--format={fmt}"]
    if limit is not None:
        args.append(f"-n{limit}")
    done = run_git(root, *args, "--", str(path))
    if done.returncode != 0:
        return []
    out = []
    for chunk in done.stdout.split("\x1e"):
        parts = chunk.strip("\n").split("\x1f")
        if len(parts) < 6:
            continue
        full, short, author, date, subject, body = parts[:6]
        out.append(
            {
                "commit": full,
                "short": short,
                "author": author,
                "date": date,
                "subject": subject,
                "body": body.strip(),
            }
        )
    return out
