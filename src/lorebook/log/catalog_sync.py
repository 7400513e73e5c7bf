"""The catalog's sync: one pass over the store's day and archive directories inside the
caller's write transaction, reading only what changed (see lorebook.log.catalog).

Core module: standard library only, see docs/architecture.md#core.
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

from ..progress import CATALOG_BUILD, CATALOG_CHECK
from ..redact.sanitize import Sanitizer
from ..store import settled
from .archive_io import iter_archives, read_archive_bytes
from .catalog_rows import (
    INSERT,
    fold_sessions,
    forget_rolled,
    parse_lines,
    redact_rows,
    stale_days,
)
from .catalog_schema import HOT_DAYS, SyncStats, day_names, meta

TYPE_CHECKING = False  # typing costs milliseconds on cold paths; mypy still sees it
if TYPE_CHECKING:
    from typing import Any, NamedTuple, Protocol

    from ..progress import Progress

    class SyncedStore(Protocol):
        """What a sync needs of the catalog: where the shards are and how rows are redacted."""

        actionlog: Path
        archive: Path
        base: Path
        sanitizer: Sanitizer
else:
    from ..tuples import NamedTuple

_TAIL = 4096
_RESTAMP_S = 3600.0  # `synced_at` is rewritten by a sync that changes nothing at most hourly


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


class Sync:
    """One pass over the store's directories, inside the caller's write transaction."""

    def __init__(
        self,
        cat: SyncedStore,
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
        self.rolled: set[str] | None = None  # the days with report roll-ups (read when needed)
        base = os.path.normpath(cat.base)
        self.base_prefix = base if base.endswith(os.sep) else base + os.sep

    def run(self) -> None:
        conn = self.conn
        self.dup_risk = meta(conn, "dup_risk") == "1"
        # appends since the last sync can only be in its days or later ones (the writer bumps
        # the directory of any other day): those shards are stat-ed, the rest only on change
        stamp = float(meta(conn, "synced_at") or 0)
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
        memo = self._memo()
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
            if memo is not None:
                memo.dirs.pop(key, None)
        listed: list[tuple[str, list[tuple[str, str, str, Any]], dict[str, _Shard], int]] = []
        for key, files in changed:
            cached = memo.dirs.get(key) if memo is not None else None
            if cached is not None and cached[0] == present[key]:
                _, known, entries = cached
            else:
                known = self._known(key)
                entries = [(self._rel(path), day, session, path)
                           for day, session, path in files()]  # fmt: skip
            listing = {rel for rel, *_ in entries}
            before = conn.total_changes
            self._gone([shard for rel, shard in known.items() if rel not in listing])
            listed.append((key, entries, known, conn.total_changes - before))
        shards = sum(len(entries) for _, entries, _, _ in listed) if self.progress else 0
        total = self.total = shards + self.after if shards else 0
        done = 0
        if self.progress and total:
            self.progress(self.task, done, total)
        for key, entries, known, changes in listed:
            before = conn.total_changes
            for rel, day, session, path in entries:
                self._check(known.get(rel), rel, path, key, day, session, key[0] == "a")
            if memo is not None:
                still = not changes and conn.total_changes == before
                if still and settled(present[key], time.time_ns()):
                    memo.dirs[key] = (present[key], known, entries)
                else:
                    memo.dirs.pop(key, None)
            if self.progress and total:
                done += len(entries)
                self.progress(self.task, done, total)
            mtime = present[key]
            if not settled(mtime, time.time_ns()):
                mtime = -1  # changed just now, maybe within the clock's tick: look again next time
            if dirs.get(key) != mtime:
                conn.execute("INSERT OR REPLACE INTO dirs VALUES (?, ?)", (key, mtime))
        if self.sessions and (self.touched or self.appended):
            fold_sessions(conn, self.appended, self.touched)
        if self.dup_risk:
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('dup_risk', '1')")

    def _memo(self) -> SyncMemo | None:
        """What the previous sync on this connection listed, if no other connection committed
        since (`PRAGMA data_version`); None without one, or for a full check (which may
        re-read shards anywhere: it forgets every listing)."""
        memo = getattr(self.conn, "sync_memo", None)
        if not isinstance(memo, SyncMemo):
            return None
        if self.full:
            memo.clear()
            return None
        version = self.conn.execute("PRAGMA data_version").fetchone()[0]
        if memo.version != version:
            memo.dirs.clear()
            memo.version = version
        return memo

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
                raise Rebuild(f"{shard.path} disappeared and ids are shared between shards")
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
                raise Rebuild(f"{rel} was rewritten and ids are shared between shards")
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

    def _stale(self, records: Iterable[tuple[Any, ...]]) -> None:
        """Forget the roll-ups of the days that records (id, ts, outcome, parent) coming or
        going change (`report_rollup.stale_days`)."""
        if self.rolled is None:
            self.rolled = {r[0] for r in self.conn.execute("SELECT day FROM rolled")}
        if not self.rolled:
            return
        days = stale_days(self.conn, records, self.rolled)
        if days:
            forget_rolled(self.conn, days)
            self.rolled -= days

    def _forget(self, shard: _Shard) -> None:
        conn = self.conn
        if self.rolled is None or self.rolled:
            self._stale(conn.execute(
                "SELECT id, ts, outcome, parent FROM records WHERE shard=?", (shard.id,)
            ).fetchall())  # fmt: skip
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
        if rows and (self.rolled is None or self.rolled):
            self._stale((row[0], row[1], row[8], row[21]) for row in rows)
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


class SyncMemo:
    """Per kept connection: each directory's shard rows and listing as its last sync left them,
    with the directory's mtime. Reused while the mtime is the same (no file added or removed)
    and no other connection wrote the catalog; every shard is still stat-ed each sync."""

    __slots__ = ("dirs", "version")

    def __init__(self) -> None:
        self.version: int | None = None
        self.dirs: dict[str, tuple[int, dict[str, _Shard], list[tuple[str, str, str, Any]]]] = {}

    def clear(self) -> None:
        self.version = None
        self.dirs.clear()


class Rebuild(Exception):
    """The sync cannot be incremental (shared ids lost a shard): build from scratch."""
