"""A catalog report adds the day roll-ups of its whole days to the records at its two edges,
and is the report a scan of the shards gives: for windows cut anywhere, every filter, with the
archive and lorebook's bookkeeping; and after each change a sync can bring to a day already
rolled up (an outcome closing an older start, a record written into an old day, a start
written after its outcome, a shard removed)."""

from __future__ import annotations

import json
import os
import random
import sqlite3
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lorebook import Lorebook
from lorebook.ids import new_ulid
from lorebook.log.report import build_report, resolve_window, scan_report
from lorebook.log.report_rollup import day_bounds, whole_days
from lorebook.log.report_sql import micros
from lorebook.log.session_handle import Session
from test_report_sql import FILTERS, NOW, generate

OPTIONS = [(False, False), (True, False), (False, True)]  # (include_archive, include_internal)


def _stamp(at: Any) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}Z"


def _windows(rng: random.Random, count: int) -> list[tuple[str, str]]:
    """Windows cut at midnight, mid-day and to the millisecond, from a few hours to 21 days."""
    out = []
    for _ in range(count):
        start = NOW - timedelta(days=21) + timedelta(hours=rng.uniform(0, 20 * 24))
        if rng.random() < 0.4:
            start = start.replace(hour=0, minute=0, second=0, microsecond=0)
        end = start + timedelta(hours=rng.choice([3, 30, 49, 24 * 5, 24 * 12, 24 * 21]))
        if rng.random() < 0.4:
            end = end.replace(hour=0, minute=0, second=0, microsecond=0)
        end = max(min(end, NOW), start + timedelta(hours=1))
        out.append((_stamp(start), _stamp(end)))
    return out


def _rolled(root: Path) -> set[str]:
    conn = sqlite3.connect(root / ".lore" / "cache" / "catalog.sqlite")
    try:
        return {r[0] for r in conn.execute("SELECT day FROM rolled")}
    finally:
        conn.close()


def _same_as_scan(book: Lorebook, windows: list[tuple[str, str]], group_by: str = "day") -> int:
    """Assert the catalog's report equals the scan's for each window, filter and option; the
    number of whole days the windows held."""
    whole = 0
    for since, until in windows:
        window = resolve_window(days=None, since=since, until=until, now=NOW)
        whole += len(whole_days(window.since_ts, window.until_ts))
        for filters in FILTERS:
            for archive, internal in OPTIONS:
                options = {"project": None, "agent": None, **filters,
                           "include_archive": archive, "include_internal": internal}  # fmt: skip
                got = build_report(book.action_log, window, group_by=group_by, **options)
                expected = scan_report(book.action_log, window, group_by, **options)
                got.pop("window")
                got.pop("filters")
                assert got == expected, (since, until, options)
    return whole


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("rollup") / "store"
    generate(root, 3)
    return root


@given(st.floats(min_value=-1e12, max_value=1e12, allow_nan=False))
@settings(max_examples=400, deadline=None)
def test_micros_is_what_sqlite_rounds(value: float) -> None:
    conn = sqlite3.connect(":memory:")
    found = conn.execute("SELECT CAST(round(? * 1000000.0) AS INTEGER)", (value,)).fetchone()
    assert micros(value) == found[0]


def test_micros_rounds_half_away_from_zero_like_sqlite() -> None:
    conn = sqlite3.connect(":memory:")
    for value in (0.0000005, -0.0000005, 0.0000015, 2.5e-6, 1840.0, 0.1, -3.0000005, 123.456789):
        found = conn.execute("SELECT CAST(round(? * 1000000.0) AS INTEGER)", (value,)).fetchone()
        assert micros(value) == found[0], value


def test_whole_days_are_those_inside_the_window() -> None:
    assert whole_days("2026-11-01T00:00:00.000Z", "2026-11-03T00:00:00.000Z") == [
        "2026-11-01", "2026-11-02"]  # fmt: skip
    assert whole_days("2026-11-01T00:00:00.001Z", "2026-11-03T23:59:59.999Z") == ["2026-11-02"]
    assert whole_days("2026-11-01T10:00:00.000Z", "2026-11-02T09:00:00.000Z") == []
    assert day_bounds("2026-12-31") == ("2026-12-31T00:00:00.000Z", "2027-01-01T00:00:00.000Z")


@pytest.mark.parametrize("group_by", ["day", "type", "outcome"])
def test_reports_cut_anywhere_equal_the_scan(store: Path, group_by: str) -> None:
    book = Lorebook.open(store, env={})
    book.rebuild_catalog()
    conn = sqlite3.connect(store / ".lore" / "cache" / "catalog.sqlite")
    try:
        days = {r[0] for r in conn.execute("SELECT DISTINCT substr(ts, 1, 10) FROM records")}
    finally:
        conn.close()
    today = NOW.strftime("%Y-%m-%d")
    assert _rolled(store) == {day for day in days if day < today}  # the build rolled them
    assert len(days) > 15
    whole = _same_as_scan(book, _windows(random.Random(group_by), 6), group_by)
    assert whole > 0


