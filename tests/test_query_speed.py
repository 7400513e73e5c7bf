"""`lore actions` and `lore report` at database speed: the same answers whether the store comes
from LORE_ROOT or `--root` (good and bad input, `--json`, pipe and terminal), and no click."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from conftest import LORE, clean_env, lore, on_a_terminal
from lorebook import REPORT_GROUPS, Lorebook
from lorebook.cli import queryspec
from lorebook.log import catalog_read

NOW = datetime.now(UTC).replace(microsecond=0)
SINCE = (NOW - timedelta(days=9)).strftime("%Y-%m-%dT%H:%M:%SZ")
UNTIL = (NOW - timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.fixture
def populated(store: Path) -> Path:
    """Three sessions over ten days: deployments that failed, an epic, overhead, durations."""
    book = Lorebook.open(store, env={})
    for n, (agent, project) in enumerate((("PS", "consilio"), ("MS", "other"), ("PS", "other"))):
        start = NOW - timedelta(days=10 - 3 * n)
        session = book.start_session(agent=agent, project=project, now=start)
        for k in range(12):
            when = start + timedelta(hours=5 * k + n)
            outcome = ("success", "failure", "in_progress", "blocked")[(k + n) % 4]
            kind = ("deploy", "commit", "validate", "search")[k % 4]
            session.log(kind, outcome=outcome, epic=f"epic-{k % 3}", duration_s=k * 1.5,
                        error="port 5000 in use by another" if outcome == "failure" else None,
                        context={"service": f"svc-{n}"}, meta={"overhead_ms": k + 0.5},
                        now=when)  # fmt: skip
        if n != 1:
            book.end_session(session.id, now=start + timedelta(hours=70))
    return store


def _both(root: Path, *args: str) -> tuple[object, object]:
    fast = lore(*args, env=clean_env(root))
    # the same command with the store named by `--root` instead of LORE_ROOT
    slow = lore("--root", str(root), *args, env=clean_env())
    return (fast.code, fast.out, fast.err), (slow.code, slow.out, slow.err)


ACTIONS_ARGS = [
    [], ["--json"], ["--type", "deploy", "--outcome", "failure", "--since", "30d", "--json"],
    ["--epic", "epic-1", "--limit", "500", "--json"], ["--epic=epic-2", "--limit=3"],
    ["--project", "other", "--agent", "MS"], ["--since", SINCE, "--until", "noon"],
    ["--include-archive", "--category", "deploy", "--json"], ["--session", "nope"],
    ["--outcome", "meh"], ["--outcome", "meh", "--json"], ["--since", "later", "--json"],
    ["--since", "2026-01-05", "--until", "2026-01-02"], ["--limit", "0"],
    ["--limit", "x", "--json"], ["--bogus"], ["extra"], ["--type"],
]  # fmt: skip


@pytest.mark.parametrize("args", ACTIONS_ARGS)
def test_actions_prints_the_same_with_the_root_option(populated: Path, args: list[str]) -> None:
    fast, slow = _both(populated, "actions", *args)
    assert fast == slow


REPORT_ARGS = [
    ["--since", SINCE, "--until", "noon"], ["--since", SINCE, "--until", UNTIL],
    ["--since", SINCE, "--until", UNTIL, "--json"],
    ["--since", SINCE, "--until", UNTIL, "--group-by", "type", "--project", "other", "--json"],
    ["--since", SINCE, "--until", UNTIL, "--group-by=outcome", "--include-internal"],
    ["--since", SINCE, "--until", UNTIL, "--agent", "nobody", "--include-archive", "--json"],
    ["--days", "7", "--since", "3d"], ["--days", "-2", "--json"], ["--days", "x"],
    ["--days", "0"], ["--group-by", "week"], ["--since", "2026-02-30", "--json"],
    ["--until", "soon"], ["--bogus", "--json"],
]  # fmt: skip


@pytest.mark.parametrize("args", REPORT_ARGS)
def test_report_prints_the_same_with_the_root_option(populated: Path, args: list[str]) -> None:
    fast, slow = _both(populated, "report", *args)
    assert fast == slow


def _imports(root: Path, *args: str) -> tuple[int, str, set[str]]:
    code = (
        "import sys, json\n"
        "from lorebook.cli import main\n"
        f"rc = main({list(args)!r})\n"
        "print(json.dumps({'code': rc, 'modules': sorted(sys.modules)}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=clean_env(root), timeout=60)  # fmt: skip
    lines = done.stdout.rstrip("\n").splitlines()
    found = json.loads(lines[-1])
    return found["code"], "\n".join(lines[:-1]), {m.split(".")[0] for m in found["modules"]}


@pytest.mark.parametrize("args", [
    ["actions", "--json"], ["actions", "--epic", "epic-1", "--limit", "5"],
    ["report", "--days", "7", "--json"], ["report", "--group-by", "type"],
])  # fmt: skip
def test_lookups_import_no_click(populated: Path, args: list[str]) -> None:
    code, out, modules = _imports(populated, *args)
    assert code == 0 and out.strip()
    assert "click" not in modules, args
    assert modules & {"torch", "chromadb", "pydantic", "yaml"} == set(), args


def test_help_and_subcommands(populated: Path) -> None:
    helped = lore("actions", "--help", env=clean_env(populated))
    assert helped.code == 0 and "--limit N" in helped.out and "[default: 50]" in helped.out
    helped = lore("report", "-h", env=clean_env(populated))
    assert helped.code == 0 and "day|type|outcome" in helped.out and "daily" in helped.out
    daily = lore("report", "daily", "--json", env=clean_env(populated))
    assert daily.code == 0, daily.err
    assert json.loads(daily.out)["kind"] == "daily"


def test_report_groups_are_the_reports_own() -> None:
    own = queryspec.REPORT.own
    group_by = own.option("group_by") if own is not None else None
    assert group_by is not None and tuple(REPORT_GROUPS) == group_by.choices


def test_skipped_lines_and_the_catalog_note_are_the_same(populated: Path) -> None:
    """A long log without a catalog is scanned (with a note); damaged lines are warned about."""
    (populated / ".lore" / "config.yaml").write_text("catalog:\n  auto_build_days: 1\n")
    catalog = populated / ".lore" / "cache" / "catalog.sqlite"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{catalog}{suffix}").unlink(missing_ok=True)
    shard = max((populated / "actionlog").rglob("*.jsonl"))
    with shard.open("a") as handle:
        handle.write('{"v": 1, "kind": "act\n' * 12)
    for args in (
        ["actions", "--limit", "500"],
        ["actions", "--json"],
        ["report", "--json", "--since", SINCE],
    ):
        fast, slow = _both(populated, *args)
        if args[0] == "report":  # `until` is now: compare all but the window
            fast_report, slow_report = (json.loads(str(r[1])) for r in (fast, slow))  # type: ignore[index]
            assert fast_report.pop("window") != {} and slow_report.pop("window") != {}
            assert fast_report == slow_report
            continue
        assert fast == slow
        assert "note: scanned the shards: no catalog yet" in str(fast[2])  # type: ignore[index]
        assert "more lines skipped" in str(fast[2])  # type: ignore[index]
    assert not catalog.exists()


def _on_a_terminal(root: Path, *args: str) -> str:
    code, shown, err = on_a_terminal([*LORE, *args], clean_env(root))
    assert code == 0, err
    return shown


@pytest.mark.parametrize("args", [
    ["actions", "--epic", "epic-1", "--json"], ["actions", "--limit", "4"],
    ["report", "--since", SINCE, "--until", UNTIL, "--json"],
    ["report", "--since", SINCE, "--until", UNTIL],
])  # fmt: skip
def test_on_a_terminal_both_paths_print_the_same(populated: Path, args: list[str]) -> None:
    fast = _on_a_terminal(populated, *args)
    slow = _on_a_terminal(populated, "--root", str(populated), *args)
    assert fast == slow
    if "--json" in args:
        assert fast.startswith(("[\n  {\n", "{\n  ")), fast[:40]
        piped = lore(*args, env=clean_env(populated))
        assert json.loads(piped.out) == json.loads(fast) and "\n  " not in piped.out


# -- re-redaction: shards verified clean are not sanitized again --------------------------------
SECRET = "AKIAIOSFODNN7EXAMPLE"  # an AWS access key id: the sanitizer redacts it anywhere


def _memo_rows(root: Path) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(root / ".lore" / "cache" / "catalog.sqlite")
    try:
        return conn.execute("SELECT * FROM clean ORDER BY path").fetchall()
    finally:
        conn.close()


def _scanned(root: Path, config: str = "", **filters: object) -> list[dict[str, object]]:
    """The reference: the same query answered by a scan of the shards (no catalog)."""
    path = root / ".lore" / "config.yaml"
    kept = path.read_text() if path.exists() else None
    path.write_text(config + "catalog:\n  enabled: false\n")
    try:
        return Lorebook.open(root, env={}).actions(limit=None, **filters)
    finally:
        if kept is None:
            path.unlink()
        else:
            path.write_text(kept)


@pytest.fixture
def no_racy_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files written a moment ago are never remembered (an edit in the same clock tick would
    not show); the tests' files are that young, so the window is closed here."""
    monkeypatch.setattr(catalog_read, "settled", lambda identity, now_ns: True)


