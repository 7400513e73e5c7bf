"""Activity reports: what the agents did in a window, from the catalog (or a scan of the shards).

With a usable catalog the report is aggregated in SQL on one synced connection (report_sql);
without one, the same aggregates are computed here in Python over slim rows read from the shards
(time, type, outcome, project, agent, session, duration, overhead) — the reference the SQL path
is tested against. Everything here is given the action log (`ActionLog`), never the `Lorebook`.

Definitions (documented in docs/reports.md):
* success rate = success / (success + failure + blocked); `in_progress` records open work.
* a tracked action counts once: its start until its outcome is written (`track_pairs`).
* overhead = the logging/hook cost a record carries in `meta.overhead_ms` (else `meta.hook_ms`),
  in milliseconds, as hooks and wrappers record it, on actions and on session events alike (the
  session hooks record theirs on the session's start and end); absent when nothing recorded it.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from datetime import UTC, date, datetime, timedelta

from ..errors import UsageError
from ..model import INTERNAL_TYPES
from ..timeutil import check_days, format_ts, parse_when
from .catalog_rows import overhead_of
from .open_work import describe
from .overhead import Cost, by_action_type, count_costs, overhead_table, scan_overhead
from .report_sql import CostCounts, Tally, exact_total, micros

TYPE_CHECKING = False  # typing costs milliseconds on cold paths; mypy still sees it
if TYPE_CHECKING:
    from typing import Any

    from ..contracts.records import (
        ActivityReport,
        InternalLeftOut,
        OutcomeCounts,
        ReportBody,
        ReportSections,
    )
    from ..contracts.records import (
        Window as WindowData,
    )
    from .actionlog import ActionLog

GROUPS = ("day", "type", "outcome")
OUTCOME_KEYS = ("success", "failure", "blocked", "in_progress")
FAILURES_SHOWN = 10
DEPLOYMENTS_SHOWN = 50
_SLIM = ("ts", "type", "outcome", "project", "agent", "session", "duration", "overhead")


class Window:
    """A half-open UTC window [since, until) with a label for people."""

    def __init__(self, since: datetime, until: datetime) -> None:
        self.since = since
        self.until = until

    @property
    def since_ts(self) -> str:
        return format_ts(self.since)

    @property
    def until_ts(self) -> str:
        return format_ts(self.until)

    def days(self) -> list[str]:
        """Every UTC day the window touches."""
        out, day = [], self.since.date()
        last = (self.until - timedelta(milliseconds=1)).date()
        while day <= last:
            out.append(day.isoformat())
            day += timedelta(days=1)
        return out

    def to_dict(self) -> WindowData:
        return {"since": self.since_ts, "until": self.until_ts}


def resolve_window(
    *, days: int | None, since: str | None, until: str | None, now: datetime
) -> Window:
    """The window of `--days N` (ending now) or `--since/--until`; bad or future ones refused."""
    if days is not None and since is not None:
        raise UsageError("give either --days or --since, not both")
    if days is not None:
        check_days(days, "--days")
    start = parse_when(since, now=now, option="--since") if since else None
    # the end is exclusive and timestamps keep milliseconds: a window ending now takes in what
    # was logged in now's own millisecond (the record a report right after `lore log` must show)
    end = parse_when(until, now=now, option="--until") if until else now + timedelta(milliseconds=1)
    if end > now + timedelta(days=1):
        raise UsageError("--until {} is in the future (now is {})", until, format_ts(now))
    if start is None:
        start = end - timedelta(days=days or 7)
    if start > now:
        raise UsageError("--since {} is in the future (now is {})", since, format_ts(now))
    if start >= end:
        raise UsageError("--since {} is not before --until {}", format_ts(start), format_ts(end))
    return Window(start, end)


def day_window(day: str | None, now: datetime) -> Window:
    """One UTC day (default: yesterday), for the daily report file."""
    if day is None:
        target = (now - timedelta(days=1)).date()
    else:
        try:
            target = date.fromisoformat(day)
        except ValueError:
            raise UsageError("--date {!r}: expected a date like 2026-11-21", day) from None
    start = datetime(target.year, target.month, target.day, tzinfo=UTC)
    if start > now:
        raise UsageError("--date {} is in the future", target.isoformat())
    return Window(start, start + timedelta(days=1))


def week_window(week: str | None, now: datetime) -> tuple[str, Window]:
    """An ISO week (`2026-W47`; default: the last complete one) and its UTC window."""
    if week is None:
        year, number, _ = (now - timedelta(days=7)).isocalendar()
    else:
        try:
            year_text, number_text = week.upper().split("-W")
            year, number = int(year_text), int(number_text)
            date.fromisocalendar(year, number, 1)
        except ValueError:
            raise UsageError("--week {!r}: expected an ISO week like 2026-W47", week) from None
    monday = date.fromisocalendar(year, number, 1)
    start = datetime(monday.year, monday.month, monday.day, tzinfo=UTC)
    if start > now:
        raise UsageError("--week {}-W{:02d} is in the future", year, number)
    return f"{year}-W{number:02d}", Window(start, start + timedelta(days=7))


def slim_rows(
    log: ActionLog,
    window: Window,
    *,
    project: str | None,
    agent: str | None,
    include_archive: bool,
    include_internal: bool = False,
    left_out: Counter[str] | None = None,
) -> Iterator[tuple[Any, ...]]:
    """(ts, type, outcome, project, agent, session, duration, overhead) of every action, a
    tracked action once (`track_pairs.Links`: its start is left out once its outcome is in).
    Internal actions left out are counted by type in `left_out` (each tracked one once)."""
    from .query import ActionFilter  # the scan paths only: a catalog report needs no filter
    from .track_pairs import Links, start_finder

    query = ActionFilter(project=project, agent=agent, since=window.since_ts, until=window.until_ts)
    links = Links(start_finder(log))
    internal = Links()  # their own pairs: never closes one of the counted rows
    skipped: list[tuple[str, str]] = []
    rows: list[tuple[Any, ...]] = []
    for r in log.iter_actions(query, newest_first=False, include_archive=include_archive):
        if not include_internal and r["type"] in INTERNAL_TYPES:
            if left_out is not None:
                internal.see(r)
                skipped.append((r["type"], r["id"]))
            continue
        links.see(r)
        duration = r.get("duration_s")
        if not isinstance(duration, int | float) and r.get("parent"):
            duration = r  # from its start: resolved once every start of the window is known
        rows.append((
            r["ts"], r["type"], r["outcome"], r.get("project"), r.get("agent"), r["session"],
            duration, overhead_of(r), r["id"],
        ))  # fmt: skip
    closed = links.finish()
    if left_out is not None:
        gone = internal.finish()
        left_out.update(kind for kind, rid in skipped if rid not in gone)
    for *row, duration, cost, rid in rows:
        if rid in closed:
            continue
        if isinstance(duration, dict):
            duration = links.duration(duration)
        yield (*row, float(duration) if isinstance(duration, int | float) else None, cost)


def _rate(counts: Counter[str]) -> float | None:
    done = counts["success"] + counts["failure"] + counts["blocked"]
    return round(100.0 * counts["success"] / done, 1) if done else None


def _top(counter: Counter[str]) -> dict[str, Any] | None:
    if not counter:
        return None
    key, count = min(counter.items(), key=lambda kv: (-kv[1], kv[0]))
    return {"key": key, "count": count}


def check_group(group_by: str) -> None:
    if group_by not in GROUPS:
        raise UsageError("--group-by {!r} is not one of: " + ", ".join(GROUPS), group_by)


def aggregate(
    rows: Iterable[tuple[Any, ...]],
    window: Window,
    group_by: str,
    costs: list[Cost] | None = None,
) -> ReportSections:
    """Summary, breakdown, per-hour/day counts, durations and overhead of slim rows (pure): the
    reference for the SQL aggregation of report_sql. `costs` are the overheads of every kind of
    record (`overhead.scan_overhead`); without them, the actions' own."""
    check_group(group_by)
    t = Tally()
    overhead: dict[str, list[float]] = {}
    for ts, kind, outcome, project, agent, session, duration, cost in rows:
        t.add_count(ts[:13], kind, outcome, project or "-", agent or "-", 1, group_by)
        t.session_ids.add(session)
        if duration is not None:
            t.add_duration(kind, 1, micros(duration), duration)
        if cost is not None:
            overhead.setdefault(kind, []).append(cost)
    if costs is None:
        costs = [("action", kind, ms) for kind, values in overhead.items() for ms in values]
    # every record's cost counts, a tracked action's start too: it was paid when it was written
    t.costs = count_costs(costs)
    t.overhead = by_action_type(t.costs)
    return shape(t.finish(), window, group_by, t.costs)


