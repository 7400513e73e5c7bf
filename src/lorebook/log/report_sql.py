"""Activity reports aggregated in SQL over the action catalog, on one connection.

The same figures `report.aggregate` computes from rows (the reference, used when there is no
catalog): SQLite counts and sums the window's actions, so Python only shapes a few dozen groups,
and only the deployments and failures a report lists are read back from their shards.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from ..model import INTERNAL_TYPES

TYPE_CHECKING = False  # typing costs milliseconds on cold paths; mypy still sees it
if TYPE_CHECKING:
    import sqlite3
    from typing import Any

    from ..redact.sanitize import Sanitizer


class Tally:
    """What a report counts over a window's actions: by SQL here, or from rows by
    `report.aggregate`.

    `durations[type]` is (count, sum, max) of `duration_s`; `overhead[type]` is (count, sum,
    max, p95) of the overhead in ms.
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


def p95_index(count: int) -> int:
    """Where the 95th percentile sits in `count` sorted values (nearest rank)."""
    return min(count - 1, round(0.95 * (count - 1)))


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
        clauses = ["{}kind = 'action'", "{}ts >= ?", "{}ts < ?"]
        self.args: list[Any] = [since, until]
        for column, value in (("project", project), ("agent", agent)):
            if value is not None:
                clauses.append(f"{{}}{column} = ?")
                self.args.append(value)
        if not include_internal:
            clauses.append(f"{{}}type NOT IN ({', '.join('?' * len(INTERNAL_TYPES))})")
            self.args.extend(INTERNAL_TYPES)
        if not include_archive:
            clauses.append("{}archived = 0")
        self.template = " AND ".join(clauses)
        self.where = self.template.replace("{}", "")

    def rows(
        self, conn: sqlite3.Connection, select: str, tail: str = "", extra: tuple[Any, ...] = ()
    ) -> list[Any]:
        sql = f"SELECT {select} FROM records WHERE {self.where} {tail}"
        return conn.execute(sql, [*self.args, *extra]).fetchall()


def tally(conn: sqlite3.Connection, scope: Scope, group_by: str) -> Tally:
    """Every count, sum and maximum of a report, in five grouped passes over the window (each
    pass reads every row of the window: at a million actions that is most of a report). The
    sums are SQLite's, in time order per type, as the Python reference adds them."""
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
        "type, count(duration), total(duration), max(duration),"
        " count(overhead), total(overhead), max(overhead)",
        "AND (duration IS NOT NULL OR overhead IS NOT NULL) GROUP BY 1",
    )
    for kind, n_d, sum_d, max_d, n_o, sum_o, max_o in measured:
        if n_d:
            t.durations[kind] = (n_d, sum_d, max_d)
        if n_o:
            (p95,) = scope.rows(
                conn, "overhead", "AND type = ? AND overhead IS NOT NULL"
                " ORDER BY overhead LIMIT 1 OFFSET ?", (kind, p95_index(n_o)),
            )[0]  # fmt: skip
            t.overhead[kind] = (n_o, sum_o, max_o, p95)
    return t


def newest(
    conn: sqlite3.Connection,
    base: Any,
    scope: Scope,
    sanitizer: Sanitizer,
    match: tuple[str, str],
    limit: int,
) -> Iterator[dict[str, Any]]:
    """The newest `limit` actions whose column `match[0]` is `match[1]`, read back from their
    shards under `base`, redacted (a row whose shard changed since the sync is skipped, as a
    catalog read does)."""
    from .catalog_read import CleanReads

    column, value = match
    where = scope.template.replace("{}", "r.")
    rows = conn.execute(
        "SELECT r.id, s.path, r.off, r.len, r.archived FROM records r JOIN shards s"
        f" ON s.id = r.shard WHERE {where} AND r.{column} = ?"
        " ORDER BY r.ts DESC, r.id DESC LIMIT ?",
        [*scope.args, value, limit],
    ).fetchall()
    reads = CleanReads(conn, base, sanitizer)
    try:
        yield from reads.records(rows)
    finally:
        reads.close()


def outcome_counts(conn: sqlite3.Connection, scope: Scope, match: tuple[str, str]) -> Counter[str]:
    """Actions whose column `match[0]` is `match[1]`, counted by outcome."""
    column, value = match
    found = scope.rows(conn, "outcome, count(*)", f"AND {column} = ? GROUP BY 1", (value,))
    return Counter(dict(found))
