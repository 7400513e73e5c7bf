"""Day roll-ups of the action catalog: what a report counts of each whole day, kept so that a
report over weeks adds a few thousand rows instead of sorting a million.

A day is rolled up when a report first covers it whole (or by `lore catalog`), and
forgotten (`stale_days`) when a sync adds or removes a record that changes its figures: a
record of the day, an outcome whose start is in the day (it supersedes the start), a start
whose outcome is in the day (it gives the outcome its duration). A report adds the roll-ups of
its whole days to the figures of the records at its two edges (`report_sql.add_window`), and
is the report its rows give (tests/test_report_rollup.py).

What a day cannot settle alone is a tracked start: it counts until its outcome is written, so
whether it counts depends on where the report ends. A start whose outcome came the same day is
superseded in every report that covers the day and is left out of its roll-up; the others (open
at the day's end) are kept one by one in `roll_open`, with when their outcome came, for each
report to judge.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, date, timedelta

from ..model import INTERNAL_TYPES
from .catalog_rows import ROLL_TABLES
from .report_sql import MICROS_SQL, Scope, Tally, add_window, micros, record_label
from .track_pairs import DURATION

TYPE_CHECKING = False  # typing costs milliseconds on cold paths; mypy still sees it
if TYPE_CHECKING:
    from collections.abc import Iterable
    from datetime import datetime
    from typing import Any

    from .actionlog import ActionLog

_DAY = "records.ts >= ? AND records.ts < ?"
_COUNTED = f"""INSERT INTO roll_actions SELECT ?, h, t, o, p, a, r, count(*), count(d),
  total({MICROS_SQL.format(x="d")}), max(d) FROM (SELECT substr(ts, 1, 13) AS h, type AS t,
  outcome AS o, project AS p, agent AS a, archived AS r,
  {DURATION.replace("{r}", "records.")} AS d FROM records
  WHERE records.kind = 'action' AND {_DAY} AND records.outcome != 'in_progress')
  GROUP BY h, t, o, p, a, r"""
# the earliest outcome that supersedes a start (track_pairs.SUPERSEDED, without the window's end)
_CLOSED = (
    "(SELECT min(o.ts) FROM records o WHERE o.parent = records.id AND o.parent IS NOT NULL"
    " AND +o.kind = 'action' AND +o.type = records.type AND +o.outcome != 'in_progress'"
    " AND +o.ts >= records.ts)"
)
_OPEN = f"""INSERT INTO roll_open SELECT ?, h, t, p, a, r, s, d, closed FROM
  (SELECT substr(ts, 1, 13) AS h, type AS t, project AS p, agent AS a, archived AS r,
  session AS s, duration AS d, {_CLOSED} AS closed FROM records
  WHERE records.kind = 'action' AND {_DAY} AND records.outcome = 'in_progress')
  WHERE closed IS NULL OR closed >= ?"""
_SESSIONS = f"""INSERT INTO roll_sessions SELECT DISTINCT ?, type, project, agent, archived,
  session FROM records WHERE records.kind = 'action' AND {_DAY}
  AND records.outcome != 'in_progress'"""
_COSTS = f"""INSERT INTO roll_costs SELECT ?, kind, type, event, project, agent, archived,
  overhead, count(*) FROM records WHERE {_DAY} AND overhead IS NOT NULL
  GROUP BY kind, type, event, project, agent, archived, overhead"""


def day_bounds(day: str) -> tuple[str, str]:
    """The first timestamp of `day` and of the day after (records' `ts` are canonical)."""
    after = (date.fromisoformat(day) + timedelta(days=1)).isoformat()
    return f"{day}T00:00:00.000Z", f"{after}T00:00:00.000Z"


def whole_days(since: str, until: str) -> list[str]:
    """The days that lie whole in [since, until), oldest first."""
    first = date.fromisoformat(since[:10])
    if since > f"{since[:10]}T00:00:00.000Z":
        first += timedelta(days=1)
    days: list[str] = []
    while True:
        day = first.isoformat()
        if day_bounds(day)[1] > until:
            return days
        days.append(day)
        first += timedelta(days=1)


def roll(conn: sqlite3.Connection, days: Iterable[str]) -> None:
    """Roll up `days` (inside the caller's write transaction)."""
    for day in days:
        low, high = day_bounds(day)
        for table in ROLL_TABLES:
            conn.execute(f"DELETE FROM {table} WHERE day = ?", (day,))
        conn.execute(_COUNTED, (day, low, high))
        conn.execute(_OPEN, (day, low, high, high))
        conn.execute(_SESSIONS, (day, low, high))
        conn.execute(_COSTS, (day, low, high))
        conn.execute("INSERT OR REPLACE INTO rolled VALUES (?)", (day,))


def roll_settled(conn: sqlite3.Connection, today: str) -> int:
    """Roll up every day of the catalog before `today` that is not yet (`lore catalog`, so the
    first report is as quick as the next); how many days were rolled up, -1 when the catalog
    could not be written."""
    found = conn.execute("SELECT DISTINCT substr(ts, 1, 10) FROM records WHERE ts < ?",
                         (f"{today}T",))  # fmt: skip
    done = {r[0] for r in conn.execute("SELECT day FROM rolled")}
    missing = [r[0] for r in found if r[0] not in done]
    return len(missing) if _write(conn, missing) else -1


def rolled_tally(conn: sqlite3.Connection, scope: Scope, group_by: str) -> Tally:
    """A report's tally: the roll-ups of its whole days (rolled now when missing) and its two
    edges' records; the tally of the whole window's records when it holds no whole day or the
    catalog cannot be written (read-only, busy)."""
    days = whole_days(scope.since, scope.window_end)
    if not days or not _ensure(conn, days):
        return add_window(Tally(), conn, scope, group_by).finish()
    t = Tally()
    first, after = day_bounds(days[0])[0], day_bounds(days[-1])[1]
    for low, high in ((scope.since, first), (after, scope.window_end)):
        if low < high:
            add_window(t, conn, scope.part(low, high), group_by)
    _add_days(t, conn, scope, (days[0], days[-1]), group_by)
    return t.finish()


def _ensure(conn: sqlite3.Connection, days: list[str]) -> bool:
    """Whether every one of `days` that can hold a record is rolled up (rolling the missing
    ones now). A window may span a century of days: only those from the oldest record's to
    the newest's can hold one, and the rolled ones are read as a range, not a list of days."""
    first, last = conn.execute("SELECT min(ts), max(ts) FROM records").fetchone()
    if first is None:
        return True
    done = {
        r[0]
        for r in conn.execute(
            "SELECT day FROM rolled WHERE day >= ? AND day <= ?", (days[0], days[-1])
        )
    }
    missing = [day for day in days if first[:10] <= day <= last[:10] and day not in done]
    return _write(conn, missing)


def _write(conn: sqlite3.Connection, days: list[str]) -> bool:
    """Roll up `days` in one transaction; False when the catalog cannot be written now (busy
    or read-only: the caller counts the rows instead)."""
    if not days:
        return True
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError:
        return False
    try:
        roll(conn, days)
        conn.execute("COMMIT")
    except sqlite3.OperationalError:
        conn.execute("ROLLBACK")
        return False
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return True


def _filters(scope: Scope) -> tuple[str, list[Any]]:
    clauses, args = ["day >= ?", "day <= ?"], []
    for column, value in (("project", scope.project), ("agent", scope.agent)):
        if value is not None:
            clauses.append(f"{column} = ?")
            args.append(value)
    if not scope.include_archive:
        clauses.append("archived = 0")
    return " AND ".join(clauses), args


def _add_days(
    t: Tally, conn: sqlite3.Connection, scope: Scope, span: tuple[str, str], group_by: str
) -> None:
    where, args = _filters(scope)
    args = [*span, *args]
    internal = set() if scope.include_internal else set(INTERNAL_TYPES)
    counted = conn.execute(
        "SELECT hour, type, outcome, project, agent, sum(n), sum(n_d), total(micros_d),"
        f" max(max_d) FROM roll_actions WHERE {where} GROUP BY 1, 2, 3, 4, 5",
        args,
    )
    for hour, kind, outcome, project, agent, n, n_d, micros_d, top in counted:
        if kind in internal:
            t.left_out[kind] += n
            continue
        t.add_count(hour, kind, outcome, project or "-", agent or "-", n, group_by)
        t.add_duration(kind, n_d, int(micros_d), top)
    opened = conn.execute(
        f"SELECT hour, type, project, agent, session, duration, closed FROM roll_open"
        f" WHERE {where}",
        args,
    )
    for hour, kind, project, agent, session, duration, closed in opened:
        if closed is not None and closed < scope.until:
            continue  # superseded by its outcome before the report's end
        if kind in internal:
            t.left_out[kind] += 1
            continue
        t.add_count(hour, kind, "in_progress", project or "-", agent or "-", 1, group_by)
        t.session_ids.add(session)
        if duration is not None:
            t.add_duration(kind, 1, micros(duration), duration)
    sessions = conn.execute(f"SELECT DISTINCT session, type FROM roll_sessions WHERE {where}", args)
    t.session_ids.update(session for session, kind in sessions if kind not in internal)
    costs = conn.execute(
        f"SELECT kind, type, event, overhead, sum(n) FROM roll_costs WHERE {where}"
        " GROUP BY 1, 2, 3, 4",
        args,
    )
    for kind, action_type, event, ms, n in costs:
        if kind == "action" and action_type in internal:
            continue
        t.add_cost(kind, record_label(kind, action_type, event), ms, n)


def roll_up_days(log: ActionLog, now: datetime) -> int:
    """Roll up for reports every day of the catalog before today (`lore catalog`): the days a
    report would roll up the first time it covers them. How many were; -1 when the catalog
    could not be written (reports then roll them up or count the rows)."""
    conn = log.catalog.open()
    if conn is None:
        return 0
    try:
        return roll_settled(conn, now.astimezone(UTC).date().isoformat())
    finally:
        conn.close()