def test_a_change_to_a_rolled_day_is_counted(store: Path) -> None:
    book = Lorebook.open(store, env={})
    book.rebuild_catalog()
    rng = random.Random(11)
    windows = [(_stamp(NOW - timedelta(days=21)), _stamp(NOW)), *_windows(rng, 3)]
    _same_as_scan(book, windows)
    conn = sqlite3.connect(store / ".lore" / "cache" / "catalog.sqlite")
    try:
        open_start = conn.execute(
            "SELECT id, ts, session, type FROM records WHERE outcome = 'in_progress'"
            " AND ts < ? AND NOT EXISTS (SELECT 1 FROM records o WHERE o.parent = records.id)"
            " ORDER BY ts LIMIT 1",
            (_stamp(NOW - timedelta(days=8)),),
        ).fetchone()
    finally:
        conn.close()
    assert open_start is not None
    start_id, start_ts, session_id, kind = open_start
    session = Session(book.action_log, session_id, None, None)

    # an outcome, written today, closes a start of a rolled day: that day is rolled again
    assert start_ts[:10] in _rolled(store)
    session.log(kind, outcome="success", parent=start_id, now=NOW - timedelta(minutes=5))
    _same_as_scan(book, windows)
    assert start_ts[:10] in _rolled(store)  # rolled up again by the report that needed it

    # a record written into an old day (its shard appended), and one into a new shard there
    old = NOW - timedelta(days=9, hours=3)
    session.log("deploy", outcome="failure", duration_s=12.5, now=old,
                meta={"overhead_ms": 7})  # fmt: skip
    late = book.start_session(session_id="late-one", agent="PS", project="odin",
                              now=old - timedelta(hours=1))  # fmt: skip
    late.log("commit", outcome="success", now=old, meta={"hook_ms": 3})
    _same_as_scan(book, windows)

    # an outcome without a duration on a rolled day, then its start written into an older day
    # (its duration comes from the start): the outcome's day is rolled again
    start_at, end_at = NOW - timedelta(days=12, hours=2), NOW - timedelta(days=10, hours=1)
    start_id = new_ulid(int(start_at.timestamp() * 1000))
    outcome = session.log("validate", outcome="failure", parent=start_id, now=end_at)
    _same_as_scan(book, windows)
    template = next(
        json.loads(line)
        for shard in sorted((store / "actionlog").rglob("*.jsonl"))
        for line in shard.read_text().splitlines()
        if json.loads(line)["kind"] == "action"
    )
    template.update(id=start_id, ts=_stamp(start_at), type="validate", outcome="in_progress",
                    session=session_id, duration_s=None, error=None, parent=None,
                    project=outcome.get("project"), agent=outcome.get("agent"))  # fmt: skip
    day = store / "actionlog" / f"{start_at:%Y/%m/%d}"
    with (day / f"{session_id}.jsonl").open("a") as handle:
        handle.write(json.dumps(template, separators=(",", ":"), sort_keys=True) + "\n")
    os.utime(day)  # as the writer does for a day other than today's
    assert end_at.strftime("%Y-%m-%d") in _rolled(store)
    book.action_log.catalog.open().close()  # a sync: the outcome's day is forgotten
    assert end_at.strftime("%Y-%m-%d") not in _rolled(store)
    assert start_at.strftime("%Y-%m-%d") not in _rolled(store)
    _same_as_scan(book, windows)

    # a shard of an old day removed
    gone = sorted((store / "actionlog").rglob(f"{NOW - timedelta(days=14):%Y/%m/%d}/*.jsonl"))
    assert gone
    gone[0].unlink()
    _same_as_scan(book, windows)


def test_a_catalog_that_cannot_be_written_counts_the_rows(store: Path) -> None:
    """A report whose days are not rolled up, on a catalog it cannot write, gives the same
    figures from the window's rows, and writes nothing."""
    from lorebook.log.report_rollup import rolled_tally
    from lorebook.log.report_sql import Scope, tally

    book = Lorebook.open(store, env={})
    book.rebuild_catalog()
    path = store / ".lore" / "cache" / "catalog.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("DELETE FROM rolled")
    conn.commit()
    conn.close()
    since, until = _stamp(NOW - timedelta(days=15)), _stamp(NOW - timedelta(hours=5))
    scope = Scope(since, until, project=None, agent=None, include_archive=False)
    readonly = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)
    try:
        got = rolled_tally(readonly, scope, "day")
        expected = tally(readonly, scope, "day")
    finally:
        readonly.close()
    assert vars(got) == vars(expected)
    assert got.days and got.durations
    assert _rolled(store) == set()


def test_a_century_window_rolls_up_only_the_days_that_can_hold_a_record(store: Path) -> None:
    """A window of 36,000 days reads the rolled days as a range (no list of days that could
    pass SQLite's limit on variables) and rolls up only those from the oldest record's day to
    the newest's; the report equals the scan."""
    book = Lorebook.open(store, env={})
    book.rebuild_catalog()
    conn = sqlite3.connect(store / ".lore" / "cache" / "catalog.sqlite")
    conn.execute("DELETE FROM rolled")
    conn.commit()
    first, last = conn.execute("SELECT min(ts), max(ts) FROM records").fetchone()
    conn.close()
    since = _stamp(NOW - timedelta(days=36000))
    assert _same_as_scan(book, [(since, _stamp(NOW))]) >= 35000
    rolled = _rolled(store)
    assert rolled and all(first[:10] <= day <= last[:10] for day in rolled)
