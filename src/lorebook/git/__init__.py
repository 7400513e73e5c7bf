"""Git: every repository operation lorebook makes goes through this package.

One layer: every command runs the git binary through `binary`'s runner (a git process costs a
few ms, so even the cold paths - resume, hooks, export - can afford one). `binary` holds the
state reads, file history and whole-file commits; `repo` builds on it for review (a branch
commit in a temporary index, commits on the current branch), learning history and staleness;
`remote` and `sync` for `lore sync`. This module itself re-exports `toplevel` (a filesystem
walk that lives with the paths, which need it for the root lookup).

Failures are one-line `LoreError`s: git missing, not a repository, a failed command
(`GitError`, with git's own first line).

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

from ..paths import git_toplevel as toplevel

__all__ = ["toplevel"]
