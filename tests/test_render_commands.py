"""The text of stats, learnings, catalog, retention, eval and the maintenance commands: pure
functions from the JSON shapes the API returns (no store, no git)."""

from __future__ import annotations

from typing import Any

from lorebook.problems import Problem
from lorebook.render.catalog import catalog_note, catalog_text
from lorebook.render.eval import eval_text
from lorebook.render.learnings import (
    draft_outcome,
    history_text,
    learning_text,
    learnings_table,
    promoted,
    rejected,
    relative,
    stale_text,
    written,
)
from lorebook.render.maintenance import check_text, exported, index_text, report_written
from lorebook.render.problems import skipped
from lorebook.render.retention import first_failure, retention_text
from lorebook.render.stats import stats_table

ROOT = "/repo"


def learning(**over: Any) -> dict[str, Any]:
    base = {
        "id": "2026-11-22-rls-blocks-insert-k3x9qa", "title": "RLS blocks INSERT",
        "status": "published", "kind": "lesson", "category": "database", "severity": "high",
        "tags": ["rls", "supabase"], "created": "2026-11-22", "anchors": ["db/policies.sql"],
        "supersedes": [], "body": "## Problem\nInserts fail.\n\n", "stale": False,
        "path": "/repo/learnings/2026-11-22-rls-blocks-insert-k3x9qa.md",
    }  # fmt: skip
    return base | over


def test_stats_table() -> None:
    assert stats_table([]).startswith("no learnings yet")
    entry = {"id": "p-1", "applications": 4, "success_rate": 0.75,
             "last_applied": "2026-11-22T10:30:00.000Z",
             "pattern": {"occurrence_count": 3, "success_rate": 2 / 3,
                         "last_seen": "2026-11-23T01:00Z",
                         "avg_resolution_minutes": 7.5, "trend": "improving",
                         "solutions": {"s1": {"times_successful": 2, "times_applied": 3,
                                              "success_rate": 2 / 3,
                                              "text": "Use the service key"}}}}  # fmt: skip
    lines = stats_table([entry]).splitlines()
    assert lines[0].split() == ["ID", "APPLIED", "SUCCESS", "LAST", "APPLIED"]
    assert lines[1].split() == ["p-1", "4", "75%", "2026-11-22", "10:30"]
    assert lines[2].strip() == ("pattern: 3 occurrence(s), 67% resolved, avg 7.5 min, last seen "
                                "2026-11-23, trend improving")  # fmt: skip
    assert lines[3].strip() == "s1: 2/3 (67%)  Use the service key"
    none = entry | {"success_rate": None, "last_applied": None, "pattern": None}
    assert stats_table([none]).splitlines()[1].split() == ["p-1", "4", "-", "-"]


def test_learnings_lists_and_one_learning() -> None:
    assert learnings_table([], "no drafts") == "no drafts"
    rows = learnings_table([learning(), learning(kind="pattern", status="draft", stale=True)], "")
    first, second = rows.splitlines()
    assert first.split() == ["2026-11-22-rls-blocks-insert-k3x9qa", "published", "RLS", "blocks",
                             "INSERT"]  # fmt: skip
    assert second.endswith("RLS blocks INSERT [stale]") and " pattern " in second
    assert written(learning(status="draft"), ROOT) == (
        "draft 2026-11-22-rls-blocks-insert-k3x9qa: "
        "learnings/2026-11-22-rls-blocks-insert-k3x9qa.md"
    )
    text = learning_text(learning(solutions=[{"id": "s1", "text": "use the service key"}],
                                  prevention=["check the policy"], stale=True), ROOT)  # fmt: skip
    lines = text.splitlines()
    assert lines[:2] == ["RLS blocks INSERT", ""]
    assert "status:     published (stale)" in lines and "tags:       rls, supabase" in lines
    assert "file:       learnings/2026-11-22-rls-blocks-insert-k3x9qa.md" in lines
    assert "solution:   s1: use the service key" in lines
    assert "prevention: check the policy" in lines
    assert not any(line.startswith("supersedes") for line in lines)  # empty facts are left out
    assert text.endswith("\n\n## Problem\nInserts fail.")


