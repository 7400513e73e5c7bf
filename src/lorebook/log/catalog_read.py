"""Records read back from their shards for a catalog query, redacted like the log.

A line edited by hand (or written before a rule existed) may hold a secret the writer never
saw, so every record a query returns is sanitized again. Most shards hold nothing to redact,
and re-sanitizing their records was most of the cost of a large read (an epic: ~60 %). So
the catalog remembers which shards were verified clean: every record in the file had nothing to
redact under the current rules. The memo (`clean` table) holds only a shard's path, identity
(inode, size, mtime and ctime, which no edit can set back) and a key of the rules, never a
value; a shard whose identity or rules changed since is verified again, from the same bytes the
query returns, and one that is not clean has each of its records redacted as before.

`lore actions --json` on a pipe prints compact JSON: for most lines, the shard's own bytes. A
clean shard whose every line is also exactly what `compact` makes of its record (the writer's
canonical lines are) is remembered under a second key, and `CleanReads.lines` passes its lines
through without parsing or re-encoding them; any other line is parsed, redacted and encoded.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterable, Iterator

from ..model import decode_line
from ..problems import OnProblem, Problem
from ..store import settled as settled_at
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
_MAX_VERIFY = 4 << 20  # larger shards are redacted record by record, never read whole
_MAX_KEPT = 32 << 20  # bytes of verified files a query keeps to read its records from
# what `compact` writes; a memo made for another output is not taken for this one
_FORMAT = "verbatim: json.dumps(ensure_ascii=False, separators=(',', ':')), UTF-8"
_DIRTY, _CLEAN, _VERBATIM = 0, 1, 2  # a shard's state in a query (see CleanReads)


def compact(value: Any) -> str:
    """Compact JSON as `lore ... --json` prints it on a pipe (cli.output.to_json)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


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


_RULES: dict[str, tuple[str, str]] = {}  # settings -> keys, once per process


def rules_key(sanitizer: Sanitizer) -> str:
    """What decides whether a record has something to redact: the configured rules and the
    code that applies them (the redaction package and the writer's choice of free fields)."""
    return rules_keys(sanitizer)[0]


def rules_keys(sanitizer: Sanitizer) -> tuple[str, str]:
    """(clean, clean and verbatim): the memo's key for a shard with nothing to redact, and for
    one whose lines are also the bytes `compact` makes of their records (this module's code
    decides that, so it is part of the second key)."""
    settings = repr(sanitizer.settings())
    keys = _RULES.get(settings)
    if keys is None:
        parts = _rules_parts(settings)
        keys = _RULES[settings] = (_digest(parts), _digest([*parts, _FORMAT, _stamp(__file__)]))
    return keys


def _rules_parts(settings: str) -> list[str]:
    from ..redact import sanitize
    from . import writer

    folder = os.path.dirname(sanitize.__file__)
    sources = [os.path.join(folder, n) for n in sorted(os.listdir(folder)) if n.endswith(".py")]
    return [settings, *(_stamp(source) for source in [*sources, writer.__file__])]


def _stamp(source: str) -> str:
    st = os.stat(source)
    return f"{source}:{st.st_size}:{st.st_mtime_ns}"


def _digest(parts: list[str]) -> str:
    try:  # hashlib.blake2b without hashlib's OpenSSL start-up (as in lorebook.log.catalog)
        from _blake2 import blake2b
    except ImportError:  # pragma: no cover - a Python built without it
        from hashlib import blake2b

    return blake2b("\n".join(parts).encode(), digest_size=12).hexdigest()


