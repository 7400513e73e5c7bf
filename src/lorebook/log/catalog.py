"""The action catalog: a derived SQLite index of the action log in `.lore/cache/catalog.sqlite`.

The shards stay the truth. A sync reads only the bytes appended to each shard since the last one
(per-shard offset, inode, size, mtime and a hash of the last synced bytes); a shard that shrank,
was replaced or edited in place, disappeared or was archived has its rows rebuilt from the file.
Rows are keyed by action id, so union-merge duplicates count once. A catalog of another schema
version, or one that is not a database, is rebuilt. Writers serialize on SQLite's write lock
(WAL mode, busy timeout), so concurrent `lore` processes never corrupt it; readers never wait.

Which shards a sync looks at: every shard of the days from `HOT_DAYS` before the previous sync on
(appends since then land there; the writer bumps the directory mtime of any other day it writes
to), and of every day directory whose mtime changed (files created, replaced or removed: new
sessions, git checkouts and merges, archiving). With `full=True` (`lore catalog`, or
`catalog.verify: all`) every shard is stat-ed, which also catches a hand edit of an old shard in
an unchanged directory. A sync `since` a day (what `lore resume` asks: the days its candidate
sessions span) looks only at the day directories from that day or the hot days on, whichever is
older; the others keep their recorded mtimes, so a later sync still sees what changed there.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import time
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

try:  # what hashlib.blake2b is, without hashlib's OpenSSL start-up (~5 ms of every read)
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - a Python built without it
    from hashlib import blake2b

from ..errors import LoreError
from ..progress import CATALOG_BUILD, CATALOG_CHECK
from ..redact.sanitize import Sanitizer
from ..store import refuse_symlinks
from .archive_io import iter_archives, read_archive_bytes
from .catalog_rows import (
    INDEXES,
    INSERT,
    SESSIONS_RULE,
    TABLES,
    fold_sessions,
    parse_lines,
    redact_rows,
    refold_stale_sessions,
    refresh_sessions,
)

TYPE_CHECKING = False  # typing costs milliseconds on cold paths; mypy still sees it
if TYPE_CHECKING:
    from typing import Any, NamedTuple
else:
    from ..tuples import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..progress import Progress

SCHEMA_VERSION = 5  # 5: free-text columns are redacted
FILE_NAME = "catalog.sqlite"
HOT_DAYS = 2
_TAIL = 4096
_BUSY_MS = 15000
_RESTAMP_S = 3600.0  # `synced_at` is rewritten by a sync that changes nothing at most hourly
_RACY_NS = 2_000_000_000  # a directory mtime this recent may hide a change in the same tick


class CatalogUnavailable(Exception):
    """The catalog cannot be used right now (locked, unwritable, corrupt): scan instead."""


_STATS = ("rebuilt", "reason", "shards_checked", "shards_read", "shards_reindexed",
          "shards_removed", "bytes_read", "records_added", "seconds")  # fmt: skip


class SyncStats:
    """What one sync did (a plain class: `dataclasses` costs every cold read ~10 ms)."""

    __slots__ = _STATS

    def __init__(self, *, rebuilt: bool = False, reason: str = "") -> None:
        self.rebuilt = rebuilt
        self.reason = reason
        self.shards_checked = 0
        self.shards_read = 0
        self.shards_reindexed = 0
        self.shards_removed = 0
        self.bytes_read = 0
        self.records_added = 0
        self.seconds = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in _STATS}

    def __repr__(self) -> str:
        return f"SyncStats({', '.join(f'{k}={v!r}' for k, v in self.to_dict().items())})"


class _Shard(NamedTuple):
    id: int
    path: str
    dir: str
    day: str
    session: str
    archived: int
    ino: int
    size: int
    mtime_ns: int
    offset: int
    lines: int
    tail_hash: str


def _hash(data: bytes) -> str:
    return blake2b(data, digest_size=12).hexdigest()


class Catalog:
    """The catalog of one store; `connect()` opens it (creating or rebuilding as needed)."""

    def __init__(
        self, actionlog: Path, cache: Path, sanitizer: Sanitizer, *, verify_all: bool = False
    ) -> None:
        """`sanitizer` redacts what rows copy from the shards (see catalog_rows.redact_rows)."""
        self.sanitizer = sanitizer
        self.actionlog = actionlog
        self.archive = actionlog / "archive"
        self.base = actionlog.parent
        self.path = cache / FILE_NAME
        self.verify_all = verify_all

    # -- opening -------------------------------------------------------------------------------
    def exists(self) -> bool:
        return self.path.is_file()

    def connect(self) -> sqlite3.Connection:
        """An open connection on a catalog of the current schema (tables created if needed).

        A file that is not a database (or is damaged) is deleted and created again.
        """
        for attempt in (1, 2):
            conn = None
            try:
                refuse_symlinks(self.path)
                self.path.parent.mkdir(parents=True, exist_ok=True)
                conn = self._open()
                self._ensure_schema(conn)
                return conn
            except sqlite3.DatabaseError as exc:
                if conn is not None:
                    conn.close()
                text = str(exc)
                if attempt == 2 or "locked" in text or "busy" in text or "unable to open" in text:
                    raise CatalogUnavailable(f"cannot open {self.path}: {exc}") from None
                try:
                    self._remove_files()
                except OSError as gone:
                    raise CatalogUnavailable(f"cannot replace {self.path}: {gone}") from None
            except OSError as exc:
                if conn is not None:
                    conn.close()
                raise CatalogUnavailable(f"cannot open {self.path}: {exc}") from None
            except LoreError as exc:  # a symlinked cache folder
                raise CatalogUnavailable(str(exc)) from None
        raise AssertionError("unreachable")

    def _open(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=_BUSY_MS / 1000, isolation_level=None)
        conn.execute(f"PRAGMA busy_timeout={_BUSY_MS}")
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")  # a cache: a lost tail is re-read next sync
        conn.execute("PRAGMA cache_size=-32000")
        return conn

    def _remove_files(self) -> None:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)

    def _version(self, conn: sqlite3.Connection) -> str | None:
        try:
            row = conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):
                return None
            raise
        return str(row[0]) if row else None

    def _ensure_schema(self, conn: sqlite3.Connection) -> None:
        if self._version(conn) == str(SCHEMA_VERSION):
            return
        conn.execute("BEGIN IMMEDIATE")
        try:
            if self._version(conn) != str(SCHEMA_VERSION):  # another process may have done it
                self._reset(conn)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def _reset(self, conn: sqlite3.Connection) -> None:
        """Drop everything (any schema version) and create empty tables."""
        names = [
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'"
            )
        ]
        for name in names:
            conn.execute(f'DROP TABLE IF EXISTS "{name}"')
        for statement in TABLES.strip().split(";"):
            if statement.strip():
                conn.execute(statement)
        for statement in INDEXES:
            conn.execute(statement)
        conn.execute("INSERT INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
        conn.execute("INSERT INTO meta VALUES ('sessions_rule', ?)", (SESSIONS_RULE,))

    # -- syncing -------------------------------------------------------------------------------
    def sync(
        self,
        conn: sqlite3.Connection,
        *,
        full: bool = False,
        rebuild: bool = False,
        progress: Progress | None = None,
        since: str | None = None,
    ) -> SyncStats:
        """Bring the catalog up to date with the shards (one write transaction). `progress`
        hears of a build and of a full check, shard by shard; an incremental sync is quick.
        With `since` (`YYYY-MM-DD`), only the day directories from that day (or the hot days)
        on are looked at."""
        started = time.perf_counter()
        stats = SyncStats()
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            raise CatalogUnavailable(f"{self.path}: {exc}") from None
        try:
            if rebuild or self._meta(conn, "built") is None:
                stats.rebuilt, stats.reason = True, "rebuild requested" if rebuild else "new"
                self._build(conn, stats, progress)
            else:
                full = full or self.verify_all
                try:
                    progress_to = progress if full else None
                    _Sync(self, conn, stats, full, progress=progress_to, since=since).run()
                except _Rebuild as why:
                    stats = SyncStats(rebuilt=True, reason=str(why))
                    self._build(conn, stats, progress)
            refold_stale_sessions(conn)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        stats.seconds = time.perf_counter() - started
        return stats

    def _meta(self, conn: sqlite3.Connection, key: str) -> str | None:
        row = conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return str(row[0]) if row else None

    def _build(
        self, conn: sqlite3.Connection, stats: SyncStats, progress: Progress | None = None
    ) -> None:
        """Everything from scratch: indexes are created after the bulk load (much faster)."""
        self._reset(conn)
        for statement in INDEXES:
            if " ON records(" in statement:
                conn.execute(f"DROP INDEX IF EXISTS {statement.split()[5]}")
        sync = _Sync(self, conn, stats, True, sessions=False, progress=progress, after=1)
        sync.run()
        for statement in INDEXES:
            conn.execute(statement)
        refresh_sessions(conn, None)
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('built', ?)", (str(time.time()),))
        if progress is not None and sync.total:  # the indexes were the last step
            progress(CATALOG_BUILD, sync.total, sync.total)


class _Sync:
    """One pass over the store's directories, inside the caller's write transaction."""

    def __init__(
        self,
        cat: Catalog,
        conn: sqlite3.Connection,
        stats: SyncStats,
        full: bool,
        *,
        sessions: bool = True,
        progress: Progress | None = None,
        after: int = 0,
        since: str | None = None,
    ) -> None:
        """`progress` hears of the shards looked at, with `after` steps more (the caller's)
        in the total: a build is `catalog.build`, a full check `catalog.check`."""
        self.sessions = sessions
        self.progress = progress
        self.task = CATALOG_BUILD if after else CATALOG_CHECK
        self.after = after
        self.total = 0
        self.since = None if full else since
        self.cat = cat
        self.conn = conn
        self.stats = stats
        self.full = full
        self.touched: set[str] = set()  # sessions whose summary is recomputed from all rows
        self.appended: dict[str, list[tuple[Any, ...]]] = {}  # rows to fold into a summary
        self.dup_risk = False
        base = os.path.normpath(cat.base)
        self.base_prefix = base if base.endswith(os.sep) else base + os.sep

    def run(self) -> None:
        conn = self.conn
        self.dup_risk = self.cat._meta(conn, "dup_risk") == "1"
        # appends since the last sync can only be in its days or later ones (the writer bumps
        # the directory of any other day): those shards are stat-ed, the rest only on change
        stamp = float(self.cat._meta(conn, "synced_at") or 0)
        last = stamp or time.time()
        since = datetime.fromtimestamp(min(last, time.time()), UTC) - timedelta(days=HOT_DAYS)
        hot = since.strftime("%Y-%m-%d")
        # a partial sync still covers the hot days: stamping it keeps what the next one needs
        first = min(self.since, hot) if self.since else None
        if first is None:
            dirs = dict(conn.execute("SELECT path, mtime_ns FROM dirs"))
        else:  # the live days from `first` on ('d/...' keys; '0' sorts right after '/')
            bounds = (f"d/{first}", "d0")
            sql = "SELECT path, mtime_ns FROM dirs WHERE path >= ? AND path < ?"
            dirs = dict(conn.execute(sql, bounds))
        if not 0 <= time.time() - stamp < _RESTAMP_S:  # an older stamp only widens the hot days:
            # most reads then write nothing, and closing their connection checkpoints nothing
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('synced_at', ?)", (str(time.time()),))
        present: dict[str, int] = {}
        changed = []
        for key, directory, files, is_hot in self._dirs(hot, first):
            try:
                mtime = os.stat(directory).st_mtime_ns
            except OSError:
                continue
            present[key] = mtime
            if self.full or is_hot or dirs.get(key) != mtime:
                changed.append((key, files))
        for key in set(dirs) - set(present):  # forget vanished shards before reading new ones
            self._gone(self._known(key).values())
            conn.execute("DELETE FROM dirs WHERE path=?", (key,))
        listed: list[tuple[str, list[tuple[str, str, str, Any]], dict[str, _Shard]]] = []
        for key, files in changed:
            known = self._known(key)
            entries = [(self._rel(path), day, session, path)
                       for day, session, path in files()]  # fmt: skip
            listing = {rel for rel, *_ in entries}
            self._gone([shard for rel, shard in known.items() if rel not in listing])
            listed.append((key, entries, known))
        shards = sum(len(entries) for _, entries, _ in listed) if self.progress else 0
        total = self.total = shards + self.after if shards else 0
        done = 0
        if self.progress and total:
            self.progress(self.task, done, total)
        for key, entries, known in listed:
            for rel, day, session, path in entries:
                self._check(known.get(rel), rel, path, key, day, session, key[0] == "a")
            if self.progress and total:
                done += len(entries)
                self.progress(self.task, done, total)
            mtime = present[key]
            if time.time_ns() - mtime < _RACY_NS:
                mtime = -1  # changed just now, maybe within the clock's tick: look again next time
            if dirs.get(key) != mtime:
                conn.execute("INSERT OR REPLACE INTO dirs VALUES (?, ?)", (key, mtime))
        if self.sessions and (self.touched or self.appended):
            fold_sessions(conn, self.appended, self.touched)
        if self.dup_risk:
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('dup_risk', '1')")

    def _known(self, key: str) -> dict[str, _Shard]:
        return {
            row[1]: _Shard(*row)
            for row in self.conn.execute(
                "SELECT id, path, dir, day, session, archived, ino, size, mtime_ns, offset,"
                " lines, tail_hash FROM shards WHERE dir=?",
                (key,),
            )
        }

    def _gone(self, shards: Iterable[_Shard]) -> None:
        for shard in shards:
            if self.dup_risk:
                raise _Rebuild(f"{shard.path} disappeared and ids are shared between shards")
            self._forget(shard)
            self.stats.shards_removed += 1

    def _rel(self, path: Any) -> str:
        """`path` relative to the store root: a slice when it is below it (every sync lists
        hundreds of paths; `os.path.relpath` normalizes both sides each time)."""
        text = str(path)
        prefix = self.base_prefix
        if text.startswith(prefix) and "/." not in text:
            return text[len(prefix) :]
        return os.path.relpath(path, self.cat.base)

    def _dirs(self, hot: str, first: str | None) -> Iterator[tuple[str, str, Any, bool]]:
        """(key, directory, lister of (day, session, path), is_hot) for day and archive dirs;
        from day `first` on (no archive: it holds older days) when given."""
        root = str(self.cat.actionlog)
        sep = os.sep
        for day in day_names(root, first=first):
            directory = f"{root}{sep}{day[:4]}{sep}{day[5:7]}{sep}{day[8:10]}"

            def live(directory: str = directory, day: str = day) -> Iterator[Any]:
                try:
                    names = sorted(e.name for e in os.scandir(directory))
                except OSError:
                    return
                for name in names:
                    if name.endswith(".jsonl"):
                        yield day, name[: -len(".jsonl")], f"{directory}{os.sep}{name}"

            yield f"d/{day}", directory, live, day >= hot
        if first is not None:
            return
        months: dict[str, list[tuple[str, str, Path]]] = {}
        for day, session, path in iter_archives(self.cat.archive):
            months.setdefault(day[:7], []).append((day, session, path))
        for month, entries in months.items():
            yield f"a/{month}", str(entries[0][2].parent), (lambda e=entries: iter(e)), False

    def _check(
        self, old: _Shard | None, rel: str, path: Any, key: str, day: str, session: str, arch: bool
    ) -> None:
        self.stats.shards_checked += 1
        try:
            st = os.stat(path)
        except OSError:
            return
        if old is not None and old.ino == st.st_ino:
            if (old.size, old.mtime_ns) == (st.st_size, st.st_mtime_ns):
                return
            if not arch and st.st_size > old.size and self._append(old, path, st):
                return
        if old is not None:
            if self.dup_risk:
                raise _Rebuild(f"{rel} was rewritten and ids are shared between shards")
            self._forget(old)
            self.stats.shards_reindexed += 1
        shard_id = self._register(rel, key, day, session, arch)
        if stat.S_ISDIR(st.st_mode):
            self._not_a_file(shard_id, st, "is a directory, not a shard file")
        elif not stat.S_ISREG(st.st_mode):
            self._not_a_file(shard_id, st, "is not a regular file")
        else:
            self._read(shard_id, rel, path, st, 0, 0, arch)

    def _not_a_file(self, shard: int, st: os.stat_result, reason: str) -> None:
        self.conn.execute("INSERT INTO problems VALUES (?, 0, ?, 0)", (shard, reason))
        self.conn.execute(
            "UPDATE shards SET ino=?, size=?, mtime_ns=? WHERE id=?",
            (st.st_ino, st.st_size, st.st_mtime_ns, shard),
        )

    def _append(self, old: _Shard, path: Path, st: os.stat_result) -> bool:
        """Read only the appended bytes if the synced tail is unchanged; False to re-read all."""
        start = max(0, old.offset - _TAIL)
        try:
            with open(path, "rb") as handle:
                handle.seek(start)
                head = handle.read(old.offset - start)
        except OSError:
            return False
        if _hash(head) != old.tail_hash:
            return False
        self.conn.execute("DELETE FROM problems WHERE shard=? AND tail=1", (old.id,))
        self._read(old.id, old.path, path, st, old.offset, old.lines, False)
        return True

    def _register(self, rel: str, key: str, day: str, session: str, arch: bool) -> int:
        cur = self.conn.execute(
            "INSERT INTO shards(path, dir, day, session, archived, ino, size, mtime_ns, offset,"
            " lines, tail_hash) VALUES (?,?,?,?,?,0,0,0,0,0,'')",
            (rel, key, day, session, int(arch)),
        )
        assert cur.lastrowid is not None
        return cur.lastrowid

    def _forget(self, shard: _Shard) -> None:
        conn = self.conn
        self.touched.update(
            r[0]
            for r in conn.execute("SELECT DISTINCT session FROM records WHERE shard=?", (shard.id,))
        )
        conn.execute("DELETE FROM records WHERE shard=?", (shard.id,))
        conn.execute("DELETE FROM problems WHERE shard=?", (shard.id,))
        conn.execute("DELETE FROM shards WHERE id=?", (shard.id,))

    def _read(
        self, shard: int, rel: str, path: Path, st: os.stat_result, offset: int, lines: int,
        arch: bool,
    ) -> None:  # fmt: skip
        if arch:
            data, error = read_archive_bytes(path)
            if error is not None:
                self.conn.execute("INSERT INTO problems VALUES (?, 0, ?, 0)", (shard, error))
        else:
            try:
                with open(path, "rb") as handle:
                    handle.seek(offset)
                    data = handle.read()
            except OSError as exc:
                data = b""
                self.conn.execute(
                    "INSERT INTO problems VALUES (?, 0, ?, 0)",
                    (shard, f"cannot be read: {exc.strerror or exc}"),
                )
        self.stats.shards_read += 1
        self.stats.bytes_read += len(data)
        rows, problems, consumed, count = parse_lines(data, offset, lines, shard, int(arch))
        rows, problems = redact_rows(self.cat.sanitizer, rows, problems)
        if arch:
            consumed = len(data)
        conn = self.conn
        before = conn.total_changes
        conn.executemany(INSERT, rows)
        added = conn.total_changes - before
        self.stats.records_added += added
        if added < len(rows):
            self._note_duplicates(shard, rows)
        conn.executemany("INSERT INTO problems VALUES (?,?,?,?)", problems)
        if not self.sessions:
            pass  # a full build summarizes every session at the end
        elif arch or added < len(rows):
            self.touched.update(r[3] for r in rows)
        else:
            for row in rows:
                self.appended.setdefault(row[3], []).append(row)
        if arch:
            tail = _hash(data[-_TAIL:])
        else:
            tail = self._tail_hash(path, offset + consumed) if consumed else ""
        conn.execute(
            "UPDATE shards SET ino=?, size=?, mtime_ns=?, offset=?, lines=?, tail_hash=?"
            " WHERE id=?",
            (st.st_ino, st.st_size, st.st_mtime_ns, offset + consumed, count, tail, shard),
        )

    def _tail_hash(self, path: Path, end: int) -> str:
        start = max(0, end - _TAIL)
        with open(path, "rb") as handle:
            handle.seek(start)
            return _hash(handle.read(end - start))

    def _note_duplicates(self, shard: int, rows: list[tuple[Any, ...]]) -> None:
        """Some ids were already catalogued; if from another shard, per-shard rebuilds are off."""
        ids = [r[0] for r in rows]
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            marks = ",".join("?" * len(chunk))
            other = self.conn.execute(
                f"SELECT 1 FROM records WHERE id IN ({marks}) AND shard != ? LIMIT 1",
                (*chunk, shard),
            ).fetchone()
            if other:
                self.dup_risk = True
                return


class _Rebuild(Exception):
    pass


def _numbered(path: str, width: int) -> list[str]:
    try:
        with os.scandir(path) as entries:
            return sorted(
                e.name for e in entries if len(e.name) == width and e.name.isdigit() and e.is_dir()
            )
    except OSError:
        return []


def day_names(root: str, *, first: str | None = None) -> Iterator[str]:
    """`YYYY-MM-DD` of every live day directory (from day `first` on), oldest first (the
    archive is not one); earlier years and months are not listed."""
    low = first or ""
    for year in _numbered(root, 4):
        if year < low[:4]:
            continue
        for month in _numbered(f"{root}/{year}", 2):
            if f"{year}-{month}" < low[:7]:
                continue
            for day in _numbered(f"{root}/{year}/{month}", 2):
                if f"{year}-{month}-{day}" >= low:
                    yield f"{year}-{month}-{day}"