def shape(t: Tally, window: Window, group_by: str, costs: CostCounts) -> ReportSections:
    """The report's aggregate sections from a tally and the overheads of every kind of record
    (pure)."""
    groups = dict(t.groups)
    if group_by == "day":
        for day in window.days():
            groups.setdefault(day, Counter())
    total = sum(t.outcomes.values())
    every: Counter[float] = Counter()
    for counted in costs.values():
        every.update(counted)
    busiest = _top(t.days)
    common = _top(t.types)
    return {
        "summary": {
            "total_actions": total,
            "success_rate": _rate(t.outcomes),
            "outcomes": _outcomes(t.outcomes),
            "most_common_action": {"type": common["key"], "count": common["count"]}
            if common
            else None,
            "busiest_day": {"day": busiest["key"], "count": busiest["count"]} if busiest else None,
            "active_projects": sorted(p for p in t.projects if p != "-"),
            "agents": sorted(a for a in t.agents if a != "-"),
            "sessions": t.sessions,
        },
        "group_by": group_by,
        "breakdown": [
            {
                "key": key,
                "total": sum(c.values()),
                **_outcomes(c),
                "success_rate": _rate(c),
            }
            for key, c in sorted(
                groups.items(),
                key=(lambda kv: kv[0])
                if group_by == "day"
                else (lambda kv: (-sum(kv[1].values()), kv[0])),
            )
        ],
        "by_type": [{"type": k, "count": n} for k, n in sorted(t.types.items(), key=_by_count)],
        "by_project": [
            {"project": p, "count": n} for p, n in sorted(t.projects.items(), key=_by_count)
        ],
        "by_day": [
            {"day": d, "count": t.days[d], "failure": t.day_failures[d]} for d in window.days()
        ],
        "failures_by_type": [
            {"type": k, "count": n}
            for k, n in sorted(
                ((k, c["failure"]) for k, c in t.by_type_outcome.items() if c["failure"]),
                key=_by_count,
            )
        ],
        "by_hour": t.hours,
        "average_duration": [
            {
                "type": k,
                "count": n,
                "avg_seconds": round(total_s / n, 3),
                "max_seconds": round(top, 3),
            }
            for k, (n, total_s, top) in sorted(t.durations.items())
        ],
        "overhead": {
            "field": "meta.overhead_ms (else meta.hook_ms)",
            "count": sum(every.values()),
            "avg_ms": round(exact_total(every) / sum(every.values()), 3),
            "by_type": [
                {
                    "type": k,
                    "count": n,
                    "avg_ms": round(total_ms / n, 3),
                    "p95_ms": round(p95, 3),
                    "max_ms": round(top, 3),
                }
                for k, (n, total_ms, top, p95) in sorted(t.overhead.items())
            ],
            "by_record": overhead_table(costs),
        }
        if costs
        else None,
    }


