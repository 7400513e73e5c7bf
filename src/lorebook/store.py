"""File primitives: one locked append of one complete line, and atomic whole-file writes.

Appends take an exclusive `flock` on the shard itself (per open file description, so it excludes
other threads and processes alike) and write the whole record with a single `write`. A torn tail
left by a crash is closed with a newline first; a failed write is rolled back so no partial line
is ever left behind by us.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat

from .errors import LoreError
from .paths import STORE_DIR

TYPE_CHECKING = False  # the append path imports neither typing nor pathlib
if TYPE_CHECKING:
    from pathlib import Path

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def refused_symlink(path: Path | str) -> LoreError:
    return LoreError("{}: is a symlink; lorebook does not write through symlinks", path)


def refuse_symlinks(path: Path | str) -> None:
    """LoreError naming the link when `path`, or a folder between it and the root of the
    store it lies in, is a symlink: a link (even a committed one) must not redirect our writes
    outside the repository. A path in no store (e.g. `lore export -o /tmp/x`) is the user's."""
    current = os.path.abspath(path)
    link = None
    while True:
        try:
            if stat.S_ISLNK(os.lstat(current).st_mode):
                link = current  # keep walking up: the outermost link is the one to name
        except OSError:
            pass  # not created yet
        parent = os.path.dirname(current)
        if parent == current:
            return
        if os.path.isdir(os.path.join(parent, STORE_DIR)):
            if link is not None:
                raise refused_symlink(link)
            return
        current = parent


def write_failure(exc: OSError, path: Path | str) -> LoreError:
    """The one-line error for a write to `path` that failed with `exc`."""
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return LoreError("{}: not writable ({}); nothing was written", path, exc.strerror)
    if exc.errno == errno.ELOOP:
        return refused_symlink(path)
    if exc.errno == errno.EISDIR:
        return LoreError("{}: is a directory, not a shard file; nothing was written", path)
    if exc.errno == errno.ENOSPC:
        return LoreError("{}: no space left on device; nothing was written", path)
    return LoreError("{}: {}; nothing was written", path, exc.strerror or exc)


def append_line(path: Path | str, line: bytes, *, fsync: bool = False, header: bytes = b"") -> None:
    """Append `header + line` (each newline-terminated) atomically with respect to other writers.

    `header` is written only when the file is empty (e.g. an automatic session's start event).
    Never through a symlink: `O_NOFOLLOW` refuses a linked shard at no cost, and the folders
    above it are checked when the shard is created (an existing shard was checked then).
    """
    flags = os.O_RDWR | os.O_APPEND | os.O_CLOEXEC | _NOFOLLOW
    try:
        try:
            fd = os.open(path, flags)
        except FileNotFoundError:  # a new shard (perhaps of a new day: create the folders)
            refuse_symlinks(os.path.dirname(path))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            fd = os.open(path, flags | os.O_CREAT, 0o644)
    except OSError as exc:
        raise write_failure(exc, path) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        info = os.fstat(fd)
        if info.st_nlink == 0:  # replaced while we waited (`lore sync` dropped repeated lines)
            os.close(fd)
            fd = -1
            return append_line(path, line, fsync=fsync, header=header)
        size = info.st_size
        data = line
        if size == 0:
            data = header + line
        elif os.pread(fd, 1, size - 1) != b"\n":
            data = b"\n" + line  # a writer died mid-line: start ours on a fresh one
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            if fsync:
                os.fsync(fd)
        except OSError as exc:
            os.ftruncate(fd, size)  # roll back whatever part of the line reached the file
            raise write_failure(exc, path) from None
    except OSError as exc:
        raise write_failure(exc, path) from None
    finally:
        if fd >= 0:
            os.close(fd)  # closing releases the lock


