"""File primitives: one locked append of one complete line, and atomic whole-file writes.

Appends take an exclusive `flock` on the shard itself (per open file description, so it excludes
other threads and processes alike) and write the whole record with a single `write`. A torn tail
left by a crash is closed with a newline first; a failed write is rolled back so no partial line
is ever left behind by us.
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
    return LoreError(f"{path}: is a symlink; lorebook does not write through symlinks")


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


def _describe(exc: OSError, path: Path | str) -> str:
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return f"{path}: not writable ({exc.strerror}); nothing was written"
    if exc.errno == errno.ELOOP:
        return str(refused_symlink(path))
    if exc.errno == errno.EISDIR:
        return f"{path}: is a directory, not a shard file; nothing was written"
    if exc.errno == errno.ENOSPC:
        return f"{path}: no space left on device; nothing was written"
    return f"{path}: {exc.strerror or exc}; nothing was written"


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
        raise LoreError(_describe(exc, path)) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        size = os.fstat(fd).st_size
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
            raise LoreError(_describe(exc, path)) from None
    except OSError as exc:
        raise LoreError(_describe(exc, path)) from None
    finally:
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
        raise LoreError(_describe(exc, path)) from None
