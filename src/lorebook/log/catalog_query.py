"""Queries answered from the action catalog, with the same results as a scan of the shards.

`CatalogView` is what `Lorebook` uses: it syncs the catalog before answering and returns None
whenever the catalog cannot be used (disabled, locked for too long, unwritable cache), so the
caller scans the shards instead.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Iterator
from itertools import islice

from ..errors import LoreError
from ..model import INTERNAL_TYPES
from ..problems import OnProblem, ignore
from ..redact.sanitize import Sanitizer
from ..timeutil import horizon
from .catalog import Catalog, CatalogUnavailable, SyncStats, day_names
from .catalog_read import CleanReads, remember_clean, vouched
from .catalog_rows import problems_for
from .sessions import SessionInfo, latest_first, session_status

TYPE_CHECKING = False  # typing costs milliseconds on cold paths; mypy still sees it
if TYPE_CHECKING:
    from datetime import datetime
    from typing import Any, TypeVar

    from ..contracts.records import CatalogCounts, CatalogStatus
    from ..progress import Progress
    from ..settings import CatalogSettings
    from .catalog_read import Identity
    from .query import ActionFilter
    from .resume import Candidate

    T = TypeVar("T")

# the newest live record of each session (and the day of its shard), newest sessions first;
# the filters are on the session's summary so a project with no sessions costs one table scan
# ?1: the project's names as a JSON array (its repository's, its folder's), or NULL; the last
# column: whether the session did real work (an action but lorebook's own records)
_LAST_SESSIONS = """
SELECT s.id, r.ts, r.kind, r.event, r.reason, r.agent, r.project, sh.day,
  EXISTS (SELECT 1 FROM records w WHERE w.session = s.id AND w.archived = 0
    AND w.kind = 'action' AND w.type NOT IN ({internal}))
FROM sessions s
JOIN records r ON r.rid = (
  SELECT rid FROM records WHERE session = s.id AND archived = 0 ORDER BY ts DESC, id DESC LIMIT 1)
JOIN shards sh ON sh.id = r.shard
WHERE (?1 IS NULL OR s.project IN (SELECT value FROM json_each(?1)))
  AND (?2 IS NULL OR s.agent = ?2)
ORDER BY s.last_activity DESC, s.id DESC LIMIT ?3
""".format(internal=", ".join(f"'{t}'" for t in INTERNAL_TYPES))
# the last activity of the LIMIT-th most recently active session of PROJECT/AGENT
_NTH_SESSION = """
SELECT last_activity FROM sessions
WHERE (?1 IS NULL OR project IN (SELECT value FROM json_each(?1)))
  AND (?2 IS NULL OR agent = ?2)
