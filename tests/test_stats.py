"""Figures derived from logged occurrences and applications, including after union merges."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from conftest import assert_one_error_line, clean_env, cli_run, git, lore, shard_files
from lorebook import Lorebook
from lorebook.knowledge.stats import collect, trend
from lorebook.timeutil import format_ts

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def new_pattern(book: Lorebook) -> str:
    learning = book.knowledge.new_pattern(
        title="RLS policy blocks INSERT",
        solutions=["Use the service-role key", "Use the Supabase CLI"],
        prevention=["Check RLS policies before using the anon key"],
        category="database",
        publish=True,
    )
    return learning.id


def record(
    book: Lorebook,
    pid: str,
    solution: str,
    ok: bool,
    minutes: float | None,
    via_search: bool = False,
) -> dict[str, Any]:
    return book.knowledge.record(
        pid, solution=solution, success=ok, minutes=minutes, via_search=via_search, session="s"
    )


def test_pattern_figures_from_logged_occurrences(book: Lorebook) -> None:
    pid = new_pattern(book)
    record(book, pid, "s1", True, 8, via_search=True)
    record(book, pid, "s1", True, 10)
    record(book, pid, "s1", False, 30)
    record(book, pid, "s2", True, 5)
    book.knowledge.apply(pid, outcome="success", epic="e-1")
    book.knowledge.apply(pid, outcome="failure")
    [entry] = book.knowledge.stats(pid)
    assert (entry["applications"], entry["successes"], entry["success_rate"]) == (2, 1, 0.5)
    pattern = entry["pattern"]
    assert pattern["occurrence_count"] == 4
    assert pattern["success_rate"] == 0.75
    assert pattern["avg_resolution_minutes"] == 13.25
    assert pattern["found_via_search"] == 1
    s1, s2 = pattern["solutions"]["s1"], pattern["solutions"]["s2"]
    assert (s1["times_applied"], s1["times_successful"], s1["success_rate"]) == (3, 2, 0.6667)
    assert s1["avg_resolution_minutes"] == 16.0 and s1["text"] == "Use the service-role key"
    assert (s2["times_applied"], s2["times_successful"], s2["success_rate"]) == (1, 1, 1.0)
    assert pattern["trend"] == "not enough data"  # 4 logged just now: a burst, not a trend
    assert pattern["last_seen"] is not None and entry["last_applied"] is not None
    # nothing was written into the learning file
    assert "times_applied" not in Path(str(book.learnings.get(pid).path)).read_text()


def test_documented_solutions_are_listed_before_any_occurrence(book: Lorebook) -> None:
    pid = new_pattern(book)
    [entry] = book.knowledge.stats(pid)
    assert entry["applications"] == 0 and entry["success_rate"] is None
    assert entry["pattern"]["occurrence_count"] == 0
    assert entry["pattern"]["solutions"]["s2"]["times_applied"] == 0
    assert entry["pattern"]["trend"] == "not enough data"


def _occurrence(i: int, ts: str, outcome: str = "success", **context: Any) -> dict[str, Any]:
    return {
        "kind": "action",
        "type": "occurrence",
        "id": f"{i:026d}",
        "ts": ts,
        "outcome": outcome,
        "context": {"learning": "p", "solution": "s1", **context},
    }


def test_collect_counts_each_action_id_once() -> None:
    ts = format_ts(NOW)
    one = _occurrence(1, ts, minutes=4)
    two = _occurrence(2, ts, "failure", minutes=6)
    figures = collect([one, two, dict(one), dict(two), dict(one)])["p"]
    assert (figures.occurrences, figures.occurrence_successes) == (2, 1)
    assert figures.to_dict(NOW)["pattern"]["avg_resolution_minutes"] == 5.0


@pytest.mark.parametrize(
    ("recent", "previous", "expected"),
    [
        (0, 0, "not enough data"),
        (1, 0, "not enough data"),
        (2, 0, "not enough data"),  # fewer than 5 occurrences is no evidence of a trend
        (8, 0, "increasing"),  # spread over two weeks
        (4, 3, "stable"),  # a change of one occurrence is noise
        (5, 4, "stable"),  # +25 % but only one more
        (10, 8, "increasing"),  # +25 % and two more
        (9, 8, "stable"),
        (0, 2, "not enough data"),
        (0, 5, "decreasing"),
        (6, 8, "decreasing"),
        (7, 8, "stable"),
    ],
)
def test_trend_threshold(recent: int, previous: int, expected: str) -> None:
    times = [format_ts(NOW - timedelta(days=1 + i % 28)) for i in range(recent)]
    times += [format_ts(NOW - timedelta(days=31 + i % 28)) for i in range(previous)]
    times.append(format_ts(NOW - timedelta(days=90)))  # outside both windows
    assert trend(times, NOW) == expected


def test_stats_after_a_union_merge_that_duplicated_lines(repo: Path, tmp_path: Path) -> None:
    """Two clones log occurrences to the same shard; `merge=union` keeps both sides of the
    conflicting hunk, so a line both sides had added appears twice. Stats count it once."""
    Lorebook.init(repo, env={})
    book = Lorebook.open(repo, env={})
    pid = new_pattern(book)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "store and pattern")
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(repo), str(other))
    shared = book.knowledge.record(pid, solution="s1", success=True, minutes=5, session="s")
    book.knowledge.record(pid, solution="s2", success=False, minutes=20, session="s")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "two occurrences")
    # the other clone got the shared line separately (a cherry-pick), after a line of its own
    theirs = Lorebook.open(other, env={})
    theirs.knowledge.record(pid, solution="s1", success=False, minutes=9, session="s")
    [shard] = [p for p in shard_files(other) if p.name == "s.jsonl"]
    line = json.dumps(shared, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    with shard.open("a") as handle:
        handle.write(line + "\n")
    git(other, "add", "-A")
    git(other, "commit", "-q", "-m", "one occurrence + the cherry-picked one")
    git(repo, "pull", "-q", "--no-rebase", "--no-edit", str(other), "main")
    [merged] = [p for p in shard_files(repo) if p.name == "s.jsonl"]
    ids = [json.loads(x)["id"] for x in merged.read_text().splitlines()]
    assert ids.count(shared["id"]) == 2  # the merge really duplicated the line
    result = lore("stats", pid, "--json", env=clean_env(repo))
    assert result.code == 0, result.err
    pattern = json.loads(result.out)["pattern"]
    assert pattern["occurrence_count"] == 3
    assert pattern["solutions"]["s1"]["times_applied"] == 2
    assert pattern["solutions"]["s1"]["times_successful"] == 1
    assert pattern["solutions"]["s2"]["times_applied"] == 1


def test_cli_stats_all_and_human_output(store: Path) -> None:
    book = Lorebook.open(store, env={})
    pid = new_pattern(book)
    lesson = book.learnings.new(title="Rotate refresh tokens", publish=True)
    env = clean_env(store)
    assert lore("apply", lesson.id, "--outcome", "success", "--epic", "e-1", env=env).code == 0
    assert (
        lore(
            "pattern", "record", pid, "--solution", "s2", "--failure", "--minutes", "12", env=env
        ).code
        == 0
    )
    result = cli_run(["stats", "--json"], env={"LORE_ROOT": str(store)})
    assert result.code == 0, result.err
    entries = {e["id"]: e for e in json.loads(result.out)}
    assert entries[lesson.id]["applications"] == 1 and "pattern" not in entries[lesson.id]
    assert entries[pid]["pattern"]["solutions"]["s2"]["times_applied"] == 1
    human = lore("stats", env=env)
    assert human.code == 0
    assert lesson.id in human.out and "s2: 0/1 (0%)" in human.out


def test_cli_stats_unknown_id(store: Path) -> None:
    assert_one_error_line(
        lore("stats", "no-such-learning", env=clean_env(store)),
        "no learning or draft with id 'no-such-learning'",
    )
    result = cli_run(["stats", "../etc", "--json"], env={"LORE_ROOT": str(store)})
    assert result.code == 1 and result.out == ""
    assert "invalid learning id" in json.loads(result.err)["error"]


def test_cli_stats_on_an_empty_store(store: Path) -> None:
    assert json.loads(cli_run(["stats", "--json"], env={"LORE_ROOT": str(store)}).out) == []
    human = cli_run(["stats"], env={"LORE_ROOT": str(store)})
    assert human.code == 0 and human.out.startswith("no learnings yet")


def test_applications_of_a_learning_without_a_file_are_reported(book: Lorebook) -> None:
    """Logged on another branch for a learning this checkout does not have."""
    book.log("apply_learning", session="s", context={"learning": "gone-elsewhere"})
    entries = {e["id"]: e for e in book.knowledge.stats()}
    assert entries["gone-elsewhere"]["status"] == "missing"
    assert entries["gone-elsewhere"]["applications"] == 1


def test_stats_warns_about_a_bad_learning_file_and_a_torn_line(store: Path) -> None:
    book = Lorebook.open(store, env={})
    lesson = book.learnings.new(title="Rotate refresh tokens", publish=True)
    book.knowledge.apply(lesson.id, outcome="success", session="s")
    (store / "learnings" / "broken.md").write_text("---\ntitle: [unclosed\n---\nbody\n")
    [shard] = shard_files(store)
    with shard.open("a") as handle:
        handle.write('{"v":1,"kind":"action","type":"apply_lea')  # a torn last line
    result = lore("stats", "--json", env=clean_env(store))
    assert result.code == 0, result.err
    assert [e["id"] for e in json.loads(result.out)] == [lesson.id]
    warnings = result.err.strip().splitlines()
    assert any("broken.md" in w for w in warnings)
    assert any("torn line" in w for w in warnings)
    assert all(w.startswith("lore: warning: skipped ") for w in warnings)


def test_stats_since_counts_only_the_log_from_then_on(book: Lorebook) -> None:
    """What `lore mcp` answers while the catalog is built: the figures of the last days."""
    learning = book.learnings.new(title="Close the fixture", publish=True).id
    now = datetime.now(UTC)
    for days, outcome in ((30, "success"), (20, "success"), (1, "failure")):
        book.log("apply_learning", session="s", outcome=outcome,
                 context={"learning": learning}, now=now - timedelta(days=days))  # fmt: skip
    every = book.knowledge.stats(learning)[0]
    recent = book.knowledge.stats(learning, since="7d")[0]
    listed = {e["id"]: e for e in book.knowledge.stats(since=now - timedelta(days=25))}
    assert (every["applications"], recent["applications"]) == (3, 1)
    assert recent["success_rate"] == 0.0
    assert listed[learning]["applications"] == 2
