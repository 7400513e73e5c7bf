"""Activity reports aggregated in SQL over the action catalog, on one connection.

The same figures `report.aggregate` computes from rows (the reference, used when there is no
catalog): SQLite counts and sums the window's actions, so Python only shapes a few dozen groups,
and only the deployments and failures a report lists are read back from their shards.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import math
from collections import Counter

from ..model import INTERNAL_TYPES
from .track_pairs import DURATION, SUPERSEDED

TYPE_CHECKING = False  # typing costs milliseconds on cold paths; mypy still sees it
if TYPE_CHECKING:
    import sqlite3
    from typing import Any

    from .catalog_read import CleanReads

# (record kind, record as `record_label` names it) -> how many records carried each overhead (in
# ms): a report's costs, counted (a catalog report adds up day roll-ups; their order is gone)
CostCounts = dict[tuple[str, str], Counter[float]]


class Tally:
    """What a report counts over a window's actions: by SQL here (from the window's rows, or
    from day roll-ups and the rows at the window's edges, `report_rollup`), or from rows by
    `report.aggregate`. Parts are added with `add_*`, then `finish` sets the totals.

    `durations[type]` is (count, sum, max) of `duration_s`; `overhead[type]` is (count, sum,
    max, p95) of the overhead in ms (`overhead.by_action_type`); `by_type_outcome[type]` counts
    each type's actions by outcome (it also answers the deployments); `day_failures[day]` the
    failures of each day (the failure series beside the total); `left_out` lorebook's own
    bookkeeping left out, by type; `costs` the overhead of every record kind, counted. Sums are
    `exact_total`s, so they do not depend on the order the parts come in.
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
        self.session_ids: set[str] = set()
        self.groups: dict[str, Counter[str]] = {}
        self.by_type_outcome: dict[str, Counter[str]] = {}
        self.durations: dict[str, tuple[int, float, float]] = {}
        self.duration_parts: dict[str, tuple[int, int, float]] = {}  # type -> (n, micros, max)
        self.overhead: dict[str, tuple[int, float, float, float]] = {}
        self.left_out: Counter[str] = Counter()
        self.costs: CostCounts = {}

    def add_count(
        self, hour: str, kind: str, outcome: str, project: str, agent: str, n: int, group_by: str
    ) -> None:
        """`n` counted actions of one hour (`YYYY-MM-DDTHH`), type, outcome, project, agent."""
        day = hour[:10]
        self.outcomes[outcome] += n
        self.days[day] += n
        if outcome == "failure":
            self.day_failures[day] += n
        self.hours[int(hour[11:13])] += n
        key = day if group_by == "day" else kind if group_by == "type" else outcome
        self.groups.setdefault(key, Counter())[outcome] += n
        self.types[kind] += n
        self.by_type_outcome.setdefault(kind, Counter())[outcome] += n
        self.projects[project] += n
        self.agents.add(agent)

    def add_duration(self, kind: str, n: int, micros_total: int, top: float) -> None:
        """`n` durations of a type: their total in millionths of a second, their maximum."""
        if not n:
            return
        had = self.duration_parts.get(kind)
        if had is not None:
            n, micros_total, top = n + had[0], micros_total + had[1], max(top, had[2])
        self.duration_parts[kind] = (n, micros_total, top)

    def add_cost(self, kind: str, label: str, ms: float, n: int = 1) -> None:
        self.costs.setdefault((kind, label), Counter())[ms] += n

    def finish(self) -> Tally:
        self.sessions = len(self.session_ids)
        self.durations = {
            k: (n, total / MILLION, top) for k, (n, total, top) in self.duration_parts.items()
        }
        return self


MILLION = 1_000_000
# a value in millionths, rounded half away from zero: SQLite's round() (see `micros`)
MICROS_SQL = "CAST(round({x} * 1000000.0) AS INTEGER)"


def micros(value: float) -> int:
    """`value` in millionths as `MICROS_SQL` computes it (SQLite's round() truncates `r + 0.5`,
    or `r - 0.5` below zero, and leaves beyond 2**52 what has no fraction): sums of these are
    exact integers, the same in any order, so a report adds day roll-ups and the rows at its
    edges to the total a scan adds row by row."""
    scaled = value * 1000000.0
    if abs(scaled) > 4503599627370496.0:
        return int(scaled)
    return math.trunc(scaled + (-0.5 if scaled < 0 else 0.5))