def _outcomes(counts: Counter[str]) -> OutcomeCounts:
    """The count of each outcome (OUTCOME_KEYS), zero included."""
    return {
        "success": counts["success"],
        "failure": counts["failure"],
        "blocked": counts["blocked"],
        "in_progress": counts["in_progress"],
    }


def _by_count(kv: tuple[str, int]) -> tuple[int, str]:
    return -kv[1], kv[0]


def _service(record: dict[str, Any]) -> str | None:
    context = record.get("context") or {}
    for key in ("service", "target", "app", "name"):
        value = context.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def build_report(
    log: ActionLog,
    window: Window,
    *,
    project: str | None = None,
    agent: str | None = None,
    group_by: str = "day",
    include_archive: bool = False,
    include_internal: bool = False,
) -> ActivityReport:
    """The JSON contract of `lore report --json`: aggregated in SQL on one synced catalog
    connection when the catalog is usable, else from a scan of the shards (same report).
    lorebook's own bookkeeping (`model.INTERNAL_TYPES`) is left out unless `include_internal`."""
    check_group(group_by)
    options: dict[str, Any] = {
        "project": project, "agent": agent, "include_archive": include_archive,
        "include_internal": include_internal,
    }  # fmt: skip
    head = {"window": window.to_dict(), "filters": log.sanitizer.sanitize(options)[0]}
    first = None if include_archive else window.since_ts[:10]  # records are in their day's shard
    conn = log.catalog.open(since=None if first is None else lambda _conn: first)
    if conn is not None:
        try:
            body = _from_catalog(log, conn, window, group_by, **options)
        finally:
            conn.close()
    else:
        body = scan_report(log, window, group_by, **options)
    return {"window": head["window"], "filters": head["filters"], **body}


