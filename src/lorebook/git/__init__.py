"""Git: every repository operation lorebook makes goes through this package.

Two ways in, by cost. `binary` runs the git command for the cold paths - resume, hooks,
export, expertise updates, auto-drafts - where a git process (a few ms) is cheaper than
importing GitPython (~180 ms). `repo` uses GitPython, the design's choice for repository
operations where the import does not matter: review (a branch commit built in a temporary
index, commits on the current branch), learning history and staleness. This module itself holds
only `toplevel`, for the root lookup outside a store, and imports nothing.

Failures are one-line `LoreError`s: git missing, not a repository, a failed command
(`GitError`, with git's own first line).
"""

from __future__ import annotations

from pathlib import Path


def toplevel(start: Path) -> Path | None:
    """The nearest directory at or above `start` holding `.git` (a directory, or a file in a
    worktree or submodule); None outside a repository. A filesystem walk, no git process."""
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    return None
