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

A `Catalog` keeps its connection open between reads (`close()` lends it back; see `_Kept`): a
long-lived `Lorebook` answers without SQLite's open and close, and still syncs on every read.
It is reopened when the file was deleted or replaced, never used by a forked child, and closed
by `Catalog.close()` (`Lorebook.close()`). The sync itself is in `catalog_sync`.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import os
import sqlite3
import time
from _thread import allocate_lock
from _weakref import ref as weak_ref  # = weakref.ref, without weakref.py (~0.5 ms cold)
from pathlib import Path

from ..errors import LoreError
from ..progress import CATALOG_BUILD
from ..redact.sanitize import Sanitizer
from ..store import refuse_symlinks
from .catalog_rows import (
    INDEXES,
    SESSIONS_RULE,
    TABLES,
    refold_stale_sessions,
    refresh_sessions,
)
from .catalog_schema import (
    FILE_NAME,
    HOT_DAYS,
    SCHEMA_VERSION,
    CatalogUnavailable,
    SyncStats,
    day_names,
    meta,
)
from .catalog_sync import Rebuild, Sync, SyncMemo

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..progress import Progress

__all__ = [
    "FILE_NAME",
    "HOT_DAYS",
    "SCHEMA_VERSION",
    "Catalog",
    "CatalogUnavailable",
    "SyncStats",
    "day_names",
]
_BUSY_MS = 15000
_ORPHANS: list[sqlite3.Connection] = []  # a parent's connections, never touched in a child


class _Kept(sqlite3.Connection):
    """A catalog connection that `close()` hands back to its `Catalog` to be lent again: each
    read then skips SQLite's open and close (with WAL, the last close checkpoints), ~3 ms of
    a resume. It is lent to one user at a time, from any thread (the TUI reads in workers)."""

    home: weak_ref[Catalog] | None = None
    sync_memo: SyncMemo | None = None  # what its syncs listed (see catalog_sync.SyncMemo)

    def close(self) -> None:
        catalog = self.home() if self.home is not None else None
        if catalog is None or not catalog._give_back(self):
            self.home = None
            super().close()


def _really_close(conn: sqlite3.Connection) -> None:
    if isinstance(conn, _Kept):
        conn.home = None
    conn.close()


def _checkpoint(conn: sqlite3.Connection) -> None:
    """Move what a sync wrote from the WAL into the database file, as closing the last
    connection did before connections were kept: the file's size is then the catalog's, and a
    process that exits without closing leaves no large WAL for the next one to replay. Never
    waits: with another reader or writer active it does what it can (the next sync retries)."""
    conn.execute("PRAGMA busy_timeout=0")
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    except sqlite3.OperationalError:
        pass  # busy: the frames stay in the WAL, where every reader sees them anyway
    finally:
        conn.execute(f"PRAGMA busy_timeout={_BUSY_MS}")