def create_file(path: Path | str, *, exclusive: bool = False) -> int:
    """A descriptor on `path` created (or truncated) for writing; never follows a symlink
    there (ELOOP), and with `exclusive` never opens an existing file (FileExistsError)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC | _NOFOLLOW
    return os.open(path, flags | (os.O_EXCL if exclusive else os.O_TRUNC), 0o666)


def temp_path(path: Path) -> Path:
    """The temp file beside `path` that `write_temp` fills (hidden, one per process)."""
    return path.with_name(f".{path.name}.{os.getpid()}.tmp")


def write_temp(path: Path, data: bytes, *, exclusive: bool = False) -> Path:
    """Write `data`, synced to disk, to `temp_path(path)` for the caller to rename or link into
    place (and to remove on failure). OSError propagates; LoreError when `path` or a folder
    above it in the store is a symlink (nothing is written then)."""
    tmp = temp_path(path)
    refuse_symlinks(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(create_file(tmp, exclusive=exclusive), "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    return tmp


def atomic_write(path: Path, data: bytes) -> None:
    """Replace `path` with `data` so readers see the old or the new file, never a mix."""
    tmp = temp_path(path)
    try:
        os.replace(write_temp(path, data), path)
    except OSError as exc:
        try:  # noqa: SIM105 - contextlib is not imported on the append path
            tmp.unlink(missing_ok=True)
        except OSError:  # e.g. the parent is a file: there is no temp file to remove
            pass
        raise write_failure(exc, path) from None


# -- git operations in progress --------------------------------------------------------------
# While a rebase, merge, cherry-pick, revert, bisect or am is paused, git owns the tracked
# files: `--abort` resets them (an appended record is lost) and `--continue` refuses a changed
# one. Records then go to a side shard beside the session's (untracked: git leaves it alone);
# readers read every shard of a day and `lore sync` folds it back into the session's shard.
SIDE = "~during-git"  # `<session>~during-git.jsonl`: "~" never occurs in a session id
GIT_OPERATIONS = (
    ("rebase-merge", "rebase"),
    ("rebase-apply", "rebase"),  # or `git am`
    ("MERGE_HEAD", "merge"),
    ("CHERRY_PICK_HEAD", "cherry-pick"),
    ("REVERT_HEAD", "revert"),
    ("BISECT_LOG", "bisect"),
)


def find_git_dir(start: str) -> str | None:
    """The git directory of the work tree holding `start` (a worktree's `.git` is a file
    naming it), found with a few stats and no git process; None outside a repository."""
    current = os.path.abspath(start)
    while True:
        dot = os.path.join(current, ".git")
        if os.path.isdir(dot):
            return dot
        if os.path.isfile(dot):
            try:
                with open(dot, encoding="utf-8") as handle:
                    text = handle.read(4096).strip()
            except (OSError, UnicodeDecodeError):
                return None
            if text.startswith("gitdir:"):
                return os.path.join(current, text[7:].strip())
            return None
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


# -- freshness: the one rule for every derived file and cache -----------------------------------
# A file's stat (size, mtime, and where it matters inode and ctime) stands for its content only
# once the file is older than the file system clock's tick: a change made within the same tick
# as our look keeps the stat we saw (git's "racy" entries). So a stat is trusted only if it was
# seen RACY_NS or more after the file last changed; a cache built from a newer file is not
# kept, or is checked again. Every cache (config, catalog, learning parses, git state, the
# index's manifest and keyword files, the paused-operation check below) uses this rule.
RACY_NS = 2_000_000_000


def settled(changed_ns: int, seen_ns: int) -> bool:
    """Whether a stat seen at `seen_ns` of a file last changed at `changed_ns` (its mtime, or
    the later of mtime and ctime) can stand for the file's content."""
    return seen_ns - changed_ns >= RACY_NS


# git dir -> (its mtime when scanned, when scanned, the answer): git creates and removes these
# entries in the git dir itself, so an unchanged mtime means an unchanged answer: one stat per
# append, trusted only once settled.
_OPERATION_SEEN: dict[str, tuple[int, int, str | None]] = {}


def git_operation(git_dir: str) -> str | None:
    """The git operation paused in `git_dir` (rebase, merge, …), else None."""
    import time  # (built in: nothing to load)

    try:
        mtime = os.stat(git_dir).st_mtime_ns
    except OSError:
        return None
    seen = _OPERATION_SEEN.get(git_dir)
    if seen is not None and seen[0] == mtime and settled(mtime, seen[1]):
        return seen[2]
    found = _scan_operation(git_dir)
    _OPERATION_SEEN[git_dir] = (mtime, time.time_ns(), found)
    return found


def _scan_operation(git_dir: str) -> str | None:
    for name, operation in GIT_OPERATIONS:
        if os.path.lexists(os.path.join(git_dir, name)):
            if name == "rebase-apply" and os.path.lexists(os.path.join(git_dir, name, "applying")):
                return "am"
            return operation
    return None


def drop_repeated_lines(path: str) -> int:
    """Rewrite a shard without its exact repeated lines (the first of each kept, in order),
    atomically (temp file + rename, never through a symlink), holding the shard's append lock
    so no concurrent append is lost; how many lines were dropped. Distinct lines are all kept."""
    from pathlib import Path  # (not on the append path)

    refuse_symlinks(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | _NOFOLLOW)
    except OSError as exc:
        raise write_failure(exc, path) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with os.fdopen(os.dup(fd), "rb") as handle:
            data = handle.read()
        seen: set[bytes] = set()
        kept: list[bytes] = []
        lines = data.splitlines(keepends=True)
        for raw in lines:
            key = raw if raw.endswith(b"\n") else raw + b"\n"
            if key.strip() and key in seen:
                continue
            seen.add(key)
            kept.append(raw)
        dropped = len(lines) - len(kept)
        if dropped:
            atomic_write(Path(path), b"".join(kept))
        return dropped
    finally:
        os.close(fd)