ORDER BY last_activity DESC, id DESC LIMIT 1 OFFSET ?3 - 1
"""
# how many sessions were last active after a timestamp (read off the sess_last index)
_AHEAD = "SELECT count(*) FROM sessions WHERE last_activity > ?"
FILTER_COLUMNS = ("type", "outcome", "project", "agent", "epic", "issue", "session", "category")


class CatalogView:
    """A store's catalog, synced on use; every method returns None when it cannot be used."""

    def __init__(
        self, catalog: Catalog, *, enabled: bool = True, auto_build_days: int = 60
    ) -> None:
        self.catalog = catalog
        self.enabled = enabled
        self.auto_build_days = auto_build_days
        self.last_sync: SyncStats | None = None
        self.unavailable: str | None = None
        self.progress: Progress | None = None  # hears of builds and full checks (on_progress)

    def open(
        self,
        *,
        full: bool = False,
        rebuild: bool = False,
        create: bool = False,
        since: Callable[[sqlite3.Connection], str | None] | None = None,
    ) -> sqlite3.Connection | None:
        """A connection on a freshly synced catalog, or None (the reason in `unavailable`).

        A missing catalog is built here only for a log of at most `auto_build_days` day
        directories (a few seconds at most) or with `create`; a longer history is scanned until
        `lore catalog` builds it once. `since` reads, before the sync, the first day the
        caller's answer can depend on: only the days from it on are synced (see `Catalog.sync`).
        """
        if not self.enabled:
            self.unavailable = "disabled by catalog.enabled: false"
            return None
        if not (create or rebuild or self.catalog.exists()) and self.long_history():
            self.unavailable = (
                f"no catalog yet and more than {self.auto_build_days} days of log: "
                "run `lore catalog` once to build it"
            )
            return None
        conn = None
        try:
            conn = self.catalog.connect()
            first = since(conn) if since is not None else None
            self.last_sync = self.catalog.sync(
                conn, full=full, rebuild=rebuild, progress=self.progress, since=first
            )
        except (CatalogUnavailable, sqlite3.OperationalError) as exc:
            if conn is not None:
                conn.close()
            self.unavailable = str(exc)
            return None
        self.unavailable = None
        return conn

    def long_history(self) -> bool:
        """More day directories than a query builds a missing catalog for."""
        days = day_names(str(self.catalog.actionlog))
        return any(True for _ in islice(days, self.auto_build_days, None))

    def iter_actions(
        self,
        query: ActionFilter,
        *,
        newest_first: bool = True,
        include_archive: bool = False,
        on_problem: OnProblem,
    ) -> Iterator[dict[str, Any]] | None:
        """The matching records, redacted (see catalog_read), or None without a catalog. A
        query from a day on syncs only the day directories from that day (a record's shard is
        its own UTC day's); archives are synced when they are asked for."""
        return self._read(query, newest_first, include_archive, on_problem, CleanReads.records)

    def iter_lines(
        self,
        query: ActionFilter,
        *,
        include_archive: bool = False,
        on_problem: OnProblem,
    ) -> Iterator[bytes] | None:
        """What `iter_actions` yields (newest first), each record as its compact JSON in UTF-8:
        lines of shards verified clean and canonical as they are stored (see catalog_read)."""
        return self._read(query, True, include_archive, on_problem, CleanReads.lines)

    def _read(
        self,
        query: ActionFilter,
        newest_first: bool,
        include_archive: bool,
        on_problem: OnProblem,
        read: Callable[[CleanReads, sqlite3.Cursor, OnProblem], Iterator[T]],
    ) -> Iterator[T] | None:
        """`read` over the matching rows, the files and connection released after."""
        found = self._matching(query, newest_first, include_archive, on_problem)
        if found is None:
            return None
        conn, cursor, reads = found
        return _fetch(conn, reads, read(reads, cursor, on_problem))

    def _matching(
        self, query: ActionFilter, newest_first: bool, include_archive: bool, on_problem: OnProblem
    ) -> tuple[sqlite3.Connection, sqlite3.Cursor, CleanReads] | None:
        first = query.since[:10] if query.since and not include_archive else None
        conn = self.open(since=None if first is None else lambda _conn: first)
        if conn is None:
            return None
        sessions = [query.session] if query.session else None
        for problem in problems_for(
            conn,
            first=query.since[:10] if query.since else None,
            last=query.until[:10] if query.until else None,
            sessions=sessions,
            archived=include_archive,
        ):
            on_problem(problem)
        where, args = action_where(query, include_archive)
        order = "DESC" if newest_first else "ASC"
        cursor = conn.execute(
            "SELECT r.id, s.path, r.off, r.len, r.archived FROM records r"
            f" JOIN shards s ON s.id = r.shard WHERE {where} ORDER BY r.ts {order}, r.id {order}",
            args,
        )
        return conn, cursor, CleanReads(conn, self.catalog.base, self.catalog.sanitizer)

    def sessions(
        self,
        *,
        project: str | None,
        agent: str | None,
        now: datetime,
        idle: float,
        limit: int | None = None,
        on_problem: OnProblem = ignore,
    ) -> list[SessionInfo] | None:
        conn = self.open()
        if conn is None:
            return None
        try:
            for problem in problems_for(conn, first=None, last=None, sessions=None, archived=False):
                on_problem(problem)  # the lines a scan of the shards would have reported
            sql = (
                "SELECT id, agent, project, session_type, started, last_activity, ended,"
                " end_reason, action_count FROM sessions"
            )
            clauses: list[str] = []
            args: list[Any] = []
            for column, value in (("project", project), ("agent", agent)):
                if value is not None:
                    clauses.append(f"{column} = ?")
                    args.append(value)
            if clauses:
                sql += " WHERE " + " AND ".join(clauses)
            # NULLs sort last in DESC as "" does in `summarize`; bare columns use sess_last, so
            # a first page is read off the index instead of sorting every session
            sql += " ORDER BY last_activity DESC, id DESC"
            if limit is not None:  # and the future-dated ones, which `latest_first` moves last
                sql += " LIMIT ?"
                args.append(limit + conn.execute(_AHEAD, (horizon(now),)).fetchone()[0])
            out = []
            keys = ("id", "agent", "project", "session_type", "started", "last_activity")
            for row in conn.execute(sql, args):
                info = SessionInfo(**dict(zip(keys, row[:6], strict=True)))
                info.ended, info.end_reason, info.action_count = row[6], row[7], row[8]
                info.status = session_status(info.ended, info.last_activity, now, idle)
                out.append(info)
            return latest_first(out, now)[:limit]
        finally:
            conn.close()

    def sync(self, *, rebuild: bool = False) -> CatalogStatus:
        """Sync checking every shard (or rebuild from scratch) even for a long log; what the
        catalog holds (`status`) and what the sync did. A disabled or unusable catalog is an
        error here: the caller asked for it."""
        if not self.enabled:
            raise LoreError("the action catalog is disabled (catalog.enabled: false in config)")
        conn = self.open(full=True, rebuild=rebuild, create=True)
        if conn is None:
            raise LoreError("the action catalog cannot be used: {}", self.unavailable)
        conn.close()
        assert self.last_sync is not None
        return {**self.status(), "sync": self.last_sync.to_dict()}

    def last_sessions(
        self,
        *,
        project: str | tuple[str, ...] | None,
        agent: str | None,
        limit: int,
        horizon: str | None = None,
    ) -> list[Candidate] | None:
        """What `find_candidates` reads from the shards' tails, from the sessions table: up to
        `limit` live sessions of PROJECT/AGENT, most recently active first, each with its
        newest record (which says whether it ended or has done nothing yet); as there, those
        last active after `horizon` (a wrong clock) come last and do not use up `limit`.

        None without a catalog: resume never builds one (its cost must not grow with history),
        the caller reads the shards' tails instead. Only the days these sessions span are
        synced (a log of years has hundreds of day directories); an answer that reaches older
        days than were synced is asked again after a sync of every day."""
        from .resume import Candidate

        if not self.catalog.exists():
            return None
        names = (project,) if isinstance(project, str) else project
        args = (None if names is None else json.dumps(list(names)), agent, limit)
        window: list[str | None] = [None]

        def first_day(conn: sqlite3.Connection) -> str | None:
            row = conn.execute(_NTH_SESSION, args).fetchone()
            window[0] = row[0][:10] if row and row[0] else None
            return window[0]

        conn = self.open(since=first_day)
        if conn is None:
            return None
        try:
            wanted = limit
            if horizon is not None:  # the index counts the future-dated sessions cheaply
                wanted += conn.execute(_AHEAD, (horizon,)).fetchone()[0]
            rows = conn.execute(_LAST_SESSIONS, (args[0], agent, wanted)).fetchall()
            first = window[0]
            if first is not None and (
                len(rows) < wanted or any(min(r[1][:10], r[7]) < first for r in rows)
            ):  # older days matter (sessions removed, or shards added before `first`)
                try:
                    self.last_sync = self.catalog.sync(conn)
                except (CatalogUnavailable, sqlite3.OperationalError) as exc:
                    self.unavailable = str(exc)
                    return None
                rows = conn.execute(_LAST_SESSIONS, (args[0], agent, wanted)).fetchall()
        finally:
            conn.close()
        found = []
        for sid, ts, kind, event, reason, rec_agent, rec_project, day, worked in rows:
            if (names is not None and rec_project not in names) or agent not in (None, rec_agent):
                continue  # the session's newest record is of another project or agent
            is_end = kind == "session" and event == "end"
            found.append(
                Candidate(
                    session=sid,
                    day=day,
                    last_ts=ts,
                    agent=rec_agent,
                    project=rec_project,
                    ended_normally=is_end and (reason or "normal") == "normal",
                    idle=not worked,
                )
            )
        found.sort(key=lambda c: (c.day, c.last_ts, c.session), reverse=True)
        if horizon is not None:
            found.sort(key=lambda c: c.last_ts > horizon)  # (stable: newest first within each)
        return found[:limit]

    def clean_shards(self, shards: dict[str, Identity]) -> set[str]:
        """Of `shards` (path -> identity), those the catalog's memo says hold nothing to redact
        under the current rules (see catalog_read); none without a catalog."""
        found = self._memo(lambda conn, rel: vouched(conn, rel, self.catalog.sanitizer), shards)
        prefix = self._prefix()
        return set() if found is None else {prefix + path for path in found}

    def remember_clean(self, shards: dict[str, Identity]) -> None:
        """Remember `shards` (path -> identity), each found to hold only records with nothing
        to redact, for the next reader (skipped without a catalog, or when it is busy)."""
        self._memo(lambda conn, rel: remember_clean(conn, rel, self.catalog.sanitizer), shards)

    def _memo(
        self,
        use: Callable[[sqlite3.Connection, dict[str, Identity]], T],
        shards: dict[str, Identity],
    ) -> T | None:
        prefix = self._prefix()
        rel = {p[len(prefix) :]: i for p, i in shards.items() if p.startswith(prefix)}
        if not rel or not self.enabled or not self.catalog.exists():
            return None
        try:
            conn = self.catalog.connect()
        except (CatalogUnavailable, sqlite3.OperationalError):
            return None
        try:
            return use(conn, rel)
        except sqlite3.OperationalError:
            return None
        finally:
            conn.close()

    def _prefix(self) -> str:
        return os.path.join(str(self.catalog.base), "")

    def status(self) -> CatalogCounts:
        """Counts and where the file is, for `lore catalog`."""
        conn = self.catalog.connect()
        try:

            def one(sql: str) -> Any:
                return conn.execute(sql).fetchone()[0]

            return {
                "path": str(self.catalog.path),
                "schema": one("SELECT value FROM meta WHERE key='schema'"),
                "records": one("SELECT count(*) FROM records"),
                "actions": one("SELECT count(*) FROM records WHERE kind='action'"),
                "archived_records": one("SELECT count(*) FROM records WHERE archived=1"),
                "shards": one("SELECT count(*) FROM shards WHERE archived=0"),
                "archived_shards": one("SELECT count(*) FROM shards WHERE archived=1"),
                "sessions": one("SELECT count(*) FROM sessions"),
                "skipped_lines": one("SELECT count(*) FROM problems"),
                "bytes": self.catalog.path.stat().st_size,
            }
        finally:
            conn.close()


