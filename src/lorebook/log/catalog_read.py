"""Records read back from their shards for a catalog query, redacted like the log.

A line edited by hand (or written before a rule existed) may hold a secret the writer never
saw, so every record a query returns is sanitized again. Most shards hold nothing to redact,
and re-sanitizing their records was most of the cost of a large read (an epic: ~60 %). So
the catalog remembers which shards were verified clean: every record in the file had nothing to
redact under the current rules. The memo (`clean` table) holds only a shard's path, identity
(inode, size, mtime and ctime, which no edit can set back) and a key of the rules, never a
value; a shard whose identity or rules changed since is verified again, from the same bytes the
query returns, and one that is not clean has each of its records redacted as before.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterable, Iterator

from ..model import decode_line
from ..problems import OnProblem, Problem
from .archive_io import read_archive_bytes
from .writer import redacted

TYPE_CHECKING = False  # typing costs milliseconds on cold paths; mypy still sees it
if TYPE_CHECKING:
    from typing import Any

    from ..redact.sanitize import Sanitizer

CLEAN_TABLE = (
    "CREATE TABLE IF NOT EXISTS clean(path TEXT PRIMARY KEY, ino INTEGER, size INTEGER,"
    " mtime_ns INTEGER, ctime_ns INTEGER, rules TEXT)"
)
_MAX_OPEN = 64
_RACY_NS = 2_000_000_000  # a file modified this recently may change again within its mtime tick
_MAX_VERIFY = 4 << 20  # larger shards are redacted record by record, never read whole
_MAX_KEPT = 32 << 20  # bytes of verified files a query keeps to read its records from


class LineReader:
    """Reads catalogued lines back from their shards, keeping a few files open."""

    def __init__(self, base: Any) -> None:
        self.base = base
        self.fds: dict[str, int] = {}
        self.archive: tuple[str, bytes] | None = None

    def fd(self, path: str) -> int | None:
        fd = self.fds.get(path)
        if fd is None:
            if len(self.fds) >= _MAX_OPEN:
                os.close(self.fds.pop(next(iter(self.fds))))
            try:
                fd = os.open(self.base / path, os.O_RDONLY | os.O_CLOEXEC)
            except OSError:
                return None
            self.fds[path] = fd
        return fd

    def line(self, path: str, off: int, length: int, archived: int) -> bytes:
        if archived:
            if self.archive is None or self.archive[0] != path:
                data, _ = read_archive_bytes(self.base / path)
                self.archive = (path, data)
            return self.archive[1][off : off + length]
        fd = self.fd(path)
        return b"" if fd is None else os.pread(fd, length, off)

    def close(self) -> None:
        for fd in self.fds.values():
            os.close(fd)
        self.fds.clear()


def parse_at(raw: bytes, rid: str) -> dict[str, Any] | None:
    """The record with id `rid` in a line, or None when the line no longer holds it."""
    try:
        record: Any = json.loads(raw)
    except ValueError:
        record = None
    if isinstance(record, dict) and record.get("id") == rid:
        return record
    checked, _ = decode_line(raw)  # validated only for the rare row that went stale
    return checked if checked is not None and checked.get("id") == rid else None


def record_at(reader: LineReader, rid: str, path: str, off: int, length: int, archived: int
              ) -> dict[str, Any] | None:  # fmt: skip
    """The record a catalog row points at, or None when the shard changed underneath."""
    return parse_at(reader.line(path, off, length, archived), rid)


_RULES: dict[str, str] = {}  # settings -> key, once per process


def rules_key(sanitizer: Sanitizer) -> str:
    """What decides whether a record has something to redact: the configured rules and the
    code that applies them (the redaction package and the writer's choice of free fields)."""
    settings = repr(sanitizer.settings())
    key = _RULES.get(settings)
    if key is None:
        key = _RULES[settings] = _rules_key(settings)
    return key


def _rules_key(settings: str) -> str:
    try:  # hashlib.blake2b without hashlib's OpenSSL start-up (as in lorebook.log.catalog)
        from _blake2 import blake2b
    except ImportError:  # pragma: no cover - a Python built without it
        from hashlib import blake2b

    from ..redact import sanitize
    from . import writer

    parts = [settings]
    folder = os.path.dirname(sanitize.__file__)
    sources = [os.path.join(folder, n) for n in sorted(os.listdir(folder)) if n.endswith(".py")]
    for source in [*sources, writer.__file__]:
        st = os.stat(source)
        parts.append(f"{source}:{st.st_size}:{st.st_mtime_ns}")
    return blake2b("\n".join(parts).encode(), digest_size=12).hexdigest()


class CleanReads:
    """The records of catalog rows, redacted unless their shard is known clean (see above)."""

    def __init__(self, conn: sqlite3.Connection, base: Any, sanitizer: Sanitizer) -> None:
        self.conn = conn
        self.reader = LineReader(base)
        self.sanitizer = sanitizer
        self.rules = rules_key(sanitizer)
        self.clean: dict[str, bool] = {}  # path -> clean, as this query found it
        self.whole: dict[str, bytes] = {}  # files read whole to verify them
        self.verified: list[tuple[Any, ...]] = []  # new memo rows
        self.has_table = True
        self.kept = 0

    def records(
        self, rows: Iterable[tuple[str, str, int, int, int]], on_problem: OnProblem | None = None
    ) -> Iterator[dict[str, Any]]:
        """The records of (id, path, offset, length, archived) rows, in order; a row whose shard
        changed since the sync is skipped (reported to `on_problem`)."""
        for rid, path, off, length, archived in rows:
            clean = self.clean.get(path)
            if clean is None:
                clean = self.clean[path] = not archived and self._check(path)
            whole = self.whole.get(path)
            if whole is not None:
                record = parse_at(whole[off : off + length], rid)
            else:
                record = record_at(self.reader, rid, path, off, length, archived)
            if record is None:
                if on_problem is not None:
                    on_problem(Problem(path, 0, f"changed since the catalog was synced (id {rid})"))
                continue
            if clean:
                yield record
            else:
                yield from redacted(self.sanitizer, (record,))

    def _memo(self, path: str) -> tuple[Any, ...] | None:
        if not self.has_table:
            return None
        try:
            row = self.conn.execute(
                "SELECT ino, size, mtime_ns, ctime_ns, rules FROM clean WHERE path=?", (path,)
            ).fetchone()
        except sqlite3.OperationalError:  # no memo yet (or of another shape): verify
            self.has_table = False
            return None
        return None if row is None else tuple(row)

    def _check(self, path: str) -> bool:
        """Whether the shard is clean: remembered for its identity, else verified now."""
        fd = self.reader.fd(path)
        if fd is None:
            return False
        st = os.fstat(fd)
        identity = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, self.rules)
        if self._memo(path) == identity:
            return True
        if st.st_size > _MAX_VERIFY:
            return False
        data = os.pread(fd, st.st_size, 0)
        if len(data) != st.st_size:
            return False
        if self.kept + len(data) <= _MAX_KEPT:  # the query reads its records from these bytes
            self.whole[path] = data
            self.kept += len(data)
        if not self._nothing_to_redact(data):
            return False
        if time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) >= _RACY_NS:
            self.verified.append((path, *identity))
        return True

    def _nothing_to_redact(self, data: bytes) -> bool:
        records = []
        for raw in data.split(b"\n"):
            if not raw.strip():
                continue
            try:
                record = json.loads(raw)
            except ValueError:
                return False  # a damaged line: no verdict for the file, redact as usual
            if not isinstance(record, dict):
                return False
            records.append(record)
        checked = zip(redacted(self.sanitizer, records), records, strict=True)
        return all(out is record for out, record in checked)

    def close(self) -> None:
        """Close the files and remember the shards verified clean (skipped if the catalog is
        busy: the memo only saves work)."""
        self.reader.close()
        if not self.verified:
            return
        conn = self.conn
        try:
            conn.execute("PRAGMA busy_timeout=0")
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.execute(CLEAN_TABLE)
                conn.executemany("INSERT OR REPLACE INTO clean VALUES (?,?,?,?,?,?)", self.verified)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        except sqlite3.OperationalError:
            pass  # locked by a writer or read-only: verified again next time
        self.verified.clear()
