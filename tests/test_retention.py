"""`lore archive` / `lore prune` and reading archives with --include-archive."""

from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from conftest import assert_one_error_line, clean_env, cli_run, lore
from lorebook import Lorebook
from lorebook.log.archive_io import archive_name
from wall_clock import around, day

NOW = datetime.now(UTC).replace(hour=12, minute=0, second=0, microsecond=0)
if datetime.now(UTC) < NOW:
    NOW -= timedelta(days=1)
AGES = (400, 200, 100, 10, 1)  # days ago, one session each


def day_of(age: int) -> str:
    return (NOW - timedelta(days=age)).strftime("%Y-%m-%d")


@pytest.fixture
def aged(store: Path) -> Path:
    book = Lorebook.open(store, env={})
    for age in AGES:
        when = NOW - timedelta(days=age)
        s = book.start_session(session_id=f"s{age}", agent="PS", project="p", now=when)
        s.log(
            "deploy",
            outcome="failure" if age % 2 else "success",
            error="x" if age % 2 else None,
            context={"service": "api"},
            now=when + timedelta(minutes=1),
        )
        s.log("commit", now=when + timedelta(minutes=2))
    return store


def live_shards(root: Path) -> list[str]:
    return sorted(
        p.relative_to(root / "actionlog").as_posix() for p in (root / "actionlog").rglob("*.jsonl")
    )


def run(root: Path, *args: str) -> dict[str, Any]:
    result = cli_run(["--root", str(root), *args, "--json"])
    assert result.code == 0, result.err
    return dict(json.loads(result.out))


def ids(root: Path, *args: str) -> list[str]:
    result = cli_run(["--root", str(root), "actions", "--json", "--limit", "100", *args])
    assert result.code == 0, result.err
    return [a["id"] for a in json.loads(result.out)]


def test_archive_moves_old_shards_and_keeps_every_line(aged: Path) -> None:
    originals = {
        age: next((aged / "actionlog").rglob(f"s{age}.jsonl")).read_bytes() for age in AGES
    }
    all_ids = ids(aged)
    dry = run(aged, "archive", "--dry-run")
    assert dry["dry_run"] and len(dry["done"]) == 3  # 400, 200, 100 days: past 90
    assert len(live_shards(aged)) == 5
    # the command reads the clock itself: its cutoff is the one before or after the call
    done, cutoffs = around(lambda: day(days_ago=90), lambda: run(aged, "archive"))
    assert done["cutoff"] in cutoffs and not done["failed"]
    assert [d["shard"].split("/")[-1] for d in done["done"]] == [
        "s400.jsonl",
        "s200.jsonl",
        "s100.jsonl",
    ]
    assert live_shards(aged) == sorted(
        f"{day_of(a)[:4]}/{day_of(a)[5:7]}/{day_of(a)[8:]}/s{a}.jsonl" for a in (10, 1)
    )
    for age in (400, 200, 100):
        archived = aged / "actionlog" / "archive" / archive_name(day_of(age), f"s{age}")
        assert gzip.decompress(archived.read_bytes()) == originals[age]
        assert not (
            aged / "actionlog" / day_of(age)[:4] / day_of(age)[5:7] / day_of(age)[8:]
        ).exists()
    assert ids(aged) == all_ids[:4]  # live actions only: 10 and 1 days ago
    assert ids(aged, "--include-archive") == all_ids
    assert run(aged, "archive")["done"] == []  # nothing left to do
    check = lore("check", "--json", env=clean_env(aged))
    assert check.code == 0, check.out  # archive/ is not mistaken for a day directory
    assert json.loads(check.out)["shards"] == 2


def test_archive_is_read_through_the_catalog_and_the_scan_alike(aged: Path) -> None:
    run(aged, "archive")
    with_catalog = ids(aged, "--include-archive", "--type", "deploy")
    (aged / ".lore" / "config.yaml").write_text("catalog:\n  enabled: false\n")
    assert ids(aged, "--include-archive", "--type", "deploy") == with_catalog
    assert len(with_catalog) == 5


