"""Reports aggregated in SQL give the report the Python reference gives; one catalog sync per
command; `--json` is compact on a pipe and indented on a terminal."""

from __future__ import annotations

import json
import random
import shutil
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from conftest import LORE, clean_env, lore, on_a_terminal
from lorebook import Lorebook
from lorebook.cli.output import to_json
from lorebook.log.catalog import Catalog
from lorebook.log.report import build_report, resolve_window
from lorebook.model import INTERNAL_TYPES

NOW = datetime.now(UTC).replace(microsecond=0)
SECRET = "ghp_" + "Q9w8E7r6" * 5
TYPES = ("commit", "deploy", "validate", "tool_call", "search", "push", "spawn")
OUTCOMES = ("success", "success", "success", "failure", "blocked", "in_progress")


def generate(root: Path, seed: int) -> list[tuple[str, str | None, str]]:
    """A seeded store over 20 days: agents and projects (some absent), every outcome, random
    durations and overheads (some absent, some as `hook_ms`), deploy services, errors with a
    secret, tracked actions (an `in_progress` start, then its outcome with `parent`, minutes to
    days later, some never, some without a duration) and a line an agent appended itself.

    Returns (ts, outcome ts, type) of every action: the outcome's time for a tracked start that
    got one (the action counts once: as its start until then, as its outcome after), else None."""
    rng = random.Random(seed)
    tracking = random.Random(-seed)  # its own draws: the rest of the store is as it was
    truth: list[tuple[str, str | None, str]] = []
    root.mkdir(parents=True)
    book = Lorebook.init(root, env={})
    for n in range(36):
        start = NOW - timedelta(days=20) + timedelta(hours=rng.uniform(0, 20 * 24 - 2))
        session = book.start_session(
            session_id=f"s-{seed}-{n}", agent=rng.choice(["PS", "MS", "claude-code", None]),
            project=rng.choice(["consilio", "odin", "health-agent", None]), now=start,
        )  # fmt: skip
        at = start
        for _ in range(rng.randint(3, 18)):
            at += timedelta(seconds=rng.randint(1, 900), milliseconds=rng.randint(0, 999))
            kind = rng.choice(TYPES)
            outcome = rng.choice(OUTCOMES)
            fields: dict[str, Any] = {"outcome": outcome, "now": min(at, NOW)}
            if outcome != "in_progress" and rng.random() < 0.7:
                fields["duration_s"] = round(rng.uniform(0.01, 300), rng.choice([0, 1, 3, 6]))
            cost = rng.random()
            if cost < 0.3:
                fields["meta"] = {"overhead_ms": round(rng.uniform(0.1, 50), 3)}
            elif cost < 0.4:
                fields["meta"] = {"hook_ms": rng.randint(1, 90)}
            if kind == "deploy":
                fields["context"] = {"service": rng.choice(["api", "web", "worker"])}
            if outcome == "failure":
                fields["error"] = rng.choice(["health check failed", f"token {SECRET} refused"])
            if tracking.random() < 0.3:  # a tracked action, closed later (or never)
                fields["outcome"] = "in_progress"
                fields.pop("duration_s", None)
                fields.pop("error", None)
                opened = session.log(kind, **fields)
                days = 86400 * tracking.uniform(1, 6)
                late = timedelta(seconds=tracking.choice([5, 600, 7200, days]))
                if at + late >= NOW or tracking.random() < 0.15:
                    truth.append((opened["ts"], None, kind))
                    continue
                done = tracking.choice(["success", "success", "failure", "blocked"])
                close: dict[str, Any] = {"outcome": done, "now": at + late, "parent": opened["id"]}
                if tracking.random() < 0.5:  # as the subagent hooks write it: no duration
                    close["duration_s"] = round(late.total_seconds(), 3)
                if done == "failure":
                    close["error"] = "exit 1"
                closed = session.log(kind, context=fields.get("context"), **close)
                truth.append((opened["ts"], closed["ts"], kind))
                truth.append((closed["ts"], None, kind))
                continue
            truth.append((session.log(kind, **fields)["ts"], None, kind))
    shard = sorted((root / "actionlog").rglob("*.jsonl"))[-1]
    raw = json.loads(shard.read_text().splitlines()[-1])
    raw.update(id=raw["id"][:-4] + "ZZZZ", kind="action", type="deploy", outcome="failure",
               ts=(NOW - timedelta(hours=3)).strftime("%Y-%m-%dT%H:%M:%S.000Z"),
               error=f"rejected {SECRET}", context={"service": "hand"})  # fmt: skip
    with shard.open("a") as handle:
        handle.write(json.dumps(raw, separators=(",", ":"), sort_keys=True) + "\n")
    truth.append((raw["ts"], None, "deploy"))
    return truth


