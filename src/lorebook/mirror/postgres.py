"""`lore mirror postgres`: the store's actions, sessions, learnings and applications into a
PostgreSQL database shared by many repositories (seed 000's schema plus `repository`).

One run: check the database's schema (a newer one than this lorebook knows stops it before
anything is written), migrate under a global advisory lock, take this repository's advisory
lock (a second clone waits, then finds the watermark moved), then per batch, in ONE
transaction: COPY the rows into a staging table, INSERT ... ON CONFLICT into the tables, upsert
the sessions they touch and move the shards' watermarks. A crash between batches leaves every
stored row covered by its watermark and nothing past it; the rerun's keys absorb the rest.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from hashlib import blake2b
from typing import TYPE_CHECKING, Any

from ..collector import collector_paused
from ..errors import LoreError
from .dsn import mask_dsn, scrub
from .learnings import store as store_learnings
from .schema import LATEST, connect, driver, migrate, refuse_newer, schema_version
from .sessions import fold_all, foldable, shard_session, whole_in_batch
from .source import (
    ACTION_COLUMNS,
    APPLICATION_COLUMNS,
    Batch,
    Chunk,
    Identity,
    Mark,
    action_row,
    application_row,
    identity_of,
    read_shard,
    redacted,
    shards,
)

if TYPE_CHECKING:
    from pathlib import Path

    import psycopg

    from ..contracts.mirror import MirrorResult
    from ..knowledge.model import Learning
    from ..log.sessions import SessionInfo
    from ..redact.sanitize import Sanitizer

BATCH_LINES = 50_000


def _upsert(
    cur: psycopg.Cursor[Any],
    table: str,
    columns: tuple[str, ...],
    rows: list[tuple[Any, ...]],
    key: tuple[str, ...],
    also: str = "",
) -> None:
    """Insert or replace `rows` (unique by `key`): COPY into the table's staging copy (emptied
    at commit), then one INSERT ... ON CONFLICT DO UPDATE (`also`: one more assignment)."""
    if not rows:
        return
    names = ", ".join(columns)
    with cur.copy(f"COPY lorebook_stage_{table} ({names}) FROM STDIN") as cp:
        for row in rows:
            cp.write_row(row)
    updates = ", ".join(
        [*(f"{c} = excluded.{c}" for c in columns if c not in key), *([also] if also else [])]
    )
    cur.execute(
        f"INSERT INTO {table} ({names}) SELECT {names} FROM lorebook_stage_{table}"
        f" ON CONFLICT ({', '.join(key)}) DO UPDATE SET {updates}"
    )


class _Keyed(Exception):
    """A batch holds a re-synced shard: its rows go through the staging table."""


def repository_lock(repository: str) -> int:
    """The advisory lock key of one repository (a signed 64-bit integer)."""
    return int.from_bytes(blake2b(repository.encode(), digest_size=8).digest(), "big", signed=True)


class Mirror:
    """One mirror of one repository; `run()` returns what it did (`lore mirror --json`)."""

    def __init__(
        self,
        *,
        dsn: str,
        repository: str,
        name: str,
        root: Path,
        actionlog: Path,
        sanitizer: Sanitizer,
        sessions: Callable[[], Iterable[SessionInfo]],
        learnings: Callable[[], Iterable[Learning]],  # redacted (LearningStore.sanitized)
        batch_lines: int = BATCH_LINES,
        vouch: Callable[[dict[str, Identity]], set[str]] | None = None,
        remember: Callable[[dict[str, Identity]], None] | None = None,
        learnings_digest: Callable[[], str] | None = None,  # see mirror.learnings
    ) -> None:
        self.dsn, self.repository, self.name = dsn, repository, name
        self.root, self.actionlog, self.sanitizer = root, actionlog, sanitizer
        self._sessions_of, self._learnings_of = sessions, learnings
        self._learnings_digest = learnings_digest
        self._summaries: dict[str, SessionInfo] | None = None
        self.batch_lines = max(int(batch_lines), 1)
        # the catalog's memo of shards verified clean (absolute path -> identity): records of a
        # vouched shard are not redacted again; shards read whole and found clean are added
        self._vouch, self._remember = vouch, remember
        self._dirty: set[str] = set()  # not to remember: a record redacted, a line skipped, or
        # vouched already
        self._whole: dict[str, tuple[str, Identity]] = {}  # rel -> (path, identity) read whole
        # what decides whether a batch folds a session itself (see mirror.sessions)
        self._live: dict[str, str] = {}  # live shard's rel -> the session its name gives
        self._shards_of: dict[str, list[str]] = {}  # session -> its live shards' rels
        self._begun: dict[str, Mark] = {}  # the watermarks the run started from
        self._seen: set[str] = set()  # shards a batch of this run held already
        self.result: MirrorResult = {
            "repository": repository, "name": name, "dsn": mask_dsn(dsn), "dry_run": False,
            "schema_version": 0, "actions": 0, "sessions": 0, "learnings": 0,
            "applications": 0, "shards_read": 0, "shards_resynced": 0, "lines_skipped": 0,
            "batches": 0, "seconds": 0.0, "warnings": [],
        }  # fmt: skip

    # -- the run -------------------------------------------------------------------------------
    def run(self, *, dry_run: bool = False) -> MirrorResult:
        started = time.perf_counter()
        self.result["dry_run"] = dry_run
        conn = connect(self.dsn)
        psycopg = driver()
        try:
            version = schema_version(conn)
            refuse_newer(version, self.dsn)
            if dry_run:
                self.result["schema_version"] = version
                self._dry(conn, version)
            else:
                self.result["schema_version"] = migrate(conn, self.dsn)
                conn.execute("SELECT pg_advisory_lock(%s)", (repository_lock(self.repository),))
                self._load(conn)
        except psycopg.Error as exc:
            reason = " ".join(str(exc).split()) or type(exc).__name__
            raise LoreError(
                "mirror to PostgreSQL {} failed: {} (batches stored before it are kept and"
                " marked; rerun to continue)",
                mask_dsn(self.dsn), scrub(reason, self.dsn),
            ) from None  # fmt: skip
        finally:
            conn.close()  # releases the advisory lock
        self.result["seconds"] = round(time.perf_counter() - started, 3)
        return self.result

    def _marks(self, conn: psycopg.Connection[Any], version: int) -> dict[str, Mark]:
        if version == 0:
            return {}
        rows = conn.execute(
            "SELECT path, offset_bytes, lines, tail_hash FROM lorebook_shards"
            " WHERE repository = %s",
            (self.repository,),
        ).fetchall()
        return {path: Mark(int(o), int(n), str(h)) for path, o, n, h in rows}

    def _chunks(self, marks: Mapping[str, Mark], vouch: bool = True) -> Iterable[Chunk]:
        """The chunks of every shard with lines past its watermark; the catalog's memo is asked
        once about those (live ones: an archive is always redacted, it is read as a whole)."""
        todo: list[tuple[str, Path, bool, Identity | None]] = []
        for rel, path, archived, st in shards(self.actionlog, self.root):
            identity = None
            if not archived:
                name = shard_session(rel)
                if name is not None:
                    self._live[rel] = name
                    self._shards_of.setdefault(name, []).append(rel)
                identity = identity_of(st)  # (a regular file: its lstat is its stat)
                mark = marks.get(rel)
                if mark is not None and identity[1] == mark.offset:
                    continue  # nothing appended (a shard only grows; see read_shard)
            todo.append((rel, path, archived, identity))
        asked = {str(path): ident for _, path, _, ident in todo if ident is not None}
        clean = self._vouch(asked) if vouch and self._vouch is not None and asked else set()
        for rel, path, archived, identity in todo:
            vouched = identity if str(path) in clean else None
            yield from read_shard(rel, path, archived, marks.get(rel), self.batch_lines, vouched)

    def _remember_clean(self) -> None:
        """Tell the catalog's memo of the shards read whole with nothing to redact."""
        whole, dirty = self._whole, self._dirty
        found = {path: ident for rel, (path, ident) in whole.items() if rel not in dirty}
        if found and self._remember is not None:
            self._remember(found)

    def _dry(self, conn: psycopg.Connection[Any], version: int) -> None:
        """Count what a run would send; write nothing."""
        touched: set[str] = set()
        for chunk in self._chunks(self._marks(conn, version), vouch=False):
            self._count(chunk)
            actions = [r for r in chunk.records if r.get("kind") == "action"]
            self.result["actions"] += len(actions)
            self.result["applications"] += sum(
                1 for r in actions if application_row("", r) is not None
            )
            touched.update(r["session"] for r in chunk.records)
        self.result["sessions"] = len(touched)
        self.result["learnings"] = sum(1 for _ in self._learnings_of())

    def _count(self, chunk: Chunk) -> None:
        self.result["shards_read"] += 1 if chunk.records or chunk.skipped else 0
        self.result["shards_resynced"] += int(chunk.resynced)
        self.result["lines_skipped"] += chunk.skipped

    def _load(self, conn: psycopg.Connection[Any]) -> None:
        conn.execute(
            "CREATE TEMP TABLE IF NOT EXISTS lorebook_stage_actions"
            " (LIKE supervisor_actions) ON COMMIT DELETE ROWS"
        )
        for table in ("supervisor_sessions", "lorebook_shards"):
            conn.execute(
                f"CREATE TEMP TABLE IF NOT EXISTS lorebook_stage_{table}"
                f" (LIKE {table} INCLUDING DEFAULTS) ON COMMIT DELETE ROWS"
            )
        marks = self._begun = self._marks(conn, LATEST)  # read under the repository's lock
        source = iter(self._chunks(marks))
        with collector_paused():  # a batch's records are alive at once: see `collector`
            while True:
                batch = Batch(source, self.batch_lines)
                if not batch.any():
                    break
                self._store(conn, batch)
        self.result["learnings"] = store_learnings(
            conn, self.repository, self.name, self._learnings_of, self._learnings_digest
        )
        self._remember_clean()

    def _store(self, conn: psycopg.Connection[Any], batch: Batch) -> None:
        """One batch in one transaction: rows, the sessions they touch, the watermarks.

        New lines (the usual case) are COPied straight into the table, in a savepoint, parsed
        rows streamed while the server indexes the ones before (the shards are read as the
        rows go: the server indexes while the next ones are parsed); a key already there (a
        re-synced or archived shard, a line repeated by a union merge) rolls the savepoint
        back and the batch goes through a staging table and INSERT ... ON CONFLICT."""
        apps: list[tuple[Any, ...]] = []
        touched: set[str] = set()
        with conn.transaction(), conn.cursor() as cur:
            copied = self._copy_new(conn, cur, batch, apps, touched)
            stored, folded = copied if copied is not None else (None, {})
            chunks = batch.all()
            if stored is None:  # keys stored before: their sessions are the catalog's to fold
                apps.clear()
                touched.clear()
                with cur.copy(f"COPY lorebook_stage_actions ({ACTION_COLUMNS}) FROM STDIN") as cp:
                    for row in self._rows(chunks, apps, touched):
                        cp.write_row(row)
                cur.execute(
                    f"INSERT INTO supervisor_actions ({ACTION_COLUMNS}) SELECT {ACTION_COLUMNS}"
                    " FROM lorebook_stage_actions ON CONFLICT (repository, id) DO NOTHING"
                )
                stored = max(cur.rowcount, 0)
            self.result["actions"] += stored
            marks: dict[str, Mark] = {}
            for chunk in chunks:
                marks[chunk.rel] = chunk.mark
                self._count(chunk)
                self._seen.add(chunk.rel)
            if apps:
                cur.executemany(
                    f"INSERT INTO lorebook_applications ({APPLICATION_COLUMNS}) VALUES"
                    " (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s) ON CONFLICT (repository, action_id)"
                    " DO NOTHING",
                    apps,
                )
                self.result["applications"] += max(cur.rowcount, 0)
            self._store_sessions(cur, sorted(touched), self._unknown(cur, folded))
            _upsert(
                cur,
                "lorebook_shards",
                ("repository", "path", "offset_bytes", "lines", "tail_hash"),
                [(self.repository, rel, *mark) for rel, mark in marks.items()],
                ("repository", "path"),
                "mirrored_at = now()",
            )
        self.result["batches"] += 1

    def _rows(
        self,
        chunks: Iterable[Chunk],
        apps: list[tuple[Any, ...]],
        touched: set[str],
        new_only: bool = False,
    ) -> Iterator[tuple[Any, ...]]:
        """Action rows of the chunks' records, redacted as the store shows them (unless their
        shard is vouched clean); their applications and sessions noted on the way. `new_only`:
        a re-synced shard (its keys are stored) raises _Keyed."""
        repo = self.repository
        for chunk in chunks:
            if new_only and chunk.resynced:
                raise _Keyed
            if chunk.skipped:
                self._dirty.add(chunk.rel)
            if chunk.whole is not None:
                self._whole[chunk.rel] = (str(self.root / chunk.rel), chunk.whole)
            if chunk.clean:
                shown: Iterable[dict[str, Any]] = chunk.records
                self._dirty.add(chunk.rel)
            else:
                shown = redacted(self.sanitizer, chunk.records)
            for record, raw in zip(shown, chunk.records, strict=True):
                if record is not raw:
                    self._dirty.add(chunk.rel)
                touched.add(record["session"])
                if record.get("kind") != "action":
                    continue
                app = application_row(repo, record)
                if app is not None:
                    apps.append(app)
                yield action_row(repo, record)

    def _copy_new(
        self,
        conn: psycopg.Connection[Any],
        cur: psycopg.Cursor[Any],
        chunks: Iterable[Chunk],
        apps: list[tuple[Any, ...]],
        touched: set[str],
    ) -> tuple[int, dict[str, SessionInfo]] | None:
        """COPY the rows straight into the table (a savepoint): how many, and the sessions the
        batch read in full, folded (`_folded`) while the server indexes the last rows; None
        when a key is there (or a shard re-synced: its keys are)."""
        errors = driver().errors
        count = 0
        try:
            with (
                conn.transaction(),
                cur.copy(f"COPY supervisor_actions ({ACTION_COLUMNS}) FROM STDIN") as cp,
            ):
                for row in self._rows(chunks, apps, touched, new_only=True):
                    cp.write_row(row)
                    count += 1
                folded = self._folded(list(chunks))
        except (errors.UniqueViolation, _Keyed):
            return None
        return count, folded

    def _folded(self, chunks: list[Chunk]) -> dict[str, SessionInfo]:
        """The summaries of the sessions whose every live record this batch read (its shards
        read from their first line, in this run and first in this batch, to their last),
        folded from the batch's records as the catalog folds them (mirror.sessions), their
        free text redacted as the catalog stores it."""
        fresh = {
            c.rel
            for c in chunks
            if c.rel not in self._seen and (c.resynced or c.rel not in self._begun)
        }
        whole = whole_in_batch(chunks, fresh)
        candidates = foldable(chunks, self._live, self._shards_of, whole) if whole else {}
        return fold_all(candidates, self._clean) if candidates else {}

    def _unknown(
        self, cur: psycopg.Cursor[Any], folded: dict[str, SessionInfo]
    ) -> dict[str, SessionInfo]:
        """The `folded` summaries the database has none of yet (one there means records
        mirrored before: the catalog folds that session)."""
        if not folded:
            return {}
        cur.execute(
            "SELECT session_id FROM supervisor_sessions WHERE repository = %s"
            " AND session_id = ANY(%s)",
            (self.repository, list(folded)),
        )
        known = {row[0] for row in cur.fetchall()}
        return {sid: info for sid, info in folded.items() if sid not in known}

    def _store_sessions(
        self, cur: psycopg.Cursor[Any], touched: list[str], folded: dict[str, SessionInfo]
    ) -> None:
        """Upsert the summaries (as `lore sessions` folds them) of the sessions a batch touched:
        those `folded` from the batch itself, the others from the catalog (synced once)."""
        if not touched:
            return
        if self._summaries is None and any(sid not in folded for sid in touched):
            self._summaries = {info.id: info for info in self._sessions_of()}
        summaries = self._summaries or {}
        infos = [
            info for sid in touched if (info := folded.get(sid) or summaries.get(sid)) is not None
        ]
        texts = [[i.agent or "", i.project, i.session_type or "", i.end_reason] for i in infos]
        clean = self._clean(texts)  # one walk for the batch: its strings are mostly clean
        rows = [
            (self.repository, info.id, agent, project, info.started, info.last_activity,
             info.ended, kind, reason, info.action_count)
            for info, (agent, project, kind, reason) in zip(infos, clean, strict=True)
        ]  # fmt: skip
        _upsert(
            cur,
            "supervisor_sessions",
            ("repository", "session_id", "supervisor_type", "project", "started_at",
             "last_activity", "ended_at", "session_type", "disconnect_reason",
             "total_actions"),
            rows,
            ("repository", "session_id"),
        )  # fmt: skip
        self.result["sessions"] += len(rows)

    def _clean(self, values: list[Any]) -> list[Any]:
        clean, _ = self.sanitizer.sanitize(values)
        return list(clean)
