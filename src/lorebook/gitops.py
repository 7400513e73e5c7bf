"""Read-only git state for resume, from the git binary (two subprocesses, no GitPython import)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def git_state(root: Path, *, max_paths: int = 50) -> dict[str, Any] | None:
    """Branch, head, dirty paths, unpushed count (None without upstream) and the last commit.

    None when `root` is not inside a git work tree or git is unavailable.
    """
    status = _git(root, "status", "--porcelain=v2", "--branch", "-z", "--untracked-files=normal")
    if status is None:
        return None
    branch: str | None = None
    head: str | None = None
    unpushed: int | None = None
    dirty: list[str] = []
    entries = status.split("\0")
    skip_next = False
    for entry in entries:
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
            ahead = entry.split()[2]
            unpushed = int(ahead.lstrip("+"))
        elif entry.startswith(("1 ", "u ")):
            dirty.append(entry.split(" ", 8)[-1] if entry[0] == "1" else entry.split(" ", 10)[-1])
        elif entry.startswith("2 "):
            dirty.append(entry.split(" ", 9)[-1])
            skip_next = True
        elif entry.startswith("? "):
            dirty.append(entry[2:])
    last_commit = None
    if head:
        log = _git(root, "log", "-1", "--format=%H%x00%h%x00%s%x00%an%x00%cI")
        if log:
            full, short, subject, author, date = (log.rstrip("\n").split("\0") + [""] * 5)[:5]
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
