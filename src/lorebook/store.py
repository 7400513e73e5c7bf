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
from pathlib import Path

from .errors import LoreError


def _describe(exc: OSError, path: Path | str) -> str:
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return f"{path}: not writable ({exc.strerror}); nothing was written"
    if exc.errno == errno.EISDIR:
        return f"{path}: is a directory, not a shard file; nothing was written"
    if exc.errno == errno.ENOSPC:
        return f"{path}: no space left on device; nothing was written"
    return f"{path}: {exc.strerror or exc}; nothing was written"


def append_line(path: Path | str, line: bytes, *, fsync: bool = False, header: bytes = b"") -> None:
    """Append `header + line` (each newline-terminated) atomically with respect to other writers.

    `header` is written only when the file is empty (e.g. an automatic session's start event).
    """
    flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
    try:
        try:
            fd = os.open(path, flags, 0o644)
        except FileNotFoundError:  # the first record of a day: create the day directory
            os.makedirs(os.path.dirname(path), exist_ok=True)
            fd = os.open(path, flags, 0o644)
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


def temp_path(path: Path) -> Path:
    """The temp file beside `path` that `write_temp` fills (hidden, one per process)."""
    return path.with_name(f".{path.name}.{os.getpid()}.tmp")


def write_temp(path: Path, data: bytes, *, exclusive: bool = False) -> Path:
    """Write `data`, synced to disk, to `temp_path(path)` for the caller to rename or link into
    place (and to remove on failure). OSError propagates."""
    tmp = temp_path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(tmp, "xb" if exclusive else "wb") as handle:
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
