"""The git state `lore resume` shows, reused while nothing git reads has changed.

Asking git costs more than the rest of resume: `git status` reads the whole index, whose tens
of thousands of entries are mostly the log's own shards. Its answer is a function of files: the
repository's HEAD, refs, index and config, the ignore files, the tracked files outside the
log, and the directories where an untracked file could appear. After git answered, those are
listed and their identities (mode, inode, size, mtime, ctime) kept with the answer in
`.lore/cache/git-state.json`; the next call stats the same entries and reuses the answer only
when every identity is unchanged. An entry changed since git started (or within the clock's
granularity before) makes the answer uncacheable, as git's own "racy" index entries are: a
reused answer is never staler than what git would say. Trees too large to watch cheaply, a
`.git` file (worktrees, submodules) or submodules are not cached: git is asked every time.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path

from ..store import settled

TYPE_CHECKING = False  # typing costs milliseconds on the cold paths; mypy still sees it
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

VERSION = 1
MAX_ENTRIES = 4000  # beyond this, statting costs about what git does: ask git
_ENV_KEYS = ("HOME", "XDG_CONFIG_HOME")
Identity = list[int] | None


def identity(path: str) -> Identity:
    """What changes when the entry at `path` changes (None: missing); symlinks not followed."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return [st.st_mode, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def environment() -> dict[str, str]:
    """The environment git reads its repository and config locations from."""
    env = os.environ  # keys only are decoded for the test (every resume asks)
    return {key: env[key] for key in env if key.startswith("GIT_") or key in _ENV_KEYS}


def _git_dir(root: Path) -> str | None:
    """The `.git` directory above `root`; None for a `.git` file or outside a repository."""
    for candidate in (root, *root.parents):
        git = candidate / ".git"
        if git.is_dir():
            return str(git)
        if git.exists():
            return None
    return None


def _config_files(git_dir: str, root: str) -> list[str] | None:
    """The config and ignore files git reads, with the ignore/attributes files the configs name;
    None when a config includes another (not followed: nothing is cached)."""
    home = os.environ.get("HOME", "")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    configs = [
        os.path.join(git_dir, "config"),
        os.path.join(home, ".gitconfig"),
        os.path.join(xdg, "git", "config"),
        os.environ.get("GIT_CONFIG_GLOBAL") or "/etc/gitconfig",
        os.environ.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig",
    ]
    named = []
    for config in configs:
        try:
            with open(config, encoding="utf-8", errors="replace") as handle:
                lines = handle.read(1 << 20).splitlines()
        except OSError:
            continue
        for line in lines:
            text = line.strip()
            if text.lower().startswith("[include"):
                return None
            key, equals, value = text.partition("=")
            if equals and key.strip().lower() in ("excludesfile", "attributesfile"):
                path = os.path.expanduser(value.split("#")[0].split(";")[0].strip().strip('"'))
                named.append(os.path.join(root, path))  # an absolute path stays as it is
    ignores = [os.path.join(git_dir, "info", "exclude"), os.path.join(xdg, "git", "ignore"),
               os.path.join(xdg, "git", "attributes")]  # fmt: skip
    return [*configs, *ignores, *named]


def _ref_files(git_dir: str, upstream: str | None) -> list[str]:
    """HEAD, the ref it names, the upstream's possible refs, the packed refs and the index."""
    files = [os.path.join(git_dir, name) for name in ("HEAD", "packed-refs", "index")]
    try:
        with open(files[0], encoding="utf-8", errors="replace") as handle:
            head = handle.read(4096).strip()
    except OSError:
        head = ""
    if head.startswith("ref: "):
        files.append(os.path.join(git_dir, head[5:]))
    if upstream:
        files += [os.path.join(git_dir, "refs", kind, upstream) for kind in ("remotes", "heads")]
    return files


