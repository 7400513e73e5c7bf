"""Activity reports aggregated in SQL over the action catalog, on one connection.

The same figures `report.aggregate` computes from rows (the reference, used when there is no
catalog): SQLite counts and sums the window's actions, so Python only shapes a few dozen groups,
and only the deployments and failures a report lists are read back from their shards.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

from collections import Counter

from ..model import INTERNAL_TYPES
from .track_pairs import DURATION, SUPERSEDED

TYPE_CHECKING = False  # typing costs milliseconds on cold paths; mypy still sees it
if TYPE_CHECKING:
    import sqlite3
    from typing import Any

    from .catalog_read import CleanReads


class Tally:
    """What a report counts over a window's actions: by SQL here, or from rows by
    `report.aggregate`.

    `durations[type]` is (count, sum, max) of `duration_s`; `overhead[type]` is (count, sum,
    max, p95) of the overhead in ms (`overhead.by_action_type`); `by_type_outcome[type]` counts
    each type's actions by outcome (it also answers the deployments); `day_failures[day]` the
    failures of each day (the failure series beside the total).
    """

    def __init__(self) -> None:
        self.outcomes: Counter[str] = Counter()
        self.types: Counter[str] = Counter()
        self.days: Counter[str] = Counter()
        self.day_failures: Counter[str] = Counter()
        self.hours = [0] * 24
        self.projects: Counter[str] = Counter()
        self.agents: set[str] = set()
        self.sessions = 0
        self.groups: dict[str, Counter[str]] = {}
        self.by_type_outcome: dict[str, Counter[str]] = {}
        self.durations: dict[str, tuple[int, float, float]] = {}
        self.overhead: dict[str, tuple[int, float, float, float]] = {}


def record_label(kind: str, action_type: str | None, event: str | None) -> str:
    """What an overhead is counted under: an action's type, or `session start` / `session end`
    for the session events the session-start, stop and session-end hooks write."""
    return (action_type or "-") if kind == "action" else f"{kind} {event or '-'}"


def rank_index(count: int, share: float) -> int:
    """Where the `share` percentile sits in `count` sorted values (nearest rank)."""
    return min(count - 1, round(share * (count - 1)))


def p95_index(count: int) -> int:
    """Where the 95th percentile sits in `count` sorted values (nearest rank)."""
    return rank_index(count, 0.95)


class Scope:
    """The WHERE clause of a report's actions (window, project, agent, archive, lorebook's own
    bookkeeping types) on `records`."""

    def __init__(
        self,
        since: str,
        until: str,
        *,
        project: str | None,
        agent: str | None,
        include_archive: bool,
        include_internal: bool = False,
    ) -> None:
        clauses = ["{}ts >= ?", "{}ts < ?"]
        self.args: list[Any] = [since, until]
        for column, value in (("project", project), ("agent", agent)):
            if value is not None:
                clauses.append(f"{{}}{column} = ?")
                self.args.append(value)
        if not include_archive:
            clauses.append("{}archived = 0")
        internal = ""
        if not include_internal:
            internal = f"{{}}type NOT IN ({', '.join('?' * len(INTERNAL_TYPES))})"
            self.args.extend(INTERNAL_TYPES)
        actions = " AND ".join(["{}kind = 'action'", *clauses, *([internal] if internal else [])])
        # the same records of every kind (session events too): lorebook's bookkeeping is a
        # type of action, so only actions are left out for it; every record's overhead counts
        either = f"(kind != 'action' OR {internal})" if internal else ""
        self.any_kind = " AND ".join([*clauses, *([either] if either else [])]).replace("{}", "")
        self.any_args = list(self.args)
        # a tracked action counts once: a start its outcome superseded by `until` is left out
        actions += f" AND NOT ({SUPERSEDED.replace('{r}', '{}')})"
        self.args.append(until)
        self.template = actions
        self.where = actions.replace("{}", "records.")

    def rows(
        self, conn: sqlite3.Connection, select: str, tail: str = "", extra: tuple[Any, ...] = ()
    ) -> list[Any]:
        sql = f"SELECT {select} FROM records WHERE {self.where} {tail}"
        return conn.execute(sql, [*self.args, *extra]).fetchall()


# The window's rows are read once (the CTE is used five times, so SQLite materialises it) and
# every grouped count is taken from that copy: five statements each reading the window's rows
# from the table cost a cold report ~5 ms at 100,000 actions. Each branch keeps the GROUP BY of
# the statement it replaced, over the rows in the same (ts, id) order, so the sums are the same.
_TALLY = """WITH w AS (SELECT substr(ts, 1, 13) AS h, outcome AS o, type AS t,
  coalesce(nullif(project, ''), '-') AS p, coalesce(nullif(agent, ''), '-') AS a,
  session AS s, {duration} AS d FROM records WHERE {where})
