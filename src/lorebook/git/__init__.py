"""Git: every repository operation lorebook makes goes through this package.

Two ways in, by cost. `binary` runs the git command for the cold paths - resume, hooks,
export, expertise updates, auto-drafts - where a git process (a few ms) is cheaper than
importing GitPython (~180 ms). `repo` uses GitPython, the design's choice for repository
operations where the import does not matter: review (a branch commit built in a temporary
index, commits on the current branch), learning history and staleness. This module itself re-exports
`toplevel` (a filesystem walk that lives with the paths, which need it for the root lookup).

Failures are one-line `LoreError`s: git missing, not a repository, a failed command
(`GitError`, with git's own first line).

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

from ..paths import git_toplevel as toplevel

__all__ = ["toplevel"]