@pytest.fixture(scope="module", params=[1, 2])
def stores(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
           ) -> tuple[Path, Path]:  # fmt: skip
    """The same generated store twice: with its catalog, and with the catalog disabled."""
    root = tmp_path_factory.mktemp(f"sql{request.param}") / "store"
    truth = generate(root, request.param)
    (root.parent / "truth.json").write_text(json.dumps(truth))
    scan = root.parent / "scan"
    shutil.copytree(root, scan)
    (scan / ".lore" / "config.yaml").write_text("catalog:\n  enabled: false\n")
    return root, scan


WINDOWS = [
    {"days": 1}, {"days": 7}, {"days": 30},
    {"since": (NOW - timedelta(days=12)).strftime("%Y-%m-%d"),
     "until": (NOW - timedelta(days=5)).strftime("%Y-%m-%dT%H:%M:%S.000Z")},
]  # fmt: skip
FILTERS = [{}, {"project": "odin"}, {"agent": "claude-code"},
           {"project": "consilio", "agent": "PS"}, {"agent": "nobody"}]  # fmt: skip


@pytest.mark.parametrize("group_by", ["day", "type", "outcome"])
def test_sql_report_equals_the_python_reference(stores: tuple[Path, Path], group_by: str) -> None:
    catalog_root, scan_root = stores
    sql_book = Lorebook.open(catalog_root, env={})
    scan_book = Lorebook.open(scan_root, env={})
    for when in WINDOWS:
        window = resolve_window(days=when.get("days"), since=when.get("since"),
                                until=when.get("until"), now=NOW)  # fmt: skip
        for filters in FILTERS:
            for archive, internal in ((False, False), (True, False), (False, True)):
                options = {
                    **filters,
                    "group_by": group_by,
                    "include_archive": archive,
                    "include_internal": internal,
                }
                expected = build_report(scan_book.action_log, window, **options)
                got = build_report(sql_book.action_log, window, **options)
                assert got == expected, (when, options)
    assert sql_book.action_log.scan_note() is None
    assert scan_book.action_log.scan_note()
    assert SECRET not in json.dumps(got) and SECRET not in json.dumps(expected)


def test_both_paths_count_a_tracked_action_once_in_every_window(
    stores: tuple[Path, Path],
) -> None:
    """A start counts until its outcome is written (a start in the window whose outcome comes
    after it is in progress there), the outcome from then on (a start before the window whose
    outcome falls inside counts once, as the outcome)."""
    truth = json.loads((stores[0].parent / "truth.json").read_text())
    for root in stores:
        book = Lorebook.open(root, env={})
        for when in WINDOWS:
            window = resolve_window(days=when.get("days"), since=when.get("since"),
                                    until=when.get("until"), now=NOW)  # fmt: skip
            low, high = window.since_ts, window.until_ts
            counted = [ts for ts, closed, kind in truth if kind not in INTERNAL_TYPES
                       and low <= ts < high and (closed is None or closed >= high)]  # fmt: skip
            report = build_report(book.action_log, window)
            assert report["summary"]["total_actions"] == len(counted), (root.name, when)


def test_the_cli_report_is_the_same_from_both_paths(stores: tuple[Path, Path]) -> None:
    catalog_root, scan_root = stores
    since = (NOW - timedelta(days=30)).strftime("%Y-%m-%d")
    until = NOW.strftime("%Y-%m-%dT%H:%M:%S.000Z")
    for args in (["--group-by", "type"], ["--project", "odin", "--group-by", "outcome"]):
        args = ["--since", since, "--until", until, *args]
        sql = lore("report", "--json", *args, env=clean_env(catalog_root))
        scan = lore("report", "--json", *args, env=clean_env(scan_root))
        assert sql.code == scan.code == 0, (sql.err, scan.err)
        assert json.loads(sql.out) == json.loads(scan.out)
        assert json.loads(sql.out)["summary"]["total_actions"] > 0


