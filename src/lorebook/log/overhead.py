"""The logging/hook overhead records carry (`meta.overhead_ms`, else `meta.hook_ms`), on every
kind of record: hooks and wrappers record it on actions, and the session-start, stop and
session-end hooks on the session's start and end events. Shared by `lore report` (its per-record
table) and the logging-overhead figure of `lore report kpis`.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

from ..model import INTERNAL_TYPES
from .catalog_rows import overhead_of
from .report_sql import rank_index, record_label

TYPE_CHECKING = False  # typing costs milliseconds on cold paths; mypy still sees it
if TYPE_CHECKING:
    from typing import Any

    from .actionlog import ActionLog


Cost = tuple[str, str, float]  # (record kind, record as `record_label` names it, ms)


def by_action_type(costs: list[Cost]) -> dict[str, tuple[int, float, float, float]]:
    """(count, sum, max, p95) of the actions' overhead per action type (pure)."""
    values: dict[str, list[float]] = {}
    for kind, label, ms in costs:
        if kind == "action":
            values.setdefault(label, []).append(ms)
    out = {}
    for label, found in values.items():
        ordered = sorted(found)
        out[label] = (len(found), sum(found), ordered[-1], ordered[rank_index(len(found), 0.95)])
    return out


def overhead_table(costs: list[Cost]) -> list[dict[str, Any]]:
    """Per record kind (an action's type, `session start`, `session end`): count, p50, p95,
    max and total of the overhead in ms (pure; nearest-rank percentiles)."""
    by_record: dict[str, list[float]] = {}
    for _, label, ms in costs:
        by_record.setdefault(label, []).append(ms)
    table = []
    for label, values in sorted(by_record.items()):
        ordered = sorted(values)
        n = len(values)
        table.append({
            "record": label,
            "count": n,
            "p50_ms": round(ordered[rank_index(n, 0.5)], 3),
            "p95_ms": round(ordered[rank_index(n, 0.95)], 3),
            "max_ms": round(ordered[-1], 3),
            "total_ms": round(sum(values), 3),
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
