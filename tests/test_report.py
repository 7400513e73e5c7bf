"""`lore report`, `lore report daily|weekly`: figures, files, idempotence, bad input."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from conftest import assert_one_error_line, clean_env, cli_run, lore
from lorebook import Lorebook
from lorebook.log.report import aggregate, build_report, resolve_window, week_window
from wall_clock import around, day

NOW = datetime.now(UTC).replace(microsecond=0)
YESTERDAY = (NOW - timedelta(days=1)).replace(hour=0, minute=0, second=0)
DAY = YESTERDAY.strftime("%Y-%m-%d")
SECRET = "ghp_" + "A1b2C3d4" * 5


@pytest.fixture
def active(store: Path) -> Path:
    """Yesterday: 2 projects, deploys (one failed), failures with errors, hook overhead."""
    book = Lorebook.open(store, env={})
    ps = book.start_session(
        session_id="ps-1", agent="PS", project="consilio", now=YESTERDAY + timedelta(hours=8)
    )
    at = YESTERDAY + timedelta(hours=9)
    ps.log("plan", epic="epic-7", now=at)
    for i in range(4):
        ps.log("commit", epic="epic-7", duration_s=2.0 + i, now=at + timedelta(minutes=10 + i))
    ps.log(
        "deploy", context={"service": "consilio-api"}, duration_s=40.0, now=at + timedelta(hours=1)
    )
    ps.log(
        "deploy",
        outcome="failure",
        context={"service": "consilio-web"},
        error="health check failed on port 5175",
        duration_s=20.0,
        now=at + timedelta(hours=1, minutes=5),
    )
    ps.log(
        "validate", outcome="failure", error="2 of 7 criteria failed", now=at + timedelta(hours=2)
    )
    ps.log("tool_call", meta={"overhead_ms": 4.0}, now=at + timedelta(hours=2, minutes=1))
    ps.log("tool_call", meta={"overhead_ms": 8.0}, now=at + timedelta(hours=2, minutes=2))
    ps.log("spawn", outcome="in_progress", now=at + timedelta(hours=3))
    ms = book.start_session(
        session_id="ms-1", agent="MS", project="odin", now=YESTERDAY + timedelta(hours=14)
    )
    ms.log("checkpoint", now=YESTERDAY + timedelta(hours=14, minutes=1))
    ms.log("push", outcome="blocked", error="protected branch", now=YESTERDAY + timedelta(hours=15))
    # an older action, outside a one-day window
    ms.log("commit", now=YESTERDAY - timedelta(days=3))
    # a line an agent appended itself, with a secret the writer never saw
    shard = store / "actionlog" / YESTERDAY.strftime("%Y/%m/%d") / "ms-1.jsonl"
    raw = dict(json.loads(shard.read_text().splitlines()[-1]))
    raw.update(
        id=raw["id"][:-4] + "ZZZZ",
        type="deploy",
        outcome="failure",
        ts=(YESTERDAY + timedelta(hours=16)).strftime("%Y-%m-%dT%H:%M:%S.000Z"),
        error=f"push rejected: token {SECRET}",
        context={"service": "odin-api"},
    )
    with shard.open("a") as handle:
        handle.write(json.dumps(raw, separators=(",", ":"), sort_keys=True) + "\n")
    return store


def report_json(root: Path, *args: str) -> dict[str, Any]:
    result = cli_run(["--root", str(root), "report", "--json", *args])
    assert result.code == 0, result.err
    return dict(json.loads(result.out))


def test_report_figures(active: Path) -> None:
    data = report_json(
        active, "--since", DAY, "--until", (YESTERDAY + timedelta(days=1)).strftime("%Y-%m-%d")
    )
    s = data["summary"]
    assert s["total_actions"] == 14
    assert s["outcomes"] == {"success": 9, "failure": 3, "blocked": 1, "in_progress": 1}
    assert s["success_rate"] == round(100 * 9 / 13, 1)
    assert s["most_common_action"] == {"type": "commit", "count": 4}
    assert s["busiest_day"] == {"day": DAY, "count": 14}
    assert s["active_projects"] == ["consilio", "odin"]
    assert s["agents"] == ["MS", "PS"] and s["sessions"] == 2
    assert [b["key"] for b in data["breakdown"]] == [DAY]
    assert sum(data["by_hour"]) == 14 and data["by_hour"][9] == 5
    dep = data["deployments"]
    assert dep["total"] == 3
    assert dep["by_outcome"] == {"success": 1, "failure": 2, "blocked": 0, "in_progress": 0}
    assert [(d["service"], d["outcome"]) for d in dep["recent"]] == [
        ("odin-api", "failure"),
        ("consilio-web", "failure"),
        ("consilio-api", "success"),
    ]
    failures = data["recent_failures"]
    assert [f["type"] for f in failures] == ["deploy", "validate", "deploy"]  # newest first
    assert SECRET not in json.dumps(data)
    assert "[REDACTED" in failures[0]["error"]
    assert failures[1]["error"] == "2 of 7 criteria failed"
    durations = {a["type"]: a for a in data["average_duration"]}
    assert durations["commit"]["avg_seconds"] == 3.5 and durations["commit"]["count"] == 4
    assert durations["deploy"]["avg_seconds"] == 30.0
    overhead = data["overhead"]
    assert overhead["count"] == 2 and overhead["avg_ms"] == 6.0
    assert overhead["by_type"] == [
        {"type": "tool_call", "count": 2, "avg_ms": 6.0, "p95_ms": 8.0, "max_ms": 8.0}
    ]


@pytest.mark.parametrize(("group", "first"), [("type", "commit"), ("outcome", "success")])
def test_group_by(active: Path, group: str, first: str) -> None:
    data = report_json(active, "--days", "7", "--group-by", group)
    assert data["group_by"] == group
    assert data["breakdown"][0]["key"] == first
    assert sum(b["total"] for b in data["breakdown"]) == data["summary"]["total_actions"] == 15


def test_group_by_day_lists_every_day(active: Path) -> None:
    data = report_json(active, "--days", "7")
    assert len(data["breakdown"]) in (7, 8)
    assert sum(b["total"] for b in data["breakdown"]) == 15


def test_filters(active: Path) -> None:
    assert report_json(active, "--project", "odin")["summary"]["total_actions"] == 4
    assert report_json(active, "--agent", "PS")["summary"]["total_actions"] == 11
    empty = report_json(active, "--agent", "nobody")
    assert empty["summary"]["total_actions"] == 0 and empty["summary"]["success_rate"] is None
    assert empty["deployments"]["total"] == 0 and empty["recent_failures"] == []


def test_catalog_and_scan_give_the_same_report(active: Path) -> None:
    book = Lorebook.open(active, env={})
    window = resolve_window(days=7, since=None, until=None, now=NOW)
    with_catalog = build_report(book, window, group_by="type")
    assert book.catalog.unavailable is None
    (active / ".lore" / "config.yaml").write_text("catalog:\n  enabled: false\n")
    scan_book = Lorebook.open(active, env={})
    assert build_report(scan_book, window, group_by="type") == with_catalog
    assert scan_book.catalog.unavailable


def test_human_report(active: Path) -> None:
    result = lore("report", "--days", "7", env=clean_env(active))
    assert result.code == 0, result.err
    assert "Total actions: 15" in result.out
    assert "Most common action: commit (5)" in result.out
    assert "consilio: consilio-web -> failure" in result.out
    assert "health check failed on port 5175" in result.out
    assert "Logging/hook overhead" in result.out
    assert SECRET not in result.out


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["--since", "3d", "--until", "5d"], ["is not before --until"]),
        (["--since", "2999-01-01"], ["--since", "in the future"]),
        (["--until", "2999-01-01"], ["--until", "in the future"]),
        (["--days", "0"], ["--days"]),
        (["--days", "3", "--since", "2d"], ["either --days or --since"]),
        (["--since", "someday"], ["--since", "7d"]),
        (["--group-by", "week"], ["week"]),
    ],
)
def test_bad_report_input(active: Path, args: list[str], needles: list[str]) -> None:
    assert_one_error_line(cli_run(["--root", str(active), "report", *args]), *needles)


def test_bad_input_as_json_and_subprocess(active: Path) -> None:
    result = lore("report", "--since", "1d", "--until", "3d", "--json", env=clean_env(active))
    assert result.code == 1 and result.out == ""
    assert "is not before" in json.loads(result.err)["error"]


# -- report files ----------------------------------------------------------------------------
def test_daily_file(active: Path) -> None:
    result = cli_run(["--root", str(active), "report", "daily", "--date", DAY])
    assert result.code == 0, result.err
    assert result.out.strip() == f"wrote docs/reports/daily/{DAY}.md (14 actions)"
    path = active / "docs" / "reports" / "daily" / f"{DAY}.md"
    text = path.read_text()
    assert text.startswith(f"# Agent activity report: {DAY}\n")
    assert "```mermaid\nxychart-beta\n" in text
    bars = next(line for line in text.splitlines() if line.strip().startswith("bar ["))
    values = json.loads(bars.strip()[4:])
    assert len(values) == 24 and sum(values) == 14 and values[9] == 5
    assert "## Deployments (3)" in text and "| consilio-web | failure |" in text
    assert "## Failed actions (3)" in text and "2 of 7 criteria failed" in text
    assert "## Top activity" in text and "| commit | 4 |" in text
    assert SECRET not in text and "[REDACTED" in text
    before = path.read_bytes()
    again = cli_run(["--root", str(active), "report", "daily", "--date", DAY, "--json"])
    assert again.code == 0, again.err
    info = json.loads(again.out)
    assert info["unchanged"] is True and info["path"] == f"docs/reports/daily/{DAY}.md"
    assert path.read_bytes() == before


def test_daily_default_is_yesterday_through_the_entry_point(active: Path) -> None:
    # the subprocess reads its own clock: its yesterday is the one before or after the call
    result, yesterday = around(
        lambda: day(days_ago=1), lambda: lore("report", "daily", env=clean_env(active))
    )
    assert result.code == 0, result.err
    written = [p.stem for p in (active / "docs" / "reports" / "daily").iterdir()]
    assert len(written) == 1 and written[0] in yesterday, (written, yesterday)


def test_weekly_file(active: Path) -> None:
    year, week, _ = YESTERDAY.isocalendar()
    label = f"{year}-W{week:02d}"
    result = cli_run(["--root", str(active), "report", "weekly", "--week", label, "--json"])
    assert result.code == 0, result.err
    info = json.loads(result.out)
    assert info["path"] == f"docs/reports/weekly/{label}.md"
    text = (active / info["path"]).read_text()
    assert "Actions per day" in text and "xychart-beta" in text
    bars = next(line for line in text.splitlines() if line.strip().startswith("bar ["))
    assert len(json.loads(bars.strip()[4:])) == 7
    assert sum(json.loads(bars.strip()[4:])) == info["total_actions"] >= 14


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["daily", "--date", "2999-01-01"], ["--date", "in the future"]),
        (["daily", "--date", "yesterday"], ["--date", "2026-11-21"]),
        (["weekly", "--week", "2999-W01"], ["in the future"]),
        (["weekly", "--week", "47"], ["--week", "2026-W47"]),
    ],
)
def test_bad_report_file_input(active: Path, args: list[str], needles: list[str]) -> None:
    assert_one_error_line(cli_run(["--root", str(active), "report", *args]), *needles)
    assert not (active / "docs" / "reports").exists()


def test_unwritable_report_path(active: Path) -> None:
    (active / "docs").mkdir()
    (active / "docs" / "reports").write_text("a file where the directory should be")
    result = cli_run(["--root", str(active), "report", "daily", "--date", DAY])
    assert_one_error_line(result, "nothing was written")


def test_aggregate_is_pure_and_empty_safe() -> None:
    window = resolve_window(days=1, since=None, until=None, now=NOW)
    empty = aggregate([], window, "day")
    assert empty["summary"]["total_actions"] == 0 and empty["overhead"] is None
    assert empty["summary"]["most_common_action"] is None
    label, week = week_window(None, NOW)
    assert week.until - week.since == timedelta(days=7) and label.count("-W") == 1


def test_python_api_report_and_export(active: Path) -> None:
    book = Lorebook.open(active, env={})
    data = book.report(days=7, group_by="outcome", project="consilio")
    assert data["summary"]["total_actions"] == 11 and data["group_by"] == "outcome"
    assert book.report(since="3d")["window"]["since"] < book.report(since="1d")["window"]["since"]
    out = active / "docs" / "training-data" / "x.jsonl"  # inside the repository: its export folder
    manifest = book.export_training_data("jsonl", out, project="odin", with_context=False)
    assert manifest["record_count"] == 4
    assert all("context" not in json.loads(line)["input"] for line in out.read_text().splitlines())
