"""The logging/hook overhead records carry (`meta.overhead_ms`, else `meta.hook_ms`), on every
kind of record: hooks and wrappers record it on actions, and the session-start, stop and
session-end hooks on the session's start and end events. Shared by `lore report` (its per-record
table) and the logging-overhead figure of `lore report kpis`.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

from collections import Counter

from ..model import INTERNAL_TYPES
from .catalog_rows import overhead_of
from .report_sql import CostCounts, exact_total, rank_index, record_label

TYPE_CHECKING = False  # typing costs milliseconds on cold paths; mypy still sees it
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from .actionlog import ActionLog


Cost = tuple[str, str, float]  # (record kind, record as `record_label` names it, ms)


def count_costs(costs: Iterable[Cost]) -> CostCounts:
    """The costs counted by record kind, record and value (pure)."""
    counts: CostCounts = {}
    for kind, label, ms in costs:
        counts.setdefault((kind, label), Counter())[ms] += 1
    return counts


def stats(values: Counter[float]) -> tuple[int, float, float, float, float]:
    """(count, total, max, p50, p95) of counted values: the total is `exact_total`'s (the same
    in any order), the percentiles nearest-rank (pure)."""
    ordered = sorted(values.items())
    n = sum(values.values())
    ranks = (rank_index(n, 0.5), rank_index(n, 0.95))
    found: list[float] = []
    seen = 0
    for value, count in ordered:
        seen += count
        while len(found) < 2 and ranks[len(found)] < seen:
            found.append(value)
    return n, exact_total(values), ordered[-1][0], found[0], found[1]


def by_action_type(costs: CostCounts) -> dict[str, tuple[int, float, float, float]]:
    """(count, sum, max, p95) of the actions' overhead per action type (pure)."""
    values: dict[str, Counter[float]] = {}
    for (kind, label), counted in costs.items():
        if kind == "action":
            values.setdefault(label, Counter()).update(counted)
    out = {}
    for label, found in values.items():
        n, total, top, _, p95 = stats(found)
        out[label] = (n, total, top, p95)
    return out


def overhead_table(costs: CostCounts) -> list[dict[str, Any]]:
    """Per record kind (an action's type, `session start`, `session end`): count, p50, p95,
    max and total of the overhead in ms (pure; nearest-rank percentiles)."""
    by_record: dict[str, Counter[float]] = {}
    for (_, label), counted in costs.items():
        by_record.setdefault(label, Counter()).update(counted)
    table = []
    for label, values in sorted(by_record.items()):
        n, total, top, p50, p95 = stats(values)
        table.append({
            "record": label,
            "count": n,
            "p50_ms": round(p50, 3),
            "p95_ms": round(p95, 3),
            "max_ms": round(top, 3),
            "total_ms": round(total, 3),
        })  # fmt: skip
    return table


def scan_overhead(
    log: ActionLog,
    since: str,
    until: str,
    *,
    project: str | None = None,
    agent: str | None = None,
    include_archive: bool = False,
    include_internal: bool = False,
    kind: str | None = None,
) -> list[Cost]:
    """(kind, record, ms) of every record in [since, until) carrying an overhead, oldest first,
    from a scan of the shards (the reference for `report_sql.overhead_costs`); only numbers and
    record kinds leave here, so nothing needs redacting."""
    from .reader import iter_records

    costs = []
    for r in iter_records(
        log.layout.actionlog, base=log.root, since=since, until=until,
        include_archive=include_archive,
    ):  # fmt: skip
        if (kind is not None and r["kind"] != kind) or (
            project is not None and r.get("project") != project
        ):
            continue
        if agent is not None and r.get("agent") != agent:
            continue
        if r["kind"] == "action" and not include_internal and r["type"] in INTERNAL_TYPES:
            continue
        cost = overhead_of(r)
        if cost is not None:
            costs.append((r["kind"], record_label(r["kind"], r.get("type"), r.get("event")), cost))
    return costs


def record_overheads(
    log: ActionLog, since: str, until: str, *, kind: str | None = None
) -> list[Cost]:
    """(kind, record, ms) of every record in [since, until) carrying an overhead, lorebook's own
    bookkeeping included: from the catalog when it is usable, else from the shards."""
    from .report_sql import Scope, overhead_costs

    conn = log.catalog.open(since=lambda _conn: since[:10])
    if conn is None:
        return scan_overhead(log, since, until, include_internal=True, kind=kind)
    try:
        scope = Scope(
            since, until, project=None, agent=None, include_archive=False, include_internal=True
        )
        return overhead_costs(conn, scope, kind)
    finally:
        conn.close()