def test_paths_outside_the_root_stay_whole() -> None:
    assert relative("/elsewhere/x.md", ROOT) == "/elsewhere/x.md"
    assert relative(None, ROOT) is None


def test_stale_drafts_and_review() -> None:
    assert stale_text([]) == "no stale learnings"
    report = {"id": "l-1", "title": "T", "anchors": [
        {"anchor": "src/a.py", "reason": "changed", "commits": list("abcdefg")},
        {"anchor": "src/b.py", "reason": "deleted", "commits": []}]}  # fmt: skip
    assert stale_text([report]).splitlines() == [
        "l-1  T",
        "  src/a.py: changed (a, b, c, d, e)",
        "  src/b.py: deleted",
    ]
    duplicate = {"status": "duplicate", "duplicate_of": "l-0", "similarity": 0.91,
                 "supersedes": []}  # fmt: skip
    assert draft_outcome(duplicate, ROOT).startswith(
        "not written: near-duplicate of l-0 (91% similar)"
    )
    drafted = {"status": "written", "path": "/repo/learnings/drafts/x.md",
               "supersedes": [{"id": "l-0", "similarity": 0.6}]}  # fmt: skip
    assert draft_outcome(drafted, ROOT) == (
        "draft learnings/drafts/x.md  (supersedes suggested: l-0 (60%))"
    )
    result = {"id": "l-1", "commit": "0123456789abcdef", "branch": "lore/learning/l-1",
              "path": "learnings/l-1.md", "pushed": True, "remote": "origin",
              "pr_url": "https://example.invalid/pr/1"}  # fmt: skip
    assert promoted(result).splitlines() == [
        "published l-1 in 0123456789ab on branch lore/learning/l-1: learnings/l-1.md",
        "pushed lore/learning/l-1 to origin",
        "pull request: https://example.invalid/pr/1",
    ]
    assert "detached HEAD" in promoted(result | {"branch": None, "pushed": False, "pr_url": None})
    assert rejected({"id": "l-2", "commit": None, "reason": "dup"}) == (
        "rejected l-2 (it was never committed): dup"
    )
    assert history_text([]) == "no commits yet (the file was never committed)"
    entry = {"short": "abc1234", "date": "2026-11-22T10:00:00+00:00", "change": "A",
             "author": "Ann", "subject": "lore(learning): draft"}  # fmt: skip
    assert history_text([entry]) == "abc1234  2026-11-22  A  Ann  lore(learning): draft"


def test_catalog_text() -> None:
    result = {"path": ".lore/cache/catalog.sqlite", "actions": 12345, "records": 13000,
              "shards": 40, "archived_shards": 2, "sessions": 40, "skipped_lines": 1,
              "bytes": 2_500_000,
              "sync": {"rebuilt": True, "reason": "asked", "seconds": 0.123, "shards_read": 40,
                       "bytes_read": 1234567, "records_added": 13000}}  # fmt: skip
    assert catalog_text(result).splitlines() == [
        "rebuilt (asked) in 0.12 s: read 40 shard(s), 1,234,567 bytes, 13,000 new record(s)",
        ".lore/cache/catalog.sqlite: 12,345 actions in 13,000 records, 40 shards (2 archived), "
        "40 sessions, 1 skipped line(s), 2.5 MB",
    ]
    synced = result | {"sync": result["sync"] | {"rebuilt": False}}
    assert catalog_text(synced).startswith("synced in 0.12 s")
    assert catalog_note("no catalog yet") == "note: scanned the shards: no catalog yet"


def test_retention_text() -> None:
    result = {"action": "archive", "cutoff": "2026-08-26", "dry_run": True,
              "done": [{"shard": "2026/01/01/s.jsonl"}], "failed": []}  # fmt: skip
    assert retention_text(result).splitlines() == [
        "2026/01/01/s.jsonl",
        "1 shard(s) would be archived (days before 2026-08-26)",
    ]
    assert first_failure(result) is None
    failed = {"action": "prune", "cutoff": "2025-11-24", "dry_run": False, "done": [],
              "failed": [{"archive": "a.gz", "error": "denied"},
                         {"archive": "b.gz", "error": "x"}]}  # fmt: skip
    assert retention_text(failed) == "0 shard(s) deleted (days before 2025-11-24); 2 failed"
    assert first_failure(failed) == "a.gz: denied (and 1 more)"