def exact_total(values: Counter[float]) -> float:
    """The total of counted values, each in millionths (`micros`): the same in any order."""
    return sum(micros(v) * n for v, n in values.items()) / MILLION


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
        closes_by: str | None = None,
    ) -> None:
        """`closes_by`: the end of the report's window, when this scope is only a part of it
        (a tracked start is superseded by an outcome written before the report's end)."""
        self.since, self.window_end = since, until
        self.project, self.agent, self.include_archive = project, agent, include_archive
        clauses = ["{}ts >= ?", "{}ts < ?"]
        self.args: list[Any] = [since, until]
        for column, value in (("project", project), ("agent", agent)):
            if value is not None:
                clauses.append(f"{{}}{column} = ?")
                self.args.append(value)
        if not include_archive:
            clauses.append("{}archived = 0")
        until = self.until = closes_by or until
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

    def part(self, since: str, until: str) -> Scope:
        """This scope over a part [since, until) of its window."""
        return Scope(
            since, until, project=self.project, agent=self.agent,
            include_archive=self.include_archive, include_internal=self.include_internal,
            closes_by=self.until,
        )  # fmt: skip

    def tally_sql(self) -> str:
        """`_TALLY` over this scope's window (its args: `tally_args`)."""
        internal = "0"
        if not self.include_internal:
            internal = f"(records.type IN ({', '.join('?' * len(INTERNAL_TYPES))}))"
        return _TALLY.format(
            micros=MICROS_SQL.format(x="d"),
            duration=DURATION.replace("{r}", "records."),
            superseded=SUPERSEDED.replace("{r}", "records."),
            internal=internal,
            where=self.window,
        )

    def tally_args(self) -> list[Any]:
        internal = [] if self.include_internal else list(INTERNAL_TYPES)
        return [self.until, *internal, *internal, *self.window_args]


# The window's records of every kind are read once (the CTE is used by every branch, so SQLite
# materialises it) and every figure is taken from that copy: the actions counted and the
# bookkeeping left out at their finest grain (hour, type, outcome, project, agent: `Tally.add_*`
# folds them), the sessions and the overheads of every record kind, counted by value. `n` says
# what a row is: 1 counted, 2 bookkeeping left out, 3 a superseded start, 4 a superseded start of
# bookkeeping, 0 a session event. Durations are summed in millionths (`micros`): exact, so the
# same whether a report adds these rows or day roll-ups (`report_rollup`).
_TALLY = """WITH w AS (SELECT substr(ts, 1, 13) AS h, outcome AS o, type AS t, project AS p,
  agent AS a, session AS s, {duration} AS d, kind AS k, event AS e, overhead AS c,
  CASE WHEN kind != 'action' THEN 0 WHEN {superseded} THEN 3 + {internal}
  WHEN {internal} THEN 2 ELSE 1 END AS n FROM records WHERE {where})
SELECT 1, n, h, t, o, p, a, count(*), count(d), total({micros}), max(d) FROM w
  WHERE n IN (1, 2) GROUP BY 2, 3, 4, 5, 6, 7
UNION ALL SELECT DISTINCT 2, NULL, s, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL FROM w
  WHERE n = 1
UNION ALL SELECT 3, NULL, k, t, e, NULL, NULL, count(*), NULL, NULL, c FROM w
  WHERE c IS NOT NULL AND n IN (0, 1, 3) GROUP BY 3, 4, 5, 11"""


def tally(conn: sqlite3.Connection, scope: Scope, group_by: str) -> Tally:
    """Every count, sum and maximum of a report, what it left out of lorebook's bookkeeping
    (`left_out`, empty with `include_internal`) and the overhead of every record kind
    (`costs`), in one statement reading the window's records once. `by_type_outcome` also
    answers the deployments' outcomes."""
    return add_window(Tally(), conn, scope, group_by).finish()


def add_window(t: Tally, conn: sqlite3.Connection, scope: Scope, group_by: str) -> Tally:
    """`t` with the figures of the scope's window added (not finished)."""
    rows = conn.execute(scope.tally_sql(), scope.tally_args()).fetchall()
    for part, n_class, key, kind, outcome, project, agent, n, n_d, micros_d, top in rows:
        if part == 1:
            if n_class == 1:
                t.add_count(key, kind, outcome, project or "-", agent or "-", n, group_by)
                t.add_duration(kind, n_d, int(micros_d), top)
            else:
                t.left_out[kind] += n
        elif part == 2:
            t.session_ids.add(key)
        else:  # (kind, type, event) of a record with an overhead: how many had it
            t.add_cost(key, record_label(key, kind, outcome), top, n)
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
