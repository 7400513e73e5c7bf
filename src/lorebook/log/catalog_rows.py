"""What the action catalog stores: its tables, one row per record, and the derived views
(session summaries, skipped lines) read back from them.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator

from ..model import ULID_RE, decode_line
from ..problems import Problem
from ..redact.sanitize import Sanitizer
from .reader import MAX_LINE_BYTES
from .sessions import SessionInfo, observe

TYPE_CHECKING = False  # typing costs milliseconds on cold paths; mypy still sees it
if TYPE_CHECKING:
    from typing import Any

TABLES = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE dirs(path TEXT PRIMARY KEY, mtime_ns INTEGER);
CREATE TABLE shards(id INTEGER PRIMARY KEY, path TEXT UNIQUE, dir TEXT, day TEXT,
  session TEXT, archived INTEGER, ino INTEGER, size INTEGER, mtime_ns INTEGER,
  offset INTEGER, lines INTEGER, tail_hash TEXT);
CREATE TABLE records(rid INTEGER PRIMARY KEY, id TEXT UNIQUE, ts TEXT, kind TEXT,
  session TEXT, agent TEXT, project TEXT, type TEXT, category TEXT, outcome TEXT, epic TEXT,
  issue TEXT, event TEXT, reason TEXT, session_type TEXT, duration REAL, overhead REAL,
  error TEXT, shard INTEGER, off INTEGER, len INTEGER, archived INTEGER, parent TEXT);
CREATE TABLE problems(shard INTEGER, line INTEGER, reason TEXT, tail INTEGER);
CREATE TABLE sessions(id TEXT PRIMARY KEY, agent TEXT, project TEXT, session_type TEXT,
  started TEXT, last_activity TEXT, ended TEXT, end_reason TEXT, action_count INTEGER);
CREATE TABLE rolled(day TEXT PRIMARY KEY);
CREATE TABLE roll_actions(day TEXT, hour TEXT, type TEXT, outcome TEXT, project TEXT,
  agent TEXT, archived INTEGER, n INTEGER, n_d INTEGER, micros_d REAL, max_d REAL);
CREATE TABLE roll_open(day TEXT, hour TEXT, type TEXT, project TEXT, agent TEXT,
  archived INTEGER, session TEXT, duration REAL, closed TEXT);
CREATE TABLE roll_sessions(day TEXT, type TEXT, project TEXT, agent TEXT, archived INTEGER,
  session TEXT);
CREATE TABLE roll_costs(day TEXT, kind TEXT, type TEXT, event TEXT, project TEXT, agent TEXT,
  archived INTEGER, overhead REAL, n INTEGER);
"""
# the day roll-ups of reports (`report_rollup`; `rolled` lists the days they hold)
ROLL_TABLES = ("roll_actions", "roll_open", "roll_sessions", "roll_costs")
INDEXES = (
    "CREATE INDEX IF NOT EXISTS rec_ts ON records(ts, id)",
    "CREATE INDEX IF NOT EXISTS rec_type ON records(type, ts)",
    "CREATE INDEX IF NOT EXISTS rec_session ON records(session, ts)",
    "CREATE INDEX IF NOT EXISTS rec_project ON records(project, ts)",
    "CREATE INDEX IF NOT EXISTS rec_epic ON records(epic, ts) WHERE epic IS NOT NULL",
    "CREATE INDEX IF NOT EXISTS rec_bad ON records(outcome, ts) WHERE outcome != 'success'",
    "CREATE INDEX IF NOT EXISTS rec_shard ON records(shard)",
    "CREATE INDEX IF NOT EXISTS rec_parent ON records(parent) WHERE parent IS NOT NULL",
    "CREATE INDEX IF NOT EXISTS shard_dir ON shards(dir)",
    "CREATE INDEX IF NOT EXISTS prob_shard ON problems(shard)",
    "CREATE INDEX IF NOT EXISTS sess_last ON sessions(last_activity, id)",
    *(f"CREATE INDEX IF NOT EXISTS {t}_day ON {t}(day)" for t in ROLL_TABLES),
)
INSERT = (
    "INSERT INTO records(id, ts, kind, session, agent, project, type, category, outcome, epic,"
    " issue, event, reason, session_type, duration, overhead, error, shard, off, len, archived,"
    " parent) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(id) DO NOTHING"
)
# the rule `observe` folds sessions by; a catalog whose summaries were folded by another one
# recomputes them once (2: a start after an end reopens, a `stop` turn is no end; 3: only a
# start after an earlier start does)
SESSIONS_RULE = "3"
OVERHEAD_KEYS = ("overhead_ms", "hook_ms")  # meta fields read as the logging/hook overhead


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def overhead_of(record: dict[str, Any]) -> float | None:
    """The logging/hook overhead in ms a record carries in `meta` (see OVERHEAD_KEYS)."""
    meta = record.get("meta")
    if not isinstance(meta, dict):
        return None
    for key in OVERHEAD_KEYS:
        value = _number(meta.get(key))
        if value is not None:
            return value
    return None