def _from_catalog(
    log: ActionLog, conn: Any, window: Window, group_by: str, **options: Any
) -> ReportBody:
    from .catalog_read import CleanReads
    from .report_rollup import rolled_tally
    from .report_sql import Scope, newest

    scope = Scope(window.since_ts, window.until_ts, **options)
    counts = rolled_tally(conn, scope, group_by)  # with the overheads and bookkeeping left out
    costs = counts.costs
    counts.overhead = by_action_type(costs)
    deploy = ("type", "deploy")
    reads = CleanReads(conn, log.layout.actionlog.parent, log.sanitizer)
    try:
        deploys = newest(conn, reads, scope, deploy, DEPLOYMENTS_SHOWN)
        failures = newest(conn, reads, scope, ("outcome", "failure"), FAILURES_SHOWN)
    finally:
        reads.close()
    by_outcome = counts.by_type_outcome.get("deploy", Counter())
    left_out = None if options["include_internal"] else counts.left_out
    return {
        **shape(counts, window, group_by, costs),
        "internal_left_out": _left_out(left_out),
        "deployments": {
            "total": sum(by_outcome.values()),
            "by_outcome": _outcomes(by_outcome),
            "recent": [_brief(log, r) | {"service": _service(r)} for r in deploys],
        },
        "recent_failures": [_brief(log, r) for r in failures],
    }


def scan_report(
    log: ActionLog,
    window: Window,
    group_by: str,
    *,
    project: str | None,
    agent: str | None,
    include_archive: bool,
    include_internal: bool = False,
) -> ReportBody:
    """The report's sections from the log's records (the reference for the SQL path)."""
    from .query import ActionFilter

    left_out: Counter[str] | None = None if include_internal else Counter()
    rows = slim_rows(
        log, window, project=project, agent=agent, include_archive=include_archive,
        include_internal=include_internal, left_out=left_out,
    )  # fmt: skip
    costs = scan_overhead(
        log, window.since_ts, window.until_ts, project=project, agent=agent,
        include_archive=include_archive, include_internal=include_internal,
    )  # fmt: skip
    sections = aggregate(rows, window, group_by, costs)
    base = ActionFilter(project=project, agent=agent, since=window.since_ts, until=window.until_ts)
    from .track_pairs import once

    deploys: list[dict[str, Any]] = []
    by_outcome: Counter[str] = Counter()
    found = log.iter_actions(ActionFilter(**{**base.values(), "type": "deploy"}),
                             include_archive=include_archive)  # fmt: skip
    for record in once(found):
        by_outcome[record["outcome"]] += 1
        if len(deploys) < DEPLOYMENTS_SHOWN:
            deploys.append(_brief(log, record) | {"service": _service(record)})
    failures = []
    found = log.iter_actions(
        ActionFilter(**{**base.values(), "outcome": "failure"}), include_archive=include_archive
    )
    for record in found:
        if not include_internal and record["type"] in INTERNAL_TYPES:
            continue
        failures.append(_brief(log, record))
        if len(failures) >= FAILURES_SHOWN:
            break
    getattr(found, "close", lambda: None)()
    return {
        **sections,
        "internal_left_out": _left_out(left_out),
        "deployments": {
            "total": sum(by_outcome.values()),
            "by_outcome": _outcomes(by_outcome),
            "recent": deploys,
        },
        "recent_failures": failures,
    }


def _left_out(counts: Counter[str] | None) -> InternalLeftOut | None:
    """What the report left out of lorebook's own bookkeeping (None: nothing was, it was asked
    for with `include_internal`), so its totals reconcile with `lore actions`."""
    if counts is None:
        return None
    return {
        "count": sum(counts.values()),
        "by_type": [{"type": k, "count": n} for k, n in sorted(counts.items(), key=_by_count)],
        "why": "lorebook's own bookkeeping (" + ", ".join(INTERNAL_TYPES) + ")",
    }


def _brief(log: ActionLog, record: dict[str, Any]) -> dict[str, Any]:
    """What a report lists about one action; error text re-sanitized."""
    error = record.get("error")
    if isinstance(error, str):
        error = log.sanitizer.redact_text(error)[0]
    return {
        "id": record["id"],
        "ts": record["ts"],
        "type": record["type"],
        "outcome": record["outcome"],
        "project": record.get("project"),
        "agent": record.get("agent"),
        "session": record["session"],
        "epic": record.get("epic"),
        "error": error,
        "summary": log.sanitizer.redact_text(describe(record))[0],
    }
