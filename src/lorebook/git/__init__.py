"""Git: every repository operation lorebook makes goes through this package.

Two ways in, by cost. `binary` runs the git command for the cold paths - resume, hooks, the root
lookup of `lore log`, export, expertise updates, auto-drafts - where a git process (a few ms)
is cheaper than importing GitPython (~180 ms); importing this package loads neither GitPython
nor `subprocess`. `repo` uses GitPython, the design's choice for repository operations where
the import does not matter: review (a branch commit built in a temporary index, commits on the
current branch), learning history and staleness.

Failures are one-line `LoreError`s: git missing, not a repository, a failed command
(`GitError`, with git's own first line).
"""

from .binary import (
    GitError,
    GitState,
    commit_all,
    commit_file,
    commits_mentioning,
    file_log,
    git_state,
    head,
    init_repository,
    is_work_tree,
    project_paths,
    repo_path,
    reset_path,
    set_identity,
    staged_paths,
    start_git_state,
    toplevel,
    untrack_path,
)

__all__ = [
    "GitError",
    "GitState",
    "commit_all",
    "commit_file",
    "commits_mentioning",
    "file_log",
    "git_state",
    "head",
    "init_repository",
    "is_work_tree",
    "project_paths",
    "repo_path",
    "reset_path",
    "set_identity",
    "staged_paths",
    "start_git_state",
    "toplevel",
    "untrack_path",
]
