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
    failures of each day (the failure series beside the total); `left_out` lorebook's own
    bookkeeping left out, by type; `costs` the overhead of every record kind, oldest first.
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
        self.left_out: Counter[str] = Counter()
        self.costs: list[tuple[str, str, float]] = []


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
        self.until = until
        self.include_internal = include_internal
        self.window = " AND ".join(clauses).replace("{}", "records.")
        self.window_args = list(self.args)
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

    def tally_sql(self) -> str:
        """`_TALLY` over this scope's window (its args: `tally_args`)."""
        internal = "0"
        if not self.include_internal:
            internal = f"(records.type IN ({', '.join('?' * len(INTERNAL_TYPES))}))"
        return _TALLY.format(
            duration=DURATION.replace("{r}", "records."),
            superseded=SUPERSEDED.replace("{r}", "records."),
            internal=internal,
            where=self.window,
        )

    def tally_args(self) -> list[Any]:
        internal = [] if self.include_internal else list(INTERNAL_TYPES)
        return [self.until, *internal, *internal, *self.window_args]


# The window's records of every kind are read once (the CTE is used by every branch, so SQLite
# materialises it, in the (ts, id) order of `rec_ts`) and every figure is taken from that copy:
# the counted actions' groups, the bookkeeping left out and the overheads (three statements
# read the window before; at 1M actions the time is in the GROUP BYs' sorts, not in the reads:
# docs/benchmarks.md). Each grouped branch keeps the GROUP BY it always had, over the rows in
# the same order, so the sums are the same. `n` says what a row is: 1 counted, 2 bookkeeping
# left out, 3 a superseded start, 4 a superseded start of bookkeeping, 0 a session event.
_TALLY = """WITH w AS (SELECT substr(ts, 1, 13) AS h, outcome AS o, type AS t,
  coalesce(nullif(project, ''), '-') AS p, coalesce(nullif(agent, ''), '-') AS a,
  session AS s, {duration} AS d, kind AS k, event AS e, overhead AS c,
  CASE WHEN overhead IS NOT NULL THEN ts END AS q, CASE WHEN overhead IS NOT NULL THEN id END AS i,
  CASE WHEN kind != 'action' THEN 0 WHEN {superseded} THEN 3 + {internal}
  WHEN {internal} THEN 2 ELSE 1 END AS n FROM records WHERE {where})
SELECT 0, h, o, count(*), NULL, NULL, NULL FROM w WHERE n = 1 GROUP BY 2, 3
UNION ALL SELECT 1, t, o, count(*), NULL, NULL, NULL FROM w WHERE n = 1 GROUP BY 2, 3
UNION ALL SELECT 2, p, a, count(*), NULL, NULL, NULL FROM w WHERE n = 1 GROUP BY 2, 3
UNION ALL SELECT 3, NULL, NULL, count(DISTINCT s), NULL, NULL, NULL FROM w WHERE n = 1
UNION ALL SELECT 4, t, NULL, count(d), total(d), max(d), NULL FROM w
  WHERE n = 1 AND d IS NOT NULL GROUP BY 2
UNION ALL SELECT 5, t, NULL, count(*), NULL, NULL, NULL FROM w WHERE n = 2 GROUP BY 2
UNION ALL SELECT 6, k, t, e, c, q, i FROM w WHERE c IS NOT NULL AND n IN (0, 1, 3)"""


def tally(conn: sqlite3.Connection, scope: Scope, group_by: str) -> Tally:
    """Every count, sum and maximum of a report, what it left out of lorebook's bookkeeping
    (`left_out`, empty with `include_internal`) and the overhead of every record kind
    (`costs`, oldest first, as `overhead_costs` gives them), in one statement reading the
    window's records once. The sums are SQLite's, in time order per type, as the Python
    reference adds them. `by_type_outcome` also answers the deployments' outcomes."""
    t = Tally()
    rows = conn.execute(scope.tally_sql(), scope.tally_args()).fetchall()
    costs: list[tuple[str, str, float, str, str]] = []
    for part, key, other, n, sum_d, max_d, rid in rows:
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
        elif part == 4:  # (type) with a duration
            t.durations[key] = (n, sum_d, max_d)
        elif part == 5:  # (type) of the bookkeeping left out
            t.left_out[key] = n
        else:  # (kind, type, event, overhead, ts, id)
            costs.append((key, record_label(key, other, n), sum_d, max_d, rid))
    if any(costs[k][3:] > costs[k + 1][3:] for k in range(len(costs) - 1)):
        costs.sort(key=lambda cost: cost[3:])  # (ts, id): the order the sums are taken in
    t.costs = [(kind, label, ms) for kind, label, ms, _, _ in costs]
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