class CleanReads:
    """The records of catalog rows, redacted unless their shard is known clean (see above)."""

    def __init__(self, conn: sqlite3.Connection, base: Any, sanitizer: Sanitizer) -> None:
        self.conn = conn
        self.reader = LineReader(base)
        self.sanitizer = sanitizer
        self.rules, self.verbatim_rules = rules_keys(sanitizer)
        self.state: dict[str, int] = {}  # path -> _DIRTY, _CLEAN or _VERBATIM, as found now
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
            record = self._record(rid, path, off, length, archived, on_problem)
            if record is not None:
                yield record

    def lines(
        self, rows: Iterable[tuple[str, str, int, int, int]], on_problem: OnProblem | None = None
    ) -> Iterator[bytes]:
        """`compact(record)` in UTF-8 for each record `records` yields, in the same order: a
        verbatim shard's line is its own bytes, any other record is parsed and encoded."""
        quote = json.encoder.encode_basestring
        for rid, path, off, length, archived in rows:
            if self._state(path, archived) == _VERBATIM:
                raw = self._whole_line(path, off, length)
                if raw is not None and f'"id":{quote(rid)}'.encode() in raw:
                    yield raw
                    continue
            record = self._record(rid, path, off, length, archived, on_problem)
            if record is not None:
                yield compact(record).encode("utf-8", "surrogatepass")  # printed as to_json's

    def _state(self, path: str, archived: int) -> int:
        state = self.state.get(path)
        if state is None:
            state = self.state[path] = _DIRTY if archived else self._check(path)
        return state

    def _record(
        self, rid: str, path: str, off: int, length: int, archived: int,
        on_problem: OnProblem | None,
    ) -> dict[str, Any] | None:  # fmt: skip
        clean = self._state(path, archived) != _DIRTY
        whole = self.whole.get(path)
        if whole is not None:
            record = parse_at(whole[off : off + length], rid)
        else:
            record = record_at(self.reader, rid, path, off, length, archived)
        if record is None:
            if on_problem is not None:
                on_problem(Problem(path, 0, f"changed since the catalog was synced (id {rid})"))
            return None
        if clean:
            return record
        return next(redacted(self.sanitizer, (record,)))

    def _whole_line(self, path: str, off: int, length: int) -> bytes | None:
        """The line at `off` without its newline when the row still frames one whole line of
        the verified file (a newline before it, or the file's start, and one ending it)."""
        whole = self.whole.get(path)
        if whole is not None:
            raw = whole[off : off + length]
            framed = off == 0 or whole[off - 1 : off] == b"\n"
        else:
            fd = self.reader.fd(path)
            if fd is None:
                return None
            start = off - 1 if off else 0
            data = os.pread(fd, length + off - start, start)
            framed = off == 0 or data[:1] == b"\n"
            raw = data[off - start :]
        if framed and len(raw) == length and raw.endswith(b"\n"):
            return raw[:-1]
        return None

    def _memo(self, path: str) -> tuple[Any, ...] | None:
        if not self.has_table:
            return None
        try:
            return memo_row(self.conn, path)
        except sqlite3.OperationalError:  # no memo yet (or of another shape): verify
            self.has_table = False
            return None

    def _check(self, path: str) -> int:
        """The shard's state: remembered for its identity, else verified now."""
        fd = self.reader.fd(path)
        if fd is None:
            return _DIRTY
        st = os.fstat(fd)
        identity = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        memo = self._memo(path)
        if memo is not None and memo[:4] == identity:
            if memo[4] == self.verbatim_rules:
                return _VERBATIM
            if memo[4] == self.rules:
                return _CLEAN
        if st.st_size > _MAX_VERIFY:
            return _DIRTY
        data = os.pread(fd, st.st_size, 0)
        if len(data) != st.st_size:
            return _DIRTY
        if self.kept + len(data) <= _MAX_KEPT:  # the query reads its records from these bytes
            self.whole[path] = data
            self.kept += len(data)
        state = self._verify(data)
        if state != _DIRTY and settled(identity, time.time_ns()):
            rules = self.verbatim_rules if state == _VERBATIM else self.rules
            self.verified.append((path, *identity, rules))
        return state

    def _verify(self, data: bytes) -> int:
        """_DIRTY when a line has something to redact (or is damaged: no verdict for the file),
        _VERBATIM when every line is also `compact` of its record, else _CLEAN."""
        records = []
        verbatim = True
        for raw in data.split(b"\n"):
            if not raw.strip():
                continue
            try:
                record = json.loads(raw)
            except ValueError:
                return _DIRTY
            if not isinstance(record, dict):
                return _DIRTY
            records.append(record)
            if verbatim:
                try:
                    verbatim = compact(record).encode() == raw
                except UnicodeEncodeError:  # a lone surrogate: never printed as it is stored
                    verbatim = False
        checked = zip(redacted(self.sanitizer, records), records, strict=True)
        if not all(out is record for out, record in checked):
            return _DIRTY
        return _VERBATIM if verbatim else _CLEAN

    def close(self) -> None:
        """Close the files and remember the shards verified clean (skipped if the catalog is
        busy: the memo only saves work)."""
        self.reader.close()
        remember(self.conn, self.verified)
        self.verified.clear()


Identity = tuple[int, int, int, int]  # a shard's inode, size, mtime and ctime (ns)


def memo_row(conn: sqlite3.Connection, path: str) -> tuple[Any, ...] | None:
    """The memo's (inode, size, mtime, ctime, rules) of a shard; OperationalError without one."""
    row = conn.execute(
        "SELECT ino, size, mtime_ns, ctime_ns, rules FROM clean WHERE path=?", (path,)
    ).fetchone()
    return None if row is None else tuple(row)


def settled(identity: Identity, now_ns: int) -> bool:
    """Whether a file's identity can be trusted: not modified within its mtime tick."""
    return settled_at(max(identity[2], identity[3]), now_ns)


def vouched(
    conn: sqlite3.Connection, shards: dict[str, Identity], sanitizer: Sanitizer
) -> set[str]:
    """Of `shards` (catalog path -> identity), those the memo says have nothing to redact under
    the current rules, as they are now (another identity is verified again by the caller)."""
    keys = rules_keys(sanitizer)
    found: set[str] = set()
    for path, identity in shards.items():
        try:
            row = memo_row(conn, path)
        except sqlite3.OperationalError:  # no memo yet
            return found
        if row is not None and row[:4] == identity and row[4] in keys:
            found.add(path)
    return found


def remember_clean(
    conn: sqlite3.Connection, shards: dict[str, Identity], sanitizer: Sanitizer
) -> None:
    """Remember `shards` (catalog path -> identity), each found to hold only records with
    nothing to redact under the current rules; a shard modified too recently to trust its
    identity is left out."""
    now = time.time_ns()
    rules = rules_keys(sanitizer)[0]
    rows = [(path, *identity, rules) for path, identity in shards.items() if settled(identity, now)]
    remember(conn, rows)


def remember(conn: sqlite3.Connection, rows: list[tuple[Any, ...]]) -> None:
    """Write memo rows (skipped if the catalog is busy: the memo only saves work)."""
    if not rows:
        return
    try:
        conn.execute("PRAGMA busy_timeout=0")
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute(CLEAN_TABLE)
            conn.executemany("INSERT OR REPLACE INTO clean VALUES (?,?,?,?,?,?)", rows)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    except sqlite3.OperationalError:
        pass  # locked by a writer or read-only: verified again next time
