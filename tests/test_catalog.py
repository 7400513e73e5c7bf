"""The action catalog: same answers as a scan, incremental sync, rebuilds, damage, concurrency."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from conftest import LORE, assert_one_error_line, clean_env, cli_run, lore
from lorebook import Lorebook
from lorebook.log.catalog import FILE_NAME, SCHEMA_VERSION
from lorebook.log.query import ActionFilter
from lorebook.log.reader import iter_records
from lorebook.log.sessions import summarize
from lorebook.timeutil import format_ts

NOW = datetime.now(UTC).replace(microsecond=0)
TYPES = ("plan", "commit", "deploy", "validate", "spawn", "apply_learning")


def fill(root: Path) -> Lorebook:
    """Three sessions over 12 days, two agents and projects, every outcome."""
    book = Lorebook.open(root, env={})
    for n, (agent, project) in enumerate((("PS", "consilio"), ("MS", "odin"), ("PS", "odin"))):
        start = NOW - timedelta(days=14 - n, hours=1)
        session = book.start_session(session_id=f"s{n}", agent=agent, project=project, now=start)
        for i in range(30):
            session.log(
                TYPES[(i + n) % len(TYPES)],
                outcome=("success", "failure", "blocked", "in_progress")[i % 4],
                epic=f"epic-{i % 3}",
                error="boom" if i % 4 == 1 else None,
                duration_s=float(i),
                context={"service": "api", "i": i},
                now=start + timedelta(hours=9 * i),
            )
        if n != 1:
            book.end_session(
                f"s{n}", agent=agent, project=project, now=start + timedelta(hours=9 * 30)
            )
    for leftover in (root / ".lore" / "cache").glob(f"{FILE_NAME}*"):
        leftover.unlink()  # subscribers may have queried the log while it was written
    return book


def scanned(root: Path, **filters: Any) -> list[dict[str, Any]]:
    query = ActionFilter(**filters)
    records = iter_records(
        root / "actionlog", base=root, since=query.since, until=query.until, newest_first=True
    )
    return [r for r in records if query.matches(r)]


def newest_shard_with_actions(root: Path, session: str, count: int = 1) -> Path:
    """The newest shard of `session` holding at least `count` actions (its very newest may
    hold only the end event, depending on the hour the test runs)."""
    return max(
        p
        for p in (root / "actionlog").rglob(f"{session}.jsonl")
        if p.read_text().count('"kind":"action"') >= count
    )


def catalog_file(root: Path) -> Path:
    return root / ".lore" / "cache" / FILE_NAME


def fresh(root: Path) -> Lorebook:
    return Lorebook.open(root, env={})


@pytest.fixture
def filled(store: Path) -> Path:
    fill(store)
    return store


@pytest.mark.parametrize(
    "filters",
    [
        {},
        {"type": "deploy"},
        {"outcome": "failure"},
        {"type": "deploy", "outcome": "failure"},
        {"project": "odin", "agent": "PS"},
        {"epic": "epic-1"},
        {"session": "s1"},
        {"category": "learning"},
        {"since": format_ts(NOW - timedelta(days=5))},
        {"since": format_ts(NOW - timedelta(days=9)), "until": format_ts(NOW - timedelta(days=4))},
    ],
)
def test_catalog_answers_like_a_scan(filled: Path, filters: dict[str, Any]) -> None:
    book = fresh(filled)
    found = book.actions(limit=None, **filters)
    assert book.catalog.last_sync is not None and book.catalog.unavailable is None  # catalog used
    assert found == scanned(filled, **filters)
    assert found  # every case matches something
    oldest_first = list(book.iter_actions(ActionFilter(**filters), newest_first=False))
    assert oldest_first == list(reversed(found))


def test_sessions_from_the_catalog_match_the_scan(filled: Path) -> None:
    book = fresh(filled)
    via_catalog = [s.to_dict() for s in book.sessions(now=NOW)]
    assert catalog_file(filled).exists()
    records = iter_records(filled / "actionlog", base=filled)
    via_scan = [s.to_dict() for s in summarize(records, NOW, 30)]
    assert via_catalog == via_scan
    assert {s["status"] for s in via_catalog} == {"ended", "disconnected"}
    assert [s.id for s in book.sessions(project="odin", agent="PS", now=NOW)] == ["s2"]


def test_incremental_sync_reads_only_the_appended_bytes(filled: Path) -> None:
    book = fresh(filled)
    book.actions(limit=1)
    first = book.catalog.last_sync
    assert first is not None and first.rebuilt
    # one reading, whole seconds: the three appends (ms apart) go to the shard measured
    at = datetime.now(UTC).replace(microsecond=0)
    today = filled / "actionlog" / at.strftime("%Y/%m/%d") / "s2.jsonl"
    size = today.stat().st_size if today.exists() else 0
    session = fresh(filled)
    added = [session.log("commit", session="s2", agent="PS", project="odin",
                         context={"n": n}, now=at + timedelta(milliseconds=n))
             for n in range(3)]  # fmt: skip
    later = fresh(filled)
    assert [a["id"] for a in later.actions(limit=3)] == [a["id"] for a in reversed(added)]
    sync = later.catalog.last_sync
    assert sync is not None and not sync.rebuilt
    grown = today.stat().st_size - size
    assert sync.records_added == 3
    assert sync.bytes_read == grown
    again = fresh(filled)
    again.actions(limit=1)
    assert again.catalog.last_sync is not None
    assert (again.catalog.last_sync.bytes_read, again.catalog.last_sync.records_added) == (0, 0)


def _shard_line(root: Path, session: str, needle: str) -> tuple[Path, int, str]:
    for path in sorted((root / "actionlog").rglob(f"{session}.jsonl")):
        for number, text in enumerate(path.read_text().splitlines(), start=1):
            if needle in text:
                return path, number, text
    raise AssertionError(needle)


def test_union_merge_duplicates_count_once(filled: Path) -> None:
    book = fresh(filled)
    before = book.actions(limit=None)
    path = newest_shard_with_actions(filled, "s0", 2)
    lines = [t for t in path.read_text().splitlines(keepends=True) if '"kind":"action"' in t]
    with path.open("a") as handle:
        handle.write(lines[1])  # the same record again, as a union merge can leave it
    after = fresh(filled).actions(limit=None)
    assert len(after) == len(before)
    assert [a["id"] for a in after] == [a["id"] for a in before]


@pytest.mark.parametrize("hot", [True, False])
def test_shard_edited_in_place_is_detected(filled: Path, hot: bool) -> None:
    book = fresh(filled)
    book.actions(limit=1)
    session = "s2" if hot else "s0"  # s2 logged until yesterday; s0's days are all cold
    shards = [
        p
        for p in sorted((filled / "actionlog").rglob(f"{session}.jsonl"))
        if '"outcome":"success"' in p.read_text()
    ]
    path = shards[-1] if hot else shards[0]
    text = path.read_text()
    target = next(
        json.loads(t)
        for t in text.splitlines()
        if '"outcome":"success"' in t and '"kind":"action"' in t
    )
    edited = text.replace(
        json.dumps(target, separators=(",", ":"), sort_keys=True),
        json.dumps({**target, "outcome": "failure"}, separators=(",", ":"), sort_keys=True),
    )
    assert len(edited) == len(text) and edited != text
    with path.open("r+") as handle:  # in place: same inode, same size
        handle.write(edited)
    if hot:
        found = fresh(filled).actions(limit=None, outcome="failure")
    else:  # an old day in an unchanged directory: `lore catalog` stats every shard
        result = cli_run(["--root", str(filled), "catalog", "--json"])
        assert result.code == 0, result.err
        assert json.loads(result.out)["sync"]["shards_reindexed"] == 1
        found = fresh(filled).actions(limit=None, outcome="failure")
    assert target["id"] in [a["id"] for a in found]
    assert found == scanned(filled, outcome="failure")


def test_shard_that_shrinks_or_disappears_is_forgotten(filled: Path) -> None:
    fresh(filled).actions(limit=1)
    path = max((filled / "actionlog").rglob("s2.jsonl"))
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:-2]))
    assert fresh(filled).actions(limit=None) == scanned(filled)
    path.unlink()
    assert fresh(filled).actions(limit=None) == scanned(filled)
    assert (
        fresh(filled).sessions(now=NOW)[0].to_dict()
        == summarize(iter_records(filled / "actionlog", base=filled), NOW, 30)[0].to_dict()
    )


def test_catalog_of_an_older_schema_is_rebuilt(filled: Path) -> None:
    fresh(filled).actions(limit=1)
    conn = sqlite3.connect(catalog_file(filled))
    conn.execute("UPDATE meta SET value='1' WHERE key='schema'")
    conn.execute("DROP TABLE records")
    conn.execute("CREATE TABLE records(id TEXT)")  # an older, different layout
    conn.commit()
    conn.close()
    book = fresh(filled)
    assert book.actions(limit=None) == scanned(filled)
    assert book.catalog.last_sync is not None and book.catalog.last_sync.rebuilt
    conn = sqlite3.connect(catalog_file(filled))
    assert conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone() == (
        str(SCHEMA_VERSION),
    )
    conn.close()


def test_a_catalog_that_is_not_a_database_is_rebuilt(filled: Path) -> None:
    path = catalog_file(filled)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"this is not sqlite" * 100)
    book = fresh(filled)
    assert book.actions(limit=None) == scanned(filled)
    assert book.catalog.unavailable is None


def test_unusable_catalog_falls_back_to_a_scan(filled: Path) -> None:
    catalog_file(filled).mkdir(parents=True)  # a directory where the file should be
    book = fresh(filled)
    assert book.actions(limit=None) == scanned(filled)
    assert book.catalog.unavailable
    result = cli_run(["--root", str(filled), "catalog"])
    assert_one_error_line(result, "catalog cannot be used")


def test_disabled_catalog_is_never_created(filled: Path) -> None:
    (filled / ".lore" / "config.yaml").write_text("catalog:\n  enabled: false\n")
    book = fresh(filled)
    assert book.actions(limit=None, type="deploy") == scanned(filled, type="deploy")
    assert len(book.sessions(now=NOW)) == 3
    assert not catalog_file(filled).exists()


def test_torn_tail_then_completed(filled: Path) -> None:
    book = fresh(filled)
    book.actions(limit=1)
    path = newest_shard_with_actions(filled, "s2")  # a recent shard
    rec = [json.loads(t) for t in path.read_text().splitlines() if '"kind":"action"' in t][-1]
    rec.update(id=rec["id"][:-4] + "ZZZZ")
    raw = json.dumps(rec, separators=(",", ":"), sort_keys=True)
    with path.open("a") as handle:  # an agent's own line without its newline
        handle.write(raw)
    assert fresh(filled).actions(limit=None) == scanned(filled)
    with path.open("a") as handle:
        handle.write('\n{"broken": \n')
    problems: list[Any] = []
    found = fresh(filled).actions(limit=None, on_problem=problems.append)
    assert found == scanned(filled)
    assert rec["id"] in [a["id"] for a in found]
    assert [p.reason.split(":")[0] for p in problems] == ["invalid JSON"]


def test_catalog_command(filled: Path) -> None:
    result = cli_run(["--root", str(filled), "catalog", "--rebuild", "--json"])
    assert result.code == 0, result.err
    data = json.loads(result.out)
    total = len(scanned(filled))
    assert total >= 90  # 90 logged, plus what subscribers logged in reaction (drafts)
    assert data["actions"] == total and data["sessions"] >= 3 and data["shards"] >= 3
    assert data["sync"]["rebuilt"] and data["sync"]["records_added"] == data["records"]
    assert data["path"] == ".lore/cache/catalog.sqlite"
    human = lore("catalog", env=clean_env(filled))
    assert human.code == 0, human.err
    assert "synced" in human.out and f"{total} actions" in human.out


def test_catalog_command_needs_a_store(tmp_path: Path) -> None:
    assert_one_error_line(cli_run(["--root", str(tmp_path), "catalog"]), "lore init")


def test_no_sqlite_on_the_append_path(store: Path) -> None:
    code = (
        "import json, sys\nimport lorebook.cli\ncode = lorebook.cli.main(sys.argv[1:])\n"
        "print(json.dumps({'code': code, 'sqlite': 'sqlite3' in sys.modules}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, "log", "commit"],
        capture_output=True,
        text=True,
        env=clean_env(store),
        timeout=60,
    )
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report == {"code": 0, "sqlite": False}
    assert not catalog_file(store).exists()


def test_concurrent_processes_sync_and_append(filled: Path) -> None:
    """Readers and writers at once (real processes): no error, no lock-up, nothing lost."""
    env = clean_env(filled)
    before = len(scanned(filled))
    procs = []
    for n in range(4):
        procs.append(
            subprocess.Popen(
                [*LORE, "actions", "--json", "--limit", "1000"],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
        )
        procs.append(
            subprocess.Popen(
                [*LORE, "log", "commit", "--session", f"w{n}", "--agent", "PS"],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
        )
    procs.append(
        subprocess.Popen(
            [*LORE, "catalog", "--json"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
    )
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
        assert b"Traceback" not in err
    final = fresh(filled)
    assert final.actions(limit=None) == scanned(filled)
    assert final.catalog.unavailable is None
    assert len(final.actions(limit=None)) == before + 4


def test_a_long_history_is_scanned_until_lore_catalog_builds_it(filled: Path) -> None:
    (filled / ".lore" / "config.yaml").write_text("catalog:\n  auto_build_days: 3\n")
    book = fresh(filled)
    assert book.actions(limit=None) == scanned(filled)
    assert "run `lore catalog`" in str(book.catalog.unavailable)
    assert not catalog_file(filled).exists()
    listed = cli_run(["--root", str(filled), "actions", "--limit", "1"])
    assert listed.code == 0 and listed.out.strip()
    assert listed.err.strip() == (
        "note: scanned the shards: no catalog yet and more than 3 days "
        "of log: run `lore catalog` once to build it"
    )
    assert cli_run(["--root", str(filled), "catalog"]).code == 0
    assert cli_run(["--root", str(filled), "actions", "--limit", "1"]).err == ""
    again = fresh(filled)
    assert again.actions(limit=None) == scanned(filled)
    assert again.catalog.unavailable is None and catalog_file(filled).exists()


def test_import_lorebook_loads_no_sqlite_or_gzip() -> None:
    code = "import json, sys\nimport lorebook\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=clean_env(), timeout=60
    )
    modules = set(json.loads(done.stdout))
    assert "lorebook" in modules
    assert not modules & {"sqlite3", "_sqlite3", "gzip", "csv"}


def test_session_summaries_follow_appends_ends_and_late_records(filled: Path) -> None:
    fresh(filled).sessions(now=NOW)  # built
    book = fresh(filled)
    book.log("commit", session="s1", agent="MS", project="odin")
    book.end_session("s1", agent="MS", project="odin", reason="timeout")
    book.log(
        "plan", session="s0", agent="PS", project="consilio", now=NOW - timedelta(days=13, hours=2)
    )  # older than s0's last activity
    book.start_session(session_id="s9", agent="XS", project="new")
    via_catalog = [s.to_dict() for s in fresh(filled).sessions(now=NOW)]
    via_scan = [
        s.to_dict() for s in summarize(iter_records(filled / "actionlog", base=filled), NOW, 30)
    ]
    assert via_catalog == via_scan
    s1 = next(s for s in via_catalog if s["id"] == "s1")
    assert (s1["status"], s1["end_reason"], s1["action_count"]) == ("ended", "timeout", 31)


def test_shards_of_the_days_since_the_last_sync_are_checked(filled: Path) -> None:
    """Appends (not through the writer) to a day that was recent at the last sync are seen
    however long ago that sync was."""
    fresh(filled).actions(limit=1)
    conn = sqlite3.connect(catalog_file(filled))
    long_ago = (NOW - timedelta(days=13)).timestamp()
    conn.execute("UPDATE meta SET value=? WHERE key='synced_at'", (str(long_ago),))
    conn.commit()
    conn.close()
    path = sorted((filled / "actionlog").rglob("s1.jsonl"))[0]  # 13 days ago
    rec = [json.loads(t) for t in path.read_text().splitlines() if '"kind":"action"' in t][-1]
    rec.update(id=rec["id"][:-4] + "YYYY")
    with path.open("a") as handle:
        handle.write(json.dumps(rec, separators=(",", ":"), sort_keys=True) + "\n")
    found = fresh(filled).actions(limit=None, session="s1")
    assert rec["id"] in [a["id"] for a in found]
    assert found == scanned(filled, session="s1")
