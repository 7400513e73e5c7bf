"""Where the store lives: root discovery and the layout of its files.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import os

from .errors import NotInitializedError, UsageError

TYPE_CHECKING = False  # pathlib costs `lore log` ~8 ms (urllib.parse, ipaddress): see find_root_dir
if TYPE_CHECKING:
    from pathlib import Path

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

    def inside(self, base: Path, given: str, what: str) -> Path:
        """`given` (a caller's path, relative to `base`) as an absolute path: see `inside`."""
        from pathlib import Path

        return Path(inside(base, given, what, root=self.root))

    @classmethod
    def at(cls, root: Path, overrides: dict[str, str] | None = None) -> Layout:
        paths = {**DEFAULT_PATHS, **(overrides or {})}
        for key, value in (overrides or {}).items():  # a committed config must not move us out
            inside(root, value, f"paths.{key}", root=root, links=False)
        return cls(root=root, **{k: (root / v) for k, v in paths.items()})


def _within(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip(os.sep) + os.sep)


def inside(
    base: Path | str, given: str, what: str, *, root: Path | str | None = None, links: bool = True
) -> str:
    """The absolute path of `given`, a path a caller supplied (an MCP argument, a CLI option,
    a config value), relative to `base`, the folder it belongs in; a one-line UsageError
    naming `what` when it is absolute, leads out of `base` (`..`), or (with `links`, for a
    path about to be opened) when a folder on the way resolves through a symlink out of
    `base` (or `base` out of `root`), or the file itself is a symlink. Callers open the result
    with O_NOFOLLOW; this is the one rule every caller-supplied path goes through."""
    shown = repr(str(given))
    if not str(given).strip() or "\x00" in str(given):
        raise UsageError("{} {}: not a usable path", what, shown)
    if os.path.isabs(given):
        raise UsageError("{} {}: must be a relative path, not an absolute one", what, shown)
    top = os.path.abspath(base)
    target = os.path.normpath(os.path.join(top, given))
    if target == top or not _within(target, top):
        place = top if root is None else os.path.relpath(top, root)
        place = "the repository" if place == os.curdir else place
        raise UsageError("{} {}: must name a file inside {}", what, shown, place)
    if not links:
        return target
    real_top = os.path.realpath(top)
    if root is not None and not _within(real_top, os.path.realpath(root)):
        raise UsageError("{} {}: its folder is a {}", what, shown, OUTSIDE)
    if not _within(os.path.realpath(os.path.dirname(target)), real_top):
        raise UsageError("{} {}: a folder on the way is a symlink leading outside", what, shown)
    if os.path.islink(target):
        raise UsageError(
            "{} {}: is a symlink; lorebook does not write through symlinks", what, shown
        )
    return target


def find_root(start: Path | None = None, *, env: dict[str, str] | None = None) -> Path:
    """`LORE_ROOT`, else the nearest directory with `.lore/`, else the git top level, else cwd."""
    from pathlib import Path

    return Path(find_root_dir(None if start is None else str(start), env=env))


def find_root_dir(start: str | None = None, *, env: dict[str, str] | None = None) -> str:
    """`find_root` as a string, with os.path alone: the append path never imports pathlib."""
    environ = os.environ if env is None else env
    if environ.get("LORE_ROOT"):
        return os.path.realpath(os.path.expanduser(environ["LORE_ROOT"]))
    here = os.path.realpath(start or os.getcwd())
    for candidate in _up(here):
        if os.path.isdir(os.path.join(candidate, STORE_DIR)):
            return candidate
    return git_toplevel_dir(here) or here


def _up(start: str) -> list[str]:
    """`start` and every directory above it (as `Path.parents`), nearest first."""
    found = [start]
    while (parent := os.path.dirname(found[-1])) != found[-1]:
        found.append(parent)
    return found


def require_store(root: Path | str) -> None:
    """Refuse with one actionable line when the store was never initialised."""
    if not os.path.isdir(os.path.join(root, STORE_DIR)):
        raise NotInitializedError("no lorebook store at {}: run `lore init` there first", root)


def git_toplevel(start: Path) -> Path | None:
    """The nearest directory at or above `start` holding `.git` (a directory, or a file in a
    worktree or submodule); None outside a repository. A filesystem walk, no git process."""
    found = git_toplevel_dir(str(start))
    return None if found is None else type(start)(found)


def git_toplevel_dir(start: str) -> str | None:
    """`git_toplevel` as a string."""
    for candidate in _up(start):
        if os.path.exists(os.path.join(candidate, ".git")):
            return candidate
    return None
