"""Activity reports aggregated in SQL over the action catalog, on one connection.

The same figures `report.aggregate` computes from rows (the reference, used when there is no
catalog): SQLite counts and sums the window's actions, so Python only shapes a few dozen groups,
and only the deployments and failures a report lists are read back from their shards.
"""

from __future__ import annotations

from collections import Counter

from ..model import INTERNAL_TYPES

TYPE_CHECKING = False  # typing costs milliseconds on cold paths; mypy still sees it
if TYPE_CHECKING:
    import sqlite3
    from typing import Any

    from .catalog_read import CleanReads


class Tally:
    """What a report counts over a window's actions: by SQL here, or from rows by
    `report.aggregate`.

    `durations[type]` is (count, sum, max) of `duration_s`; `overhead[type]` is (count, sum,
    max, p95) of the overhead in ms (`overhead.by_action_type`).
    """

    def __init__(self) -> None:
        self.outcomes: Counter[str] = Counter()
        self.types: Counter[str] = Counter()
        self.days: Counter[str] = Counter()
        self.hours = [0] * 24
        self.projects: Counter[str] = Counter()
        self.agents: set[str] = set()
        self.sessions = 0
        self.groups: dict[str, Counter[str]] = {}
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
        self.template = actions
        self.where = actions.replace("{}", "")
        # the same records of every kind (session events too): lorebook's bookkeeping is a
        # type of action, so only actions are left out for it
        either = f"(kind != 'action' OR {internal})" if internal else ""
        self.any_kind = " AND ".join([*clauses, *([either] if either else [])]).replace("{}", "")

    def rows(
        self, conn: sqlite3.Connection, select: str, tail: str = "", extra: tuple[Any, ...] = ()
    ) -> list[Any]:
        sql = f"SELECT {select} FROM records WHERE {self.where} {tail}"
        return conn.execute(sql, [*self.args, *extra]).fetchall()


def tally(conn: sqlite3.Connection, scope: Scope, group_by: str) -> Tally:
    """Every count, sum and maximum of a report but the overhead (`overhead_costs`), in five
    grouped passes over the window (each pass reads every row of the window: at a million
    actions that is most of a report). The sums are SQLite's, in time order per type, as the
    Python reference adds them."""
    t = Tally()
    for hour, outcome, n in scope.rows(
        conn, "substr(ts, 1, 13), outcome, count(*)", "GROUP BY 1, 2"
    ):
        t.outcomes[outcome] += n
        t.days[hour[:10]] += n
        t.hours[int(hour[11:13])] += n
        if group_by == "day":
            t.groups.setdefault(hour[:10], Counter())[outcome] += n
        elif group_by == "outcome":
            t.groups.setdefault(outcome, Counter())[outcome] += n
    for kind, outcome, n in scope.rows(conn, "type, outcome, count(*)", "GROUP BY 1, 2"):
        t.types[kind] += n
        if group_by == "type":
            t.groups.setdefault(kind, Counter())[outcome] += n
    for project, agent, n in scope.rows(
        conn,
        "coalesce(nullif(project, ''), '-'), coalesce(nullif(agent, ''), '-'), count(*)",
        "GROUP BY 1, 2",
    ):
        t.projects[project] += n
        t.agents.add(agent)
    t.sessions = scope.rows(conn, "count(DISTINCT session)")[0][0]
    measured = scope.rows(
        conn,
        "type, count(duration), total(duration), max(duration)",
        "AND duration IS NOT NULL GROUP BY 1",
    )
    for kind, n_d, sum_d, max_d in measured:
        t.durations[kind] = (n_d, sum_d, max_d)
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
    args = [*scope.args]
    if kind is not None:
        sql += " AND kind = ?"
        args.append(kind)
    rows = conn.execute(sql + " AND overhead IS NOT NULL ORDER BY ts, id", args)
    return [(k, record_label(k, t, e), ms) for k, t, e, ms in rows]


def outcome_counts(conn: sqlite3.Connection, scope: Scope, match: tuple[str, str]) -> Counter[str]:
    """Actions whose column `match[0]` is `match[1]`, counted by outcome."""
    column, value = match
    found = scope.rows(conn, "outcome, count(*)", f"AND {column} = ? GROUP BY 1", (value,))
    return Counter(dict(found))