SELECT 0, h, o, count(*), NULL, NULL FROM w GROUP BY 2, 3
UNION ALL SELECT 1, t, o, count(*), NULL, NULL FROM w GROUP BY 2, 3
UNION ALL SELECT 2, p, a, count(*), NULL, NULL FROM w GROUP BY 2, 3
UNION ALL SELECT 3, NULL, NULL, count(DISTINCT s), NULL, NULL FROM w
UNION ALL SELECT 4, t, NULL, count(d), total(d), max(d) FROM w WHERE d IS NOT NULL GROUP BY 2"""


def tally(conn: sqlite3.Connection, scope: Scope, group_by: str) -> Tally:
    """Every count, sum and maximum of a report but the overhead (`overhead_costs`), in one
    statement reading the window's rows once. The sums are SQLite's, in time order per type, as
    the Python reference adds them. `by_type_outcome` also answers the deployments' outcomes."""
    t = Tally()
    sql = _TALLY.format(where=scope.where, duration=DURATION.replace("{r}", "records."))
    rows = conn.execute(sql, scope.args).fetchall()
    for part, key, other, n, sum_d, max_d in rows:
        if part == 0:  # (hour, outcome)
            t.outcomes[other] += n
            t.days[key[:10]] += n
            if other == "failure":
                t.day_failures[key[:10]] += n
            t.hours[int(key[11:13])] += n
            if group_by == "day":
                t.groups.setdefault(key[:10], Counter())[other] += n
            elif group_by == "outcome":
                t.groups.setdefault(other, Counter())[other] += n
        elif part == 1:  # (type, outcome)
            t.types[key] += n
            t.by_type_outcome.setdefault(key, Counter())[other] += n
            if group_by == "type":
                t.groups.setdefault(key, Counter())[other] += n
        elif part == 2:  # (project, agent)
            t.projects[key] += n
            t.agents.add(other)
        elif part == 3:
            t.sessions = n
        else:  # (type) with a duration
            t.durations[key] = (n, sum_d, max_d)
    return t


def newest(
    conn: sqlite3.Connection,
    reads: CleanReads,
    scope: Scope,
    match: tuple[str, str],
    limit: int,
) -> list[dict[str, Any]]:
    """The newest `limit` actions whose column `match[0]` is `match[1]`, read back from their
    shards by `reads` (one per report, so a shard is opened and checked once), redacted (a row
    whose shard changed since the sync is skipped, as a catalog read does)."""
    column, value = match
    where = scope.template.replace("{}", "r.")
    rows = conn.execute(
        "SELECT r.id, s.path, r.off, r.len, r.archived FROM records r JOIN shards s"
        f" ON s.id = r.shard WHERE {where} AND r.{column} = ?"
        " ORDER BY r.ts DESC, r.id DESC LIMIT ?",
        [*scope.args, value, limit],
    ).fetchall()
    return list(reads.records(rows))


def overhead_costs(
    conn: sqlite3.Connection, scope: Scope, kind: str | None = None
) -> list[tuple[str, str, float]]:
    """(kind, record, ms) of every record of the scope carrying an overhead (any kind, or
    `kind`), oldest first; `record` as `record_label` names it."""
    sql = f"SELECT kind, type, event, overhead FROM records WHERE {scope.any_kind}"
    args = [*scope.any_args]
    if kind is not None:
        sql += " AND kind = ?"
        args.append(kind)
    rows = conn.execute(sql + " AND overhead IS NOT NULL ORDER BY ts, id", args)
    return [(k, record_label(k, t, e), ms) for k, t, e, ms in rows]


def internal_counts(conn: sqlite3.Connection, scope: Scope) -> Counter[str]:
    """How many of lorebook's own bookkeeping actions (`model.INTERNAL_TYPES`) the window holds,
    by type: what a report leaves out says so. `scope` is built with `include_internal=True`."""
    marks = ", ".join("?" * len(INTERNAL_TYPES))
    rows = scope.rows(
        conn, "type, count(*)", f"AND records.type IN ({marks}) GROUP BY type", INTERNAL_TYPES
    )
    return Counter({kind: n for kind, n in rows})