@pytest.fixture
def syncs(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Records every catalog open+sync (the real ones run)."""
    calls: list[str] = []
    real_sync = Catalog.sync

    def counted(self: Catalog, *args: Any, **kwargs: Any) -> Any:
        calls.append("sync")
        return real_sync(self, *args, **kwargs)

    monkeypatch.setattr(Catalog, "sync", counted)
    yield calls


def test_one_catalog_sync_per_report_and_per_query(
    stores: tuple[Path, Path], syncs: list[str]
) -> None:
    book = Lorebook.open(stores[0], env={})
    assert book.report(days=30)["summary"]["total_actions"] > 0
    assert syncs == ["sync"]
    syncs.clear()
    assert book.actions(type="deploy", outcome="failure", since="30d", limit=None)
    assert syncs == ["sync"]


def test_a_report_syncs_a_catalog_older_than_the_shards(tmp_path: Path) -> None:
    root = tmp_path / "store"
    generate(root, 3)
    book = Lorebook.open(root, env={})
    before = book.report(days=7)
    session = book.start_session(session_id="late", agent="PS", project="odin")
    session.log("deploy", outcome="failure", error="late", context={"service": "late"})
    time.sleep(0.002)  # the window ends now, exclusive, to the millisecond: let "now" move on
    after = Lorebook.open(root, env={}).report(days=7)
    assert after["summary"]["total_actions"] == before["summary"]["total_actions"] + 1
    assert after["recent_failures"][0]["error"] == "late"
    assert after["deployments"]["recent"][0]["service"] == "late"


def test_to_json_is_indented_for_a_terminal_and_compact_otherwise() -> None:
    value = {"a": [1, {"b": "é"}], "c": None}
    assert to_json(value, tty=True) == json.dumps(value, indent=2, ensure_ascii=False)
    assert to_json(value, tty=False) == '{"a":[1,{"b":"é"}],"c":null}'
    assert json.loads(to_json(value, tty=False)) == value


def test_json_on_a_pipe_is_one_line(stores: tuple[Path, Path]) -> None:
    for args in (["report", "--days", "7"], ["actions", "--limit", "3"], ["sessions"]):
        result = lore(*args, "--json", env=clean_env(stores[0]))
        assert result.code == 0, result.err
        assert result.out.count("\n") == 1 and ", " not in result.out[:200], args
        json.loads(result.out)


def test_json_on_a_terminal_is_indented(stores: tuple[Path, Path]) -> None:
    command = [*LORE, "actions", "--limit", "2", "--json"]
    code, text, err = on_a_terminal(command, clean_env(stores[0]))
    assert code == 0, err
    assert text.startswith("[\n  {\n") and len(json.loads(text)) == 2


def test_a_read_that_finds_nothing_new_writes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "store"
    generate(root, 4)
    catalog = root / ".lore" / "cache" / "catalog.sqlite"

    def stamp() -> str:
        import sqlite3

        conn = sqlite3.connect(catalog)
        try:
            return str(conn.execute("SELECT value FROM meta WHERE key='synced_at'").fetchone()[0])
        finally:
            conn.close()

    Lorebook.open(root, env={}).report(days=7)
    first, size = stamp(), catalog.stat().st_size
    assert Lorebook.open(root, env={}).report(days=7)["summary"]["total_actions"] > 0
    assert stamp() == first and catalog.stat().st_size == size
    Lorebook.open(root, env={}).log(
        "deploy", session="s-4-0", outcome="failure", error="new", project="fresh"
    )
    # (the generated store may hold records dated after this moment: filter to the new one)
    fresh = Lorebook.open(root, env={}).report(days=7, project="fresh")
    assert [f["error"] for f in fresh["recent_failures"]] == ["new"]


def test_a_window_ending_now_takes_in_a_record_of_nows_own_millisecond(store: Path) -> None:
    """Timestamps keep milliseconds and a window's end is exclusive: a report made in the
    millisecond a record was logged in (a fast machine, `lore log` then `lore report`) shows it."""
    from lorebook.log.report import resolve_window
    from lorebook.timeutil import format_ts

    now = datetime(2026, 11, 27, 22, 34, 10, 118_900, tzinfo=UTC)
    window = resolve_window(days=7, since=None, until=None, now=now)
    assert window.since_ts <= format_ts(now) < window.until_ts
    book = Lorebook.open(store, env={})
    book.log("deploy", outcome="failure", error="same ms", project="p", now=now)
    from lorebook.log.report import build_report

    report = build_report(book.action_log, window, project="p")
    assert [f["error"] for f in report["recent_failures"]] == ["same ms"]