def _link(parent: Any) -> str | None:
    """The `parent` a row keeps: an action id (the writer allows nothing else), so a line
    edited by hand cannot put free text into the cache through it."""
    return parent if isinstance(parent, str) and ULID_RE.match(parent) else None


def record_row(
    rec: dict[str, Any], shard: int, off: int, length: int, archived: int
) -> tuple[Any, ...]:
    g = rec.get
    return (
        rec["id"], rec["ts"], rec["kind"], rec["session"], g("agent"), g("project"), g("type"),
        g("category"), g("outcome"), g("epic"), g("issue"), g("event"), g("reason"),
        g("session_type"), _number(g("duration_s")), overhead_of(rec), g("error"),
        shard, off, length, archived, _link(g("parent")),
    )  # fmt: skip


# the columns of a row that hold free text (agent .. error): redacted before they are stored
FREE_TEXT = (4, 5, 7, 9, 10, 12, 13, 16)


def redact_rows(
    sanitizer: Sanitizer, rows: list[tuple[Any, ...]], problems: list[tuple[Any, ...]]
) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """Rows and problems with their free text redacted, like the log: a line edited by hand
    (or written before a rule existed) must not put a secret into the cache.

    One sanitize() call per chunk: its triage reads all the strings at once, so a clean
    chunk (the usual case, the writer redacted it) costs a fraction of parsing it."""
    values = [row[i] for row in rows for i in FREE_TEXT]
    values += [problem[2] for problem in problems]
    clean, found = sanitizer.sanitize(values)
    if not found:
        return rows, problems
    width = len(FREE_TEXT)
    out = []
    for n, row in enumerate(rows):
        fixed = list(row)
        for k, i in enumerate(FREE_TEXT):
            fixed[i] = clean[n * width + k]
        out.append(tuple(fixed))
    base = len(rows) * width
    reasons = [(*p[:2], clean[base + n], *p[3:]) for n, p in enumerate(problems)]
    return out, reasons


def parse_lines(
    data: bytes, offset: int, lines: int, shard: int, archived: int
) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], int, int]:
    """(rows, problems, bytes consumed up to the last newline, line count) of a chunk,
    not yet redacted (see redact_rows)."""
    rows: list[tuple[Any, ...]] = []
    problems: list[tuple[Any, ...]] = []
    pos, number, size = 0, lines, len(data)
    consumed = 0
    while pos < size:
        end = data.find(b"\n", pos)
        terminated = end >= 0
        stop = end + 1 if terminated else size
        raw = data[pos:stop]
        number += 1
        if len(raw) > MAX_LINE_BYTES + 1:
            too_long = f"line longer than {MAX_LINE_BYTES} bytes, skipped"
            problems.append((shard, number, too_long, int(not terminated)))
        elif raw.strip():
            record, reason = decode_line(raw)
            if record is None:
                if not terminated:
                    reason = f"torn line at end of file ({reason})"
                problems.append((shard, number, str(reason), int(not terminated)))
            else:
                rows.append(record_row(record, shard, offset + pos, len(raw), archived))
        if not terminated:
            number -= 1  # the tail is re-read (and re-counted) once it is complete
            break
        consumed = stop
        pos = stop
    return rows, problems, consumed, number