def _forget_listings(conn: sqlite3.Connection) -> None:
    memo = getattr(conn, "sync_memo", None)
    if memo is not None:
        memo.clear()


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


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
        self._pid = os.getpid()
        self._lock = allocate_lock()
        self._idle: _Kept | None = None  # the kept connection, when no one uses it
        self._lent: _Kept | None = None  # the kept connection, while someone uses it
        self._file: tuple[int, int] | None = None  # (device, inode) the kept one has open

    # -- opening -------------------------------------------------------------------------------
    def exists(self) -> bool:
        return self.path.is_file()

    def connect(self) -> sqlite3.Connection:
        """An open connection on a catalog of the current schema (tables created if needed).

        A file that is not a database (or is damaged) is deleted and created again. The
        connection is kept open for the next `connect()` when closed (see `_Kept`).
        """
        kept = self._reuse()
        if kept is not None:
            return kept
        for attempt in (1, 2):
            conn = None
            try:
                refuse_symlinks(self.path)
                self.path.parent.mkdir(parents=True, exist_ok=True)
                before = _identity(self.path)
                conn = self._open()
                self._ensure_schema(conn)
                self._adopt(conn, before)
                return conn
            except sqlite3.DatabaseError as exc:
                if conn is not None:
                    _really_close(conn)
                text = str(exc)
                if attempt == 2 or "locked" in text or "busy" in text or "unable to open" in text:
                    raise CatalogUnavailable(f"cannot open {self.path}: {exc}") from None
                try:
                    self._remove_files()
                except OSError as gone:
                    raise CatalogUnavailable(f"cannot replace {self.path}: {gone}") from None
            except OSError as exc:
                if conn is not None:
                    _really_close(conn)
                raise CatalogUnavailable(f"cannot open {self.path}: {exc}") from None
            except LoreError as exc:  # a symlinked cache folder
                raise CatalogUnavailable(str(exc)) from None
        raise AssertionError("unreachable")

    def _open(self) -> sqlite3.Connection:
        conn = sqlite3.connect(
            self.path,
            timeout=_BUSY_MS / 1000,
            isolation_level=None,
            factory=_Kept,
            check_same_thread=False,  # lent to one user at a time, whichever thread (see _Kept)
        )
        conn.execute(f"PRAGMA busy_timeout={_BUSY_MS}")
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")  # a cache: a lost tail is re-read next sync
        conn.execute("PRAGMA cache_size=-32000")
        conn.sync_memo = SyncMemo()
        return conn

    # -- the kept connection -------------------------------------------------------------------
    def _slot(self) -> None:
        """Forget a connection kept by the parent process: a forked child never uses, nor
        closes, a parent's SQLite connection (it would act on the parent's locks)."""
        if self._pid != os.getpid():
            if self._idle is not None:
                _ORPHANS.append(self._idle)
            if self._lent is not None:
                self._lent.home = None
                _ORPHANS.append(self._lent)
            self._lock = allocate_lock()
            self._idle = self._lent = None
            self._pid = os.getpid()

    def _reuse(self) -> _Kept | None:
        """The kept connection, if idle and still on the catalog's file (another process may
        have deleted or replaced it: then it is closed and the file opened again)."""
        self._slot()
        with self._lock:
            conn = self._idle
            if conn is None or self._lent is not None:
                return None
            self._idle = None
            if _identity(self.path) != self._file:
                _really_close(conn)
                return None
            self._lent = conn
        try:
            self._ensure_schema(conn)  # another process may have rebuilt it in place
        except sqlite3.Error:
            with self._lock:
                self._lent = None
            conn.home = None
            _really_close(conn)
            return None
        return conn

    def _adopt(self, conn: sqlite3.Connection, before: tuple[int, int] | None) -> None:
        """Keep `conn` for later when no other is kept and its file was not replaced while it
        was opened (`before`: None when it was created then)."""
        if not isinstance(conn, _Kept):
            return
        self._slot()
        now = _identity(self.path)
        with self._lock:
            free = self._idle is None and self._lent is None
            if free and now is not None and before in (None, now):
                self._file = now
                self._lent = conn
                conn.home = weak_ref(self)

    def _give_back(self, conn: _Kept) -> bool:
        """Take back a lent connection (True), or False when it is to be closed for real."""
        if self._pid != os.getpid():
            _ORPHANS.append(conn)  # lent before a fork: the child leaves it alone
            return True
        try:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            conn.execute(f"PRAGMA busy_timeout={_BUSY_MS}")  # a reader may have lowered it
        except sqlite3.Error:
            with self._lock:
                if self._lent is conn:
                    self._lent = None
            return False
        with self._lock:
            if self._lent is not conn:
                return False
            self._lent = None
            self._idle = conn
        return True

    def close(self) -> None:
        """Close the kept connection (one lent out now is closed when its user closes it)."""
        self._slot()
        with self._lock:
            idle, self._idle = self._idle, None
            lent, self._lent = self._lent, None
        if lent is not None:
            lent.home = None
        if idle is not None:
            _really_close(idle)

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
        _forget_listings(conn)
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
            if rebuild or meta(conn, "built") is None:
                stats.rebuilt, stats.reason = True, "rebuild requested" if rebuild else "new"
                self._build(conn, stats, progress)
            else:
                full = full or self.verify_all
                try:
                    progress_to = progress if full else None
                    Sync(self, conn, stats, full, progress=progress_to, since=since).run()
                except Rebuild as why:
                    stats = SyncStats(rebuilt=True, reason=str(why))
                    self._build(conn, stats, progress)
            refold_stale_sessions(conn)
            conn.execute("COMMIT")
        except BaseException:
            _forget_listings(conn)  # they may describe rows the rollback undid
            conn.execute("ROLLBACK")
            raise
        if stats.rebuilt or stats.shards_read or stats.shards_removed:
            _checkpoint(conn)
        stats.seconds = time.perf_counter() - started
        return stats

    def _build(
        self, conn: sqlite3.Connection, stats: SyncStats, progress: Progress | None = None
    ) -> None:
        """Everything from scratch: indexes are created after the bulk load (much faster)."""
        self._reset(conn)
        for statement in INDEXES:
            if " ON records(" in statement:
                conn.execute(f"DROP INDEX IF EXISTS {statement.split()[5]}")
        sync = Sync(self, conn, stats, True, sessions=False, progress=progress, after=1)
        sync.run()
        for statement in INDEXES:
            conn.execute(statement)
        refresh_sessions(conn, None)
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('built', ?)", (str(time.time()),))
        if progress is not None and sync.total:  # the indexes were the last step
            progress(CATALOG_BUILD, sync.total, sync.total)
