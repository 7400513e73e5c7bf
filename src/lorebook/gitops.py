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