class Watch:
    """The entries a git answer depends on, gathered after git answered (see `snapshot`)."""

    def __init__(self, root: Path, exclude: tuple[str, ...]) -> None:
        self.root = str(root)
        self.skip = {".git", *(path.strip("/") for path in exclude)}
        self.paths: list[str] = []

    def add(self, path: str) -> bool:
        self.paths.append(path)
        return len(self.paths) <= MAX_ENTRIES

    def walk(self, ignored: set[str]) -> bool:
        """Every directory git looks into for untracked files and every entry in them (the
        tracked files are among them: a directory git lists as wholly ignored holds none);
        False when there are too many to watch or a repository is nested (a submodule's
        state is inside it)."""
        pending = [""]
        while pending:
            rel = pending.pop()
            folder = os.path.join(self.root, rel) if rel else self.root
            if not self.add(folder):
                return False
            try:
                with os.scandir(folder) as listing:
                    entries = list(listing)
            except OSError:
                return False
            for entry in entries:
                name = f"{rel}{entry.name}"
                if not rel and entry.name in self.skip:
                    continue
                if entry.name in (".git", ".gitmodules"):
                    return False
                if entry.is_dir(follow_symlinks=False):
                    if f"{name}/" not in ignored:
                        pending.append(f"{name}/")
                elif not self.add(entry.path):
                    return False
        return True


def load(cache: Path, key: dict[str, Any]) -> dict[str, Any] | None:
    """The cached state when `key` matches and no watched entry changed; else None."""
    try:
        with open(cache, encoding="utf-8") as handle:
            data = json.load(handle)
        if data.get("version") != VERSION or data.get("key") != key:
            return None
        paths, marks = data["paths"], data["identities"]
        if len(paths) != len(marks):
            return None
        for path, mark in zip(paths, marks, strict=True):
            if identity(path) != mark:
                return None
        state: dict[str, Any] | None = data["state"]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None  # no usable cache: git answers, and the file is written again
    return state


def store(
    cache: Path,
    key: dict[str, Any],
    state: dict[str, Any],
    watch: Watch,
    started_ns: int,
) -> bool:
    """Keep `state` if no watched entry changed after (or just before) git started."""
    marks = [identity(path) for path in watch.paths]
    if any(mark is not None and not settled(max(mark[3], mark[4]), started_ns) for mark in marks):
        return False
    data = {"version": VERSION, "key": key, "state": state, "paths": watch.paths,
            "identities": marks}  # fmt: skip
    temporary = f"{cache}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(temporary), exist_ok=True)
        with open(temporary, "w", encoding="utf-8") as handle:
            json.dump(data, handle, separators=(",", ":"))
        os.replace(temporary, cache)
    except OSError:  # a cache only: the answer is right, the next call asks git again
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        return False
    return True


def key_for(
    root: Path, exclude: tuple[str, ...], max_paths: int, redaction: str = ""
) -> dict[str, Any] | None:
    """What a cached answer must have been asked with (`redaction` names the rules it was
    redacted by); None where no answer is cached."""
    git_dir = _git_dir(root)
    if git_dir is None:
        return None
    return {"root": str(root), "git_dir": git_dir, "exclude": list(exclude),
            "max_paths": max_paths, "env": environment(), "redaction": redaction}  # fmt: skip


def remember(
    cache: Path,
    key: dict[str, Any],
    state: dict[str, Any],
    *,
    upstream: str | None,
    ignored: str,
    started_ns: int,
    safe_name: Callable[[str], bool] | None = None,
) -> bool:
    """Cache `state` (git started at `started_ns`; `ignored`: `ls-files --others --ignored
    --directory -z` under the root) unless it cannot be watched cheaply or changed since, or a
    watched path is not a `safe_name` (one holding a secret is never written to the cache)."""
    watch = Watch(Path(key["root"]), tuple(key["exclude"]))
    git_dir = key["git_dir"]
    configs = _config_files(git_dir, key["root"])
    if configs is None:
        return False
    for path in (*_ref_files(git_dir, upstream), *configs):
        watch.add(path)
    if not watch.walk({path for path in ignored.split("\0") if path.endswith("/")}):
        return False
    if safe_name is not None and not all(map(safe_name, watch.paths)):
        return False
    return store(cache, key, state, watch, started_ns)


def now_ns() -> int:
    return time.time_ns()