# whether a row is the outcome of an in_progress start of its type in its session (`observe`)
CLOSES = (
    "CASE WHEN records.parent IS NOT NULL AND records.outcome != 'in_progress' THEN EXISTS"
    " (SELECT 1 FROM records s WHERE s.id = records.parent AND s.session = records.session"
    " AND s.kind = 'action' AND s.type = records.type AND s.outcome = 'in_progress'"
    " AND s.ts <= records.ts) ELSE 0 END"
)
_CLOSES_ONE = (
    "SELECT 1 FROM records WHERE id = ? AND session = ? AND kind = 'action' AND type = ?"
    " AND outcome = 'in_progress' AND ts <= ?"
)


def refresh_sessions(conn: sqlite3.Connection, sessions: Iterable[str] | None) -> None:
    """Recompute session summaries (all, or some) from their live records, in time order."""
    columns = f"session, ts, kind, event, agent, project, session_type, reason, {CLOSES}"
    if sessions is None:
        conn.execute("DELETE FROM sessions")
        cursor = conn.execute(
            f"SELECT {columns} FROM records WHERE archived=0 ORDER BY session, ts, id"
        )
        _store_sessions(conn, cursor)
        return
    for chunk in _chunks(sorted(sessions), 200):
        marks = ",".join("?" * len(chunk))
        conn.execute(f"DELETE FROM sessions WHERE id IN ({marks})", chunk)
        cursor = conn.execute(
            f"SELECT {columns} FROM records WHERE archived=0 AND session IN ({marks})"
            " ORDER BY session, ts, id",
            chunk,
        )
        _store_sessions(conn, cursor)


def refold_stale_sessions(conn: sqlite3.Connection) -> None:
    """Recompute every session summary when they were folded by another SESSIONS_RULE."""
    row = conn.execute("SELECT value FROM meta WHERE key='sessions_rule'").fetchone()
    if row is None or row[0] != SESSIONS_RULE:
        refresh_sessions(conn, None)
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('sessions_rule', ?)", (SESSIONS_RULE,))


_SESSION_COLUMNS = (
    "id", "agent", "project", "session_type", "started", "last_activity", "ended", "end_reason",
    "action_count",
)  # fmt: skip


def fold_sessions(
    conn: sqlite3.Connection, appended: dict[str, list[tuple[Any, ...]]], touched: set[str]
) -> None:
    """Fold newly appended rows into their sessions' summaries (cost: the new rows, not the
    session's history); sessions with older-than-summary rows or removals are recomputed."""
    full = set(touched)
    for session, rows in appended.items():
        if session in full:
            continue
        stored = conn.execute(
            f"SELECT {', '.join(_SESSION_COLUMNS)} FROM sessions WHERE id=?", (session,)
        ).fetchone()
        info = SessionInfo(id=session)
        if stored is not None:
            for key, value in zip(_SESSION_COLUMNS, stored, strict=True):
                setattr(info, key, value)
        rows.sort(key=lambda r: (r[1], r[0]))
        if info.last_activity is not None and rows[0][1] < info.last_activity:
            full.add(session)  # arrived out of order: fold everything again, in order
            continue
        if stored is not None and any(row[2] == "session" and row[11] == "start" for row in rows):
            full.add(session)  # a start folds by whether one came before (see `observe`)
            continue
        for row in rows:
            record = {
                "session": row[3], "ts": row[1], "kind": row[2], "event": row[11],
                "agent": row[4], "project": row[5], "session_type": row[13], "reason": row[12],
            }  # fmt: skip
            if row[21] is not None and row[8] != "in_progress":
                found = conn.execute(_CLOSES_ONE, (row[21], row[3], row[6], row[1])).fetchone()
                record["closes"] = found is not None
            observe(info, record)
        conn.execute(
            "INSERT OR REPLACE INTO sessions VALUES (?,?,?,?,?,?,?,?,?)",
            tuple(getattr(info, key) for key in _SESSION_COLUMNS),
        )
    if full:
        refresh_sessions(conn, full)


