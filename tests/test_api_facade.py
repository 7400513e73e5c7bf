"""What the CLI used to reach below the facade for, through `Lorebook` alone: retention,
report files, the catalog, evaluation, init, and the validation of windows and days."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import lorebook
from lorebook import Lorebook, LoreError, UsageError
from wall_clock import around, day

NOW = datetime.now(UTC)


@pytest.fixture
def aged(store: Path) -> Path:
    """Sessions 200, 100 and 1 days ago, at noon: each within one UTC day (one shard)."""
    book = Lorebook.open(store, env={})
    noon = NOW.replace(hour=12, minute=0, second=0, microsecond=0)
    for age in (200, 100, 1):
        when = noon - timedelta(days=age)
        s = book.start_session(session_id=f"s{age}", agent="PS", project="p", now=when)
        s.log("commit", now=when + timedelta(minutes=1))
    return store


@pytest.fixture
def logged(store: Path) -> Path:
    """Two sessions in the last days."""
    book = Lorebook.open(store, env={})
    s = book.start_session(
        session_id="s-1", agent="PS", project="consilio", now=NOW - timedelta(days=2)
    )
    s.log("commit", epic="epic-3", context={"files": ["a.py"]}, now=NOW - timedelta(days=2))
    o = book.start_session(
        session_id="o-1", agent="MS", project="odin", now=NOW - timedelta(hours=3)
    )
    o.log(
        "deploy",
        outcome="failure",
        context={"service": "api"},
        error="port in use",
        now=NOW - timedelta(hours=3),
    )
    return store


def test_archive_and_prune_through_the_api(aged: Path) -> None:
    book = Lorebook.open(aged, env={})
    # the facade reads the clock itself: its cutoff is the one before or after the call
    dry, cutoff = around(lambda: day(days_ago=90), lambda: book.archive(dry_run=True))
    assert dry.action == "archive" and dry.dry_run and len(dry.done) == 2  # archive_days: 90
    assert dry.cutoff in cutoff
    assert book.archive("150d", dry_run=True).cutoff < dry.cutoff
    assert len(book.archive(150, dry_run=True).done) == 1  # a number of days works too
    done = book.archive("12w")
    assert len(done.done) == 2 and not done.failed
    assert len(book.actions(limit=None)) == 1
    assert len(book.actions(limit=None, include_archive=True)) == 3
    pruned = book.prune(dry_run=True)  # retention.prune_days: 365
    assert pruned.action == "prune" and pruned.done == []
    assert len(book.prune("150d").done) == 1


def test_retention_defaults_come_from_the_config(aged: Path) -> None:
    (aged / ".lore" / "config.yaml").write_text(
        "retention:\n  archive_days: 150\n  prune_days: 500\n", encoding="utf-8"
    )
    book = Lorebook.open(aged, env={})
    assert len(book.archive(dry_run=True).done) == 1
    pruned, cutoff = around(lambda: day(days_ago=500), lambda: book.prune(dry_run=True))
    assert pruned.cutoff in cutoff


@pytest.mark.parametrize("older_than", ["0d", "24h", "ninety", 0, -3, 10**9])
def test_nonsense_retention_ages_are_refused(store: Path, older_than: str | int) -> None:
    book = Lorebook.open(store, env={})
    with pytest.raises(UsageError, match="--older-than"):
        book.archive(older_than, dry_run=True)
    with pytest.raises(UsageError, match="--older-than"):
        book.prune(older_than, dry_run=True)


@pytest.mark.parametrize(
    ("options", "needle"),
    [
        ({"since": "2999-01-01"}, "in the future"),
        ({"since": NOW + timedelta(days=2)}, "in the future"),
        ({"since": "1d", "until": "3d"}, "is not before --until"),
        ({"since": NOW - timedelta(hours=1), "until": NOW - timedelta(hours=2)}, "is not before"),
        ({"since": "whenever"}, "--since"),
        ({"until": "0001-01-01T00:00:00+01:00"}, "--until"),
    ],
)
def test_export_refuses_nonsense_windows(
    logged: Path, options: dict[str, object], needle: str
) -> None:
    book = Lorebook.open(logged, env={})
    with pytest.raises(UsageError, match=needle):
        book.export_training_data("jsonl", **options)  # type: ignore[arg-type]
    assert not (logged / "docs" / "training-data").exists()


def test_export_takes_datetimes_and_since_forms(logged: Path, tmp_path: Path) -> None:
    book = Lorebook.open(logged, env={})
    out = tmp_path / "all.jsonl"
    every = book.export_training_data("jsonl", out, since=NOW - timedelta(days=30))
    assert every["record_count"] == len(book.actions(limit=None))
    recent = book.export_training_data("jsonl", out, since="30d", until=NOW + timedelta(hours=1))
    assert recent["record_count"] == every["record_count"]
    assert recent["filters"]["since"].endswith("Z") and recent["filters"]["until"].endswith("Z")


def test_report_refuses_days_and_since_together(logged: Path) -> None:
    book = Lorebook.open(logged, env={})
    with pytest.raises(UsageError, match="either --days or --since"):
        book.report(days=3, since="2d")
    with pytest.raises(UsageError, match="--days"):
        book.report(days=0)
    window = book.report()["window"]  # the default: the last 7 days
    span = datetime.fromisoformat(window["until"]) - datetime.fromisoformat(window["since"])
    assert span == timedelta(days=7)


def test_write_report_through_the_api(logged: Path) -> None:
    book = Lorebook.open(logged, env={})
    today = NOW.strftime("%Y-%m-%d")
    first = book.write_report("daily", when=today)
    assert first["path"] == f"docs/reports/daily/{today}.md" and not first["unchanged"]
    assert (logged / first["path"]).read_text(encoding="utf-8").startswith("#")
    assert book.write_report("daily", when=today)["unchanged"]
    weekly = book.write_report("weekly")
    assert weekly["path"].startswith("docs/reports/weekly/")
    with pytest.raises(UsageError, match="daily, weekly"):
        book.write_report("monthly")
    with pytest.raises(UsageError, match="--date"):
        book.write_report("daily", when="yesterday-ish")


def test_catalog_sync_and_rebuild_through_the_api(logged: Path) -> None:
    book = Lorebook.open(logged, env={})
    assert book.catalog_hint is None  # the catalog was never asked
    synced = book.sync_catalog()
    assert synced["path"] == ".lore/cache/catalog.sqlite"
    assert synced["actions"] == len(book.actions(limit=None))
    rebuilt = book.rebuild_catalog()
    assert rebuilt["sync"]["rebuilt"] and rebuilt["actions"] == synced["actions"]
    assert book.catalog_hint is None  # the catalog answered


def test_a_disabled_catalog_is_one_error(logged: Path) -> None:
    (logged / ".lore" / "config.yaml").write_text("catalog:\n  enabled: false\n", encoding="utf-8")
    with pytest.raises(LoreError, match=r"catalog\.enabled: false"):
        Lorebook.open(logged, env={}).sync_catalog()


def test_evaluate_through_the_api(store: Path, tmp_path: Path) -> None:
    book = Lorebook.open(store, env={})
    with pytest.raises(LoreError, match=r"eval\.yaml"):
        book.evaluate()  # no golden set in learnings/ yet
    with pytest.raises(UsageError, match="not one of"):
        book.evaluate(tmp_path / "golden.yaml", modes=["fuzzy"])


def test_init_reports_what_it_created(repo: Path) -> None:
    book = Lorebook.init(repo, env={})
    assert ".lore/config.yaml" in book.created and "actionlog/" in book.created
    assert Lorebook.init(repo, env={}).created == ()
    assert Lorebook.open(repo, env={}).created == ()


def test_the_package_names_what_the_skins_need_lazily() -> None:
    for name in lorebook.__all__:
        assert getattr(lorebook, name) is not None
    assert lorebook.SearchFilters.__name__ == "Filters"
    with pytest.raises(AttributeError):
        lorebook.book_internals  # noqa: B018


def test_open_appender_wakes_the_knowledge_subscribers(store: Path) -> None:
    appender = lorebook.open_appender(store, {})
    for _ in range(3):
        appender.log("validate", outcome="failure", epic="epic-7", error="tests fail")
    drafts = list((store / "learnings" / "drafts").glob("*.md"))
    assert drafts  # the third failed validate of an epic drafts a learning


@pytest.mark.parametrize("limit", [0, -1])
def test_preflight_refuses_a_limit_below_one_in_every_phase(store: Path, limit: int) -> None:
    book = Lorebook.open(store, env={})
    for phase in ("plan", "deploy"):
        with pytest.raises(UsageError, match="limit must be a positive number"):
            book.preflight("ship the api", phase=phase, limit=limit, log=False)


def test_reports_and_exports_need_only_the_action_log(logged: Path, tmp_path: Path) -> None:
    from lorebook.log.export import export
    from lorebook.log.report import build_report, resolve_window
    from lorebook.log.report_file import write_period_report

    book = Lorebook.open(logged, env={})
    log = book.action_log  # append, read, catalog, sessions: no learnings, no config lookups
    window = resolve_window(days=7, since=None, until=None, now=NOW)
    assert build_report(log, window, group_by="type") == build_report(book, window, group_by="type")
    written = write_period_report(log, "daily", when=None, now=NOW)
    assert (logged / written["path"]).exists()
    out = tmp_path / "x.jsonl"
    manifest = export(log, fmt="jsonl", path=out, since=None, until=None, project="odin")
    assert manifest["record_count"] == 1 and out.exists()