def action_where(query: ActionFilter, include_archive: bool) -> tuple[str, list[Any]]:
    """SQL conditions (on `records r`) equivalent to `query.matches` and its time window."""
    clauses = ["r.kind = 'action'"]
    args: list[Any] = []
    for column in FILTER_COLUMNS:
        value = getattr(query, column)
        if value is not None:
            clauses.append(f"r.{column} = ?")
            args.append(value)
    if query.since:
        clauses.append("r.ts >= ?")
        args.append(query.since)
    if query.until:
        clauses.append("r.ts < ?")
        args.append(query.until)
    if not include_archive:
        clauses.append("r.archived = 0")
    return " AND ".join(clauses), args


def _fetch(conn: sqlite3.Connection, reads: CleanReads, found: Iterator[T]) -> Iterator[T]:
    """`found`, then the files and the connection released (also when the caller stops)."""
    try:
        yield from found
    finally:
        reads.close()
        conn.close()


def open_view(layout: Any, settings: CatalogSettings, sanitizer: Sanitizer) -> CatalogView:
    """The catalog view for a store's layout and `catalog.*` settings."""
    catalog = Catalog(
        layout.actionlog, layout.cache, sanitizer, verify_all=settings.verify == "all"
    )
    return CatalogView(catalog, enabled=settings.enabled, auto_build_days=settings.auto_build_days)
