"""Locks that make the embedded Chroma store safe for several processes.

Chroma is not process-safe on one path (a second opener can wait ~1000 s on SQLite). So:
* `writer`: one updater at a time (a watcher and `lore index` never embed the same files twice);
* `access`: a readers-writer lock around every use of the Chroma files — updaters hold it
  exclusively only while they write a batch, readers share it and give up after a short timeout
  (search then falls back to keywords) instead of hanging.
`flock` locks belong to open file descriptions and vanish with a crashed process.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import errno
import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from ..errors import LoreError
from ..store import refuse_symlinks


class IndexBusy(LoreError):
    """Another process holds the index lock for longer than we are willing to wait."""


class IndexReadOnly(LoreError):
    """The lock file cannot be created or opened for writing: the store is read-only."""

    def __init__(self, what: str, path: Path, reason: str) -> None:
        self.reason = f"{path}: {reason}"
        super().__init__("{}: cannot write the search index ({}: {})", what, path, reason)


_READ_ONLY = (errno.EROFS, errno.EACCES, errno.EPERM)


def _open(path: Path, *, shared: bool, what: str) -> int | None:
    """The lock file's descriptor; None for a reader on a read-only file system without one
    (nothing can write there, so there is nothing to wait for)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        if exc.errno not in _READ_ONLY:
            raise IndexReadOnly(what, path, exc.strerror or str(exc)) from None
        failure = exc
    if shared:  # flock works on a descriptor opened for reading
        try:
            return os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            if failure.errno == errno.EROFS:
                return None
        except OSError:
            pass
    raise IndexReadOnly(what, path, failure.strerror or str(failure))


@contextmanager
def flock(path: Path, *, shared: bool, timeout: float, what: str) -> Iterator[None]:
    """Hold `path` locked (shared or exclusive), polling up to `timeout` seconds."""
    refuse_symlinks(path)
    fd = _open(path, shared=shared, what=what)
    if fd is None:
        yield
        return
    try:
        mode = (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB
        deadline = time.monotonic() + timeout
        delay = 0.005
        while True:
            try:
                fcntl.flock(fd, mode)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise IndexBusy(
                        "{}: the search index is busy (locked by another process for more "
                        "than {:g} s); try again",
                        what,
                        timeout,
                    ) from None
                time.sleep(delay)
                delay = min(delay * 2, 0.1)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


class IndexLocks:
    """The two lock files of one index directory."""

    def __init__(self, folder: Path, *, read_timeout: float = 2.0, write_timeout: float = 600.0):
        self.folder = folder
        self.read_timeout = read_timeout
        self.write_timeout = write_timeout

    def writer(self, timeout: float | None = None) -> AbstractContextManager[None]:
        return flock(
            self.folder.parent / "index.writer.lock",
            shared=False,
            timeout=self.write_timeout if timeout is None else timeout,
            what="index update",
        )

    def write(self) -> AbstractContextManager[None]:
        return flock(
            self.folder.parent / "index.access.lock",
            shared=False,
            timeout=self.write_timeout,
            what="index update",
        )

    def read(self, timeout: float | None = None) -> AbstractContextManager[None]:
        return flock(
            self.folder.parent / "index.access.lock",
            shared=True,
            timeout=self.read_timeout if timeout is None else timeout,
            what="search",
        )
