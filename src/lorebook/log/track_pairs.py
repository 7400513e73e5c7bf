"""A tracked action counts once: its `in_progress` start is superseded by its outcome.

`Session.track` and the subagent hooks write an `in_progress` start, then the outcome (success,
failure, blocked) as a later action of the same type whose `parent` is the start's id. Reports,
KPIs and the export count the pair once: in a window ending at `until`, a start is left out when
such an outcome was written at or after it and before `until`; the outcome counts, in the window
its own time falls in. A start whose outcome comes later still counts as in progress. An outcome
without `duration_s` takes the time from its start.

The rule is written twice, here for records and rows (the reference) and as SQL for the catalog
(`SUPERSEDED`, `DURATION`), and the two are tested against each other.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs milliseconds on cold paths; mypy still sees it
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

    from .actionlog import ActionLog

    FindStart = Callable[[str, str, str], str | None]

OPEN = "in_progress"

# `{r}` is the qualified records row being judged; the only argument is the window's end. The
# outcome is looked up by `parent` (`rec_parent`: a start has one or two children): the unary `+`
# keeps SQLite from walking every later action of the type through `rec_type` instead
SUPERSEDED = (
    "{r}outcome = 'in_progress' AND EXISTS (SELECT 1 FROM records o WHERE o.parent = {r}id"
    " AND o.parent IS NOT NULL AND +o.kind = 'action' AND +o.type = {r}type"
    " AND +o.outcome != 'in_progress' AND +o.ts >= {r}ts AND +o.ts < ?)"
)
# the duration of a row: its own, else (an outcome with a parent) the seconds since its start,
# computed as `seconds_between` does so both engines add the same floats
DURATION = (
    "CASE WHEN {r}duration IS NULL AND {r}parent IS NOT NULL AND {r}outcome != 'in_progress'"
    " THEN (SELECT ((strftime('%s', {r}ts) - strftime('%s', s.ts)) * 1000"
    " + substr({r}ts, 21, 3) - substr(s.ts, 21, 3)) / 1000.0 FROM records s"
    " WHERE s.id = {r}parent AND s.kind = 'action' AND s.type = {r}type"
    " AND s.outcome = 'in_progress' AND s.ts <= {r}ts) ELSE {r}duration END"
)


def seconds_between(start: str, end: str) -> float:
    """Seconds from canonical timestamp `start` to `end`: whole milliseconds divided once, as
    the SQL computes it (and `timedelta.total_seconds` would)."""
    import calendar  # the scan paths only: a catalog report computes it in SQL
    import time

    whole = calendar.timegm(time.strptime(end[:19], "%Y-%m-%dT%H:%M:%S")) - calendar.timegm(
        time.strptime(start[:19], "%Y-%m-%dT%H:%M:%S")
    )
    return (whole * 1000 + int(end[20:23]) - int(start[20:23])) / 1000.0


def _parent(record: dict[str, Any]) -> str | None:
    parent = record.get("parent")
    return parent if isinstance(parent, str) and parent else None


def closes(start: dict[str, Any], outcome: dict[str, Any]) -> bool:
    """Whether `outcome` is the outcome of the tracked `start` (the rule above, for two
    records in hand)."""
    return (
        start.get("outcome") == OPEN
        and outcome.get("outcome") != OPEN
        and _parent(outcome) == start.get("id")
        and start.get("type") == outcome.get("type")
        and str(start.get("ts")) <= str(outcome.get("ts"))
    )


def outcomes(actions: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """start id -> the first outcome that closes it, among one session's `actions` (any order
    of writing, oldest first)."""
    kept = list(actions)
    starts = {r["id"]: r for r in kept if r.get("outcome") == OPEN}
    found: dict[str, dict[str, Any]] = {}
    for record in kept:
        parent = _parent(record)
        if parent is None or parent in found:
            continue
        start = starts.get(parent)
        if start is not None and closes(start, record):
            found[parent] = record
    return found


class Links:
    """The tracked actions of one window's records, seen in any order: which starts their
    outcome superseded (`closed`, after `finish`) and each outcome's duration.

    Keeps the id, time and type of each start and outcome with a parent, not the records."""

    def __init__(self, find: FindStart | None = None) -> None:
        self.starts: dict[str, tuple[str, str]] = {}  # id -> (ts, type)
        self.outcomes: list[tuple[str, str, str]] = []  # (parent, type, ts)
        self.closed: set[str] = set()
        self.find = find

    def see(self, record: dict[str, Any]) -> None:
        if record.get("outcome") == OPEN:
            self.starts[record["id"]] = (record["ts"], record["type"])
        else:
            parent = _parent(record)
            if parent is not None:
                self.outcomes.append((parent, record["type"], record["ts"]))

    def finish(self) -> set[str]:
        """The ids of the starts an outcome among the records superseded."""
        for parent, action_type, ts in self.outcomes:
            start = self.starts.get(parent)
            if start is not None and start[1] == action_type and start[0] <= ts:
                self.closed.add(parent)
        return self.closed

    def duration(self, record: dict[str, Any]) -> float | None:
        """`duration_s`, else (an outcome) the seconds since its start: one seen here, or an
        earlier one `find` reads."""
        duration = record.get("duration_s")
        if isinstance(duration, int | float) and not isinstance(duration, bool):
            return float(duration)
        parent = _parent(record)
        if parent is None or record.get("outcome") == OPEN:
            return None
        start = self.starts.get(parent)
        if start is not None:
            begun = start[0] if start[1] == record["type"] and start[0] <= record["ts"] else None
        elif self.find is not None:
            begun = self.find(parent, record["type"], record["ts"])
        else:
            begun = None
        return None if begun is None else seconds_between(begun, record["ts"])


def once(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """`records` (one window) without the starts their outcome among them superseded."""
    kept = list(records)
    links = Links()
    for record in kept:
        links.see(record)
    closed = links.finish()
    return [r for r in kept if r["id"] not in closed] if closed else kept


def start_finder(log: ActionLog) -> FindStart:
    """`find(parent, type, before)`: the time of start `parent` (an `in_progress` action of
    `type` at or before `before`) read from the shards, for an outcome whose start lies before
    the window being scanned. Its ULID says on which day to look."""
    from datetime import UTC, datetime, timedelta

    from ..ids import ulid_ms
    from ..timeutil import format_ts, parse_ts
    from .query import ActionFilter

    def find(parent: str, action_type: str, before: str) -> str | None:
        ms = ulid_ms(parent)
        if ms is None:
            return None
        made = datetime.fromtimestamp(ms / 1000, UTC)
        query = ActionFilter(
            type=action_type,
            outcome=OPEN,
            since=format_ts(made - timedelta(days=1)),
            until=format_ts(parse_ts(before) + timedelta(milliseconds=1)),
        )
        found = log.iter_actions(query, newest_first=False, include_archive=True)
        try:
            for record in found:
                if record["id"] == parent and record["ts"] <= before:
                    return str(record["ts"])
        finally:
            getattr(found, "close", lambda: None)()
        return None

    return find


_PAIRS = (
    "SELECT s.id, s.ts, s.type FROM records o JOIN records s ON s.id = o.parent"
    " WHERE o.kind = 'action' AND o.parent IS NOT NULL AND o.outcome != 'in_progress'"
    " AND s.kind = 'action' AND s.outcome = 'in_progress' AND s.type = o.type AND s.ts <= o.ts"
)


def catalog_links(
    log: ActionLog, since: str | None, until: str | None, include_archive: bool
) -> Links | None:
    """`Links` of the outcomes in [since, until) from the catalog (their starts, wherever they
    lie), without reading a record; None when the catalog cannot be used."""
    first = since[:10] if since and not include_archive else None
    conn = log.catalog.open(since=None if first is None else (lambda _conn: first))
    if conn is None:
        return None
    sql, args = _PAIRS, []
    for clause, value in ((" AND o.ts >= ?", since), (" AND o.ts < ?", until)):
        if value is not None:
            sql += clause
            args.append(value)
    links = Links(start_finder(log))  # a start the catalog lacks (a day not synced): read it
    try:
        for start, ts, action_type in conn.execute(sql, args):
            links.starts[start] = (ts, action_type)
            links.closed.add(start)
    finally:
        conn.close()
    return links