def test_eval_text() -> None:
    metrics = {"recall@1": 0.5, "recall@5": 0.75, "mrr@10": 0.6123, "queries": 2}
    report = {"queries_file": "learnings/eval.yaml", "queries": 2,
              "metrics": {"hybrid": metrics, "words": metrics},
              "per_query": [{"query": "q1", "expected": ["a"], "line": 3, "rank": {"hybrid": 1}},
                            {"query": "q2", "expected": ["b", "c"], "line": 5,
                             "rank": {"hybrid": None}}]}  # fmt: skip
    lines = eval_text(report).splitlines()
    assert lines[0] == "learnings/eval.yaml: 2 golden queries"
    assert lines[3].split() == ["hybrid", "0.50", "0.75", "0.61"]
    assert lines[-2:] == ["Not in the hybrid top 5:", "  line 5: q2  (expected b, c)"]
    many = report | {"per_query": [report["per_query"][1]] * 12}
    assert eval_text(many, shown_misses=10).splitlines()[-1] == "  … 2 more (see --json)"


def test_maintenance_lines() -> None:
    check = {"ok": False, "records": 3, "shards": 1, "learnings": 2, "expertise": 0,
             "findings": [{"path": "a.jsonl", "line": 2, "reason": "bad"},
                          {"path": "b.md", "line": 0, "reason": "worse"}]}  # fmt: skip
    assert check_text(check).splitlines() == [
        "a.jsonl:2: bad",
        "b.md: worse",
        "checked 3 records in 1 shards, 2 learnings, 0 expertise files: 2 finding(s)",
    ]
    assert check_text(check | {"ok": True, "findings": []}).endswith(": ok")
    index = {"added": 2, "updated": 1, "removed": 0, "unchanged": 7, "skipped": [],
             "rebuilt": False}  # fmt: skip
    assert index_text(index, None) == (
        "Updated the index (keywords only): 2 added, 1 updated, 0 removed, 7 unchanged"
    )
    assert index_text(index | {"rebuilt": True, "skipped": ["x"]}, "m").endswith(", 1 skipped")
    manifest = {"record_count": 4, "path": "docs/t.jsonl", "manifest": "docs/t.jsonl.manifest.json",
                "redactions": {"values": 1}}  # fmt: skip
    assert exported(manifest) == ("exported 4 record(s) to docs/t.jsonl (manifest "
                                  "docs/t.jsonl.manifest.json; 1 value(s) redacted)")  # fmt: skip
    assert report_written({"unchanged": True, "path": "r.md", "total_actions": 3}) == (
        "unchanged r.md (3 actions)"
    )


def test_a_skipped_line_named_like_a_secret() -> None:
    assert skipped(Problem("actionlog/a.jsonl", 3, "torn line")) == (
        "skipped actionlog/a.jsonl:3: torn line"
    )
    secret = "ghp_" + "x9Kq2LmZ" * 4 + "Ab12"
    line = skipped(Problem(f"actionlog/{secret}.jsonl", 0, "unreadable"))
    assert secret not in line and line.endswith(".jsonl: unreadable")


def test_pattern_rca_session_and_expertise_lines() -> None:
    from lorebook.render.actions import session_ended
    from lorebook.render.expertise import validated
    from lorebook.render.learnings import pattern_written, rca_added

    pattern = learning(kind="pattern")
    assert pattern_written(pattern, ROOT) == (
        "2026-11-22-rls-blocks-insert-k3x9qa (learnings/2026-11-22-rls-blocks-insert-k3x9qa.md)"
    )
    assert rca_added(pattern | {"created_now": False, "path": None}, ROOT) == (
        "already present: 2026-11-22-rls-blocks-insert-k3x9qa (2026-11-22-rls-blocks-insert-k3x9qa)"
    )
    assert session_ended({"session": "s-1", "reason": "blocked"}) == "ended s-1 (blocked)"
    none = {"status": "no_expertise", "path": ".expertise/api.yaml"}
    valid = {"path": ".expertise/db.yaml", "changes_count": 0, "changes": []}
    assert validated([none, valid]) == (
        ".expertise/api.yaml: no file yet\n.expertise/db.yaml: valid, no changes"
    )
