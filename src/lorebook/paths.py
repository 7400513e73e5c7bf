"""Where the store lives: root discovery and the layout of its files."""

from __future__ import annotations

import os
from pathlib import Path

from .errors import NotInitializedError

STORE_DIR = ".lore"
OUTSIDE = "symlink outside the repository"  # the problem reported for such files
DEFAULT_PATHS = {  # `paths.*` in the config moves them (relative to the root)
    "actionlog": "actionlog",
    "learnings": "learnings",
    "expertise": ".expertise",
    "reports": "docs/reports",
    "training_data": "docs/training-data",
}
# the comment `lore init` writes above the union-merge rule in `.gitattributes`
UNION_COMMENT = "# lorebook: action-log shards are append-only; union merges never conflict"


class Layout:
    """Absolute paths of every part of a store; `config.yaml` may move the committed parts.

    A plain class, not a dataclass: importing dataclasses costs milliseconds on the append path.
    """

    __slots__ = ("actionlog", "expertise", "learnings", "reports", "root", "training_data")

    def __init__(
        self,
        root: Path,
        actionlog: Path,
        learnings: Path,
        expertise: Path,
        reports: Path,
        training_data: Path,
    ) -> None:
        self.root = root
        self.actionlog = actionlog
        self.learnings = learnings
        self.expertise = expertise
        self.reports = reports
        self.training_data = training_data

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Layout) and all(
            getattr(self, name) == getattr(other, name) for name in self.__slots__
        )

    def __hash__(self) -> int:
        return hash(tuple(getattr(self, name) for name in self.__slots__))

    def __repr__(self) -> str:
        return f"Layout(root={self.root!r})"

    @property
    def store(self) -> Path:
        return self.root / STORE_DIR

    @property
    def cache(self) -> Path:
        return self.store / "cache"

    @property
    def config_file(self) -> Path:
        return self.store / "config.yaml"

    @property
    def drafts(self) -> Path:
        return self.learnings / "drafts"

    @property
    def archive(self) -> Path:
        return self.actionlog / "archive"

    @property
    def attributes(self) -> Path:
        """The `.gitattributes` holding the union-merge rule for shards (`lore init` adds it)."""
        return self.root / ".gitattributes"

    @property
    def union_rule(self) -> str:
        """The `.gitattributes` line that merges two clones' lines of one shard by union."""
        return f"{self.rel(self.actionlog)}/**/*.jsonl merge=union"

    def leaves_repository(self, path: Path | str) -> bool:
        """True when `path` resolves, through symlinks, to a place outside the repository:
        such a file is neither read nor written (a committed link could point anywhere)."""
        real = os.path.realpath(path)
        top = os.path.realpath(self.root)
        return real != top and not real.startswith(top.rstrip(os.sep) + os.sep)

    def rel(self, path: Path) -> str:
        """A path relative to the root, for messages and findings."""
        try:
            return str(path.relative_to(self.root))
        except ValueError:
            return str(path)

    @classmethod
    def at(cls, root: Path, overrides: dict[str, str] | None = None) -> Layout:
        paths = {**DEFAULT_PATHS, **(overrides or {})}
        return cls(root=root, **{k: (root / v) for k, v in paths.items()})


def find_root(start: Path | None = None, *, env: dict[str, str] | None = None) -> Path:
    """`LORE_ROOT`, else the nearest directory with `.lore/`, else the git top level, else cwd."""
    environ = os.environ if env is None else env
    if environ.get("LORE_ROOT"):
        return Path(environ["LORE_ROOT"]).expanduser().resolve()
    here = (start or Path.cwd()).resolve()
    for candidate in (here, *here.parents):
        if (candidate / STORE_DIR).is_dir():
            return candidate
    return git_toplevel(here) or here


def require_store(root: Path) -> None:
    """Refuse with one actionable line when the store was never initialised."""
    if not (root / STORE_DIR).is_dir():
        raise NotInitializedError(f"no lorebook store at {root}: run `lore init` there first")


def git_toplevel(start: Path) -> Path | None:
    """The nearest directory at or above `start` holding `.git` (a directory, or a file in a
    worktree or submodule); None outside a repository. A filesystem walk, no git process."""
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    return None