def test_report_and_export_include_archive(aged: Path, tmp_path: Path) -> None:
    run(aged, "archive")
    live = run(aged, "report", "--days", "500")
    both = run(aged, "report", "--days", "500", "--include-archive")
    assert live["summary"]["total_actions"] == 4
    assert both["summary"]["total_actions"] == 10
    assert both["deployments"]["total"] == 5
    out = tmp_path / "x.jsonl"
    info = run(aged, "export", "--include-archive", "-o", str(out))
    assert info["record_count"] == 10 and info["filters"]["include_archive"] is True


def test_corrupt_existing_archive_is_reported_and_the_shard_kept(aged: Path) -> None:
    target = aged / "actionlog" / "archive" / archive_name(day_of(200), "s200")
    target.parent.mkdir(parents=True)
    target.write_bytes(b"\x1f\x8b not really gzip")
    result = cli_run(["--root", str(aged), "archive"])
    assert result.code == 1
    assert "s200.jsonl" in result.err and "corrupt" in result.err
    assert result.err.count("\n") == 1
    assert any("s200.jsonl" in s for s in live_shards(aged))  # kept
    assert not any("s400.jsonl" in s for s in live_shards(aged))  # the others went on
    problems = lore("actions", "--include-archive", "--json", env=clean_env(aged))
    assert problems.code == 0
    assert "corrupt" in problems.err and "s200" in problems.err


def test_existing_archive_is_merged(aged: Path) -> None:
    run(aged, "archive")
    shard_day = day_of(100)
    archived = aged / "actionlog" / "archive" / archive_name(shard_day, "s100")
    before = gzip.decompress(archived.read_bytes())
    # the shard comes back (a pull) with one more line
    Lorebook.open(aged, env={}).log(
        "plan", session="s100", agent="PS", project="p", now=NOW - timedelta(days=100, minutes=-5)
    )
    returned = next((aged / "actionlog").rglob("s100.jsonl")).read_bytes()
    run(aged, "archive")
    after = gzip.decompress(archived.read_bytes())
    assert after.startswith(before) and after.endswith(returned)
    assert len(after.splitlines()) == len(before.splitlines()) + 1
    assert len(ids(aged, "--include-archive", "--session", "s100")) == 3


def test_prune_deletes_only_old_archives(aged: Path) -> None:
    run(aged, "archive")
    dry = run(aged, "prune", "--dry-run")
    assert [d["day"] for d in dry["done"]] == [day_of(400)]
    assert (aged / "actionlog" / "archive" / archive_name(day_of(400), "s400")).exists()
    pruned = run(aged, "prune")
    assert [d["day"] for d in pruned["done"]] == [day_of(400)]
    assert not (aged / "actionlog" / "archive" / archive_name(day_of(400), "s400")).exists()
    assert len(ids(aged, "--include-archive")) == 8
    again = run(aged, "prune", "--older-than", "150d")
    assert [d["day"] for d in again["done"]] == [day_of(200)]
    assert len(live_shards(aged)) == 2


def test_config_defaults(aged: Path) -> None:
    (aged / ".lore" / "config.yaml").write_text("retention:\n  archive_days: 5\n")
    assert len(run(aged, "archive", "--dry-run")["done"]) == 4


def test_human_output_through_the_entry_point(aged: Path) -> None:
    result, cutoffs = around(
        lambda: day(days_ago=150),
        lambda: lore("archive", "--older-than", "150d", env=clean_env(aged)),
    )
    assert result.code == 0, result.err
    shown = result.out.strip()
    assert any(shown.endswith(f"2 shard(s) archived (days before {c})") for c in cutoffs), shown


@pytest.mark.parametrize(
    "args",
    [
        ["archive", "--older-than", "ninety"],
        ["prune", "--older-than", "0d"],
        ["archive", "--older-than", "90"],
    ],
)
def test_bad_ages(aged: Path, args: list[str]) -> None:
    assert_one_error_line(cli_run(["--root", str(aged), *args]), "--older-than", "90d")
    assert len(live_shards(aged)) == 5