def _chunks(items: list[str], size: int) -> Iterator[list[str]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def _store_sessions(conn: sqlite3.Connection, cursor: sqlite3.Cursor) -> None:
    keys = ("session", "ts", "kind", "event", "agent", "project", "session_type", "reason",
            "closes")  # fmt: skip
    info: SessionInfo | None = None
    out: list[tuple[Any, ...]] = []

    def flush() -> None:
        if info is not None:
            out.append(
                (info.id, info.agent, info.project, info.session_type, info.started,
                 info.last_activity, info.ended, info.end_reason, info.action_count)
            )  # fmt: skip

    for row in cursor:
        record = dict(zip(keys, row, strict=True))
        if info is None or info.id != record["session"]:
            flush()
            info = SessionInfo(id=record["session"])
        observe(info, record)
        if len(out) >= 5000:
            conn.executemany("INSERT INTO sessions VALUES (?,?,?,?,?,?,?,?,?)", out)
            out.clear()
    flush()
    conn.executemany("INSERT INTO sessions VALUES (?,?,?,?,?,?,?,?,?)", out)


def problems_for(
    conn: sqlite3.Connection,
    *,
    first: str | None,
    last: str | None,
    sessions: list[str] | None,
    archived: bool,
) -> list[Problem]:
    """Skipped lines recorded for the shards a query covers, in file order."""
    sql = (
        "SELECT s.path, p.line, p.reason FROM problems p JOIN shards s ON s.id = p.shard"
        " WHERE s.day >= ? AND s.day <= ?"
    )
    args: list[Any] = [first or "0000-00-00", last or "9999-99-99"]
    if not archived:
        sql += " AND s.archived = 0"
    if sessions is not None:
        sql += f" AND s.session IN ({','.join('?' * len(sessions))})"
        args.extend(sessions)
    sql += " ORDER BY s.day, s.path, p.line"
    return [Problem(path, line, reason) for path, line, reason in conn.execute(sql, args)]


def stale_days(
    conn: sqlite3.Connection, records: Iterable[tuple[Any, ...]], rolled: set[str]
) -> set[str]:
    """The rolled-up days whose figures the records (id, ts, outcome, parent) change by coming
    or going: their own, their start's (an outcome), their outcomes' (a start). A pair only
    runs forward in time (`track_pairs`), so a start looks for outcomes only when a later day
    is rolled up, and an outcome whose start is among the records needs no lookup."""
    if not rolled:
        return set()
    latest = max(rolled)
    days: dict[str, str] = {}
    links: list[tuple[str, str | None, str]] = []
    for rid, ts, outcome, parent in records:
        days[rid] = ts[:10]
        links.append((outcome, parent, rid))
    found = set(days.values())
    parents, starts = [], []
    for outcome, parent, rid in links:
        if outcome == "in_progress":
            if days[rid] <= latest:
                starts.append(rid)
        elif parent is not None and parent not in days:  # a start among them: its day is in
            parents.append(parent)
    for column, ids in (("id", parents), ("parent", starts)):
        for first in range(0, len(ids), 500):
            chunk = ids[first : first + 500]
            rows = conn.execute(
                f"SELECT DISTINCT substr(ts, 1, 10) FROM records WHERE {column} IS NOT NULL"
                f" AND {column} IN ({','.join('?' * len(chunk))})",
                chunk,
            )
            found.update(r[0] for r in rows)
    return found & rolled


def forget_rolled(conn: sqlite3.Connection, days: Iterable[str]) -> None:
    """Mark days as no longer rolled up (their roll-ups are replaced when next rolled)."""
    wanted = sorted(set(days))
    for first in range(0, len(wanted), 500):
        chunk = wanted[first : first + 500]
        conn.execute(f"DELETE FROM rolled WHERE day IN ({','.join('?' * len(chunk))})", chunk)