@pytest.mark.usefixtures("no_racy_window")
def test_clean_shards_are_remembered_without_any_value(populated: Path) -> None:
    book = Lorebook.open(populated, env={})
    first = book.actions(epic="epic-1", limit=None)
    rows = _memo_rows(populated)
    assert rows and {len(row) for row in rows} == {6}
    for path, ino, size, mtime, ctime, rules in rows:
        assert str(path).startswith("actionlog/") and str(path).endswith(".jsonl")
        assert all(isinstance(n, int) for n in (ino, size, mtime, ctime))
        assert isinstance(rules, str) and len(rules) == 24
    assert Lorebook.open(populated, env={}).actions(epic="epic-1", limit=None) == first
    assert first == _scanned(populated, epic="epic-1")


@pytest.mark.usefixtures("no_racy_window")
def test_a_shard_edited_by_hand_is_redacted_again(populated: Path) -> None:
    """Same size, same inode, mtime set back: the ctime still tells the edit."""
    book = Lorebook.open(populated, env={})
    assert book.actions(outcome="failure", limit=None)
    assert _memo_rows(populated)
    shard = next(p for p in sorted((populated / "actionlog").rglob("*.jsonl"))
                 if "port 5000 in use" in p.read_text())  # fmt: skip
    before = shard.stat()
    text = shard.read_text()
    edited = text.replace("port 5000 in use by another", SECRET.ljust(27), 1)
    assert len(edited) == len(text)
    with shard.open("r+") as handle:  # in place: the inode stays
        handle.write(edited)
    os.utime(shard, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = shard.stat()
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (
        before.st_ino, before.st_size, before.st_mtime_ns)  # fmt: skip
    found = Lorebook.open(populated, env={}).actions(outcome="failure", limit=None)
    assert SECRET not in json.dumps(found)
    assert found == _scanned(populated, outcome="failure")
    cli = lore("actions", "--outcome", "failure", "--limit", "500", "--json",
               env=clean_env(populated))  # fmt: skip
    assert cli.code == 0 and SECRET not in cli.out
    now = shard.stat()
    rel = shard.relative_to(populated).as_posix()
    assert not [
        row
        for row in _memo_rows(populated)
        if row[:5] == (rel, now.st_ino, now.st_size, now.st_mtime_ns, now.st_ctime_ns)
    ]


@pytest.mark.usefixtures("no_racy_window")
def test_new_redaction_rules_verify_every_shard_again(populated: Path) -> None:
    book = Lorebook.open(populated, env={})
    assert "svc-0" in json.dumps(book.actions(epic="epic-0", limit=None))
    assert _memo_rows(populated)
    rule = 'redaction:\n  extra_patterns: {service: "svc-[0-9]"}\n'
    (populated / ".lore" / "config.yaml").write_text(rule)
    found = Lorebook.open(populated, env={}).actions(epic="epic-0", limit=None)
    assert "svc-0" not in json.dumps(found) and found
    assert found == _scanned(populated, rule, epic="epic-0")
    report = Lorebook.open(populated, env={}).report(days=30)
    assert "svc-0" not in json.dumps(report["deployments"])


def test_a_query_from_a_day_syncs_only_the_days_from_it(store: Path) -> None:
    """`--since` and a report's window sync the day directories from their first day on (a
    record lives in its own UTC day's shard); the answer is what a full sync gives."""
    from datetime import timedelta

    from test_resume_speed import T0, _sessions

    book = Lorebook.open(store, env={})
    last = _sessions(book, T0, 60, 3)
    assert book.catalog.open(create=True) is not None
    old = sorted((store / "actionlog").rglob("*.jsonl"))[0]
    (old.parent / "stray.jsonl").write_text("")  # an old day changed: not the query's days
    since = (last - timedelta(days=2)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    until = (last + timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    partial = Lorebook.open(store, env={})
    recent = partial.actions(since=since, limit=None)
    assert partial.catalog.last_sync is not None
    assert partial.catalog.last_sync.shards_checked < 12, partial.catalog.last_sync
    reported = Lorebook.open(store, env={})
    window = reported.report(since=since, until=until)
    assert reported.catalog.last_sync is not None
    assert reported.catalog.last_sync.shards_checked < 12, reported.catalog.last_sync
    full = Lorebook.open(store, env={})
    assert full.catalog.sync()["sync"]["shards_checked"] > 60  # a full sync still finds it
    assert recent == full.actions(since=since, limit=None) and recent
    assert window["summary"] == full.report(since=since, until=until)["summary"]
