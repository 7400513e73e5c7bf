"""Automatic drafts through the real writer: epic_complete, the 3rd failed validate,
bug issues; `lore draft from-epic|from-issue`; near-duplicates."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import assert_one_error_line, clean_env, cli_run, git, lore, stored_actions
from lorebook import Lorebook
from lorebook.knowledge.drafting import DraftSpec, write_draft
from lorebook.knowledge.similar import best_matches, jaccard, shingles, substance

RESOLUTION = (
    "The login page looped because the session cookie was set for the wrong domain after the "
    "proxy change. We now derive the cookie domain from the request host, added a regression "
    "test for the redirect chain, and documented the proxy header the app relies on."
)


def drafts(root: Path) -> list[Path]:
    return sorted((root / "learnings" / "drafts").glob("*.md"))


def draft_actions(root: Path) -> list[dict[str, Any]]:
    return [a for a in stored_actions(root) if a["type"] == "learning_draft"]


def epic_story(book: Lorebook, epic: str = "epic-12") -> None:
    s = book.start_session(agent="PS", project="consilio", session_id="s-1")
    s.log(
        "plan",
        epic=epic,
        context={
            "title": "Authentication",
            "estimated_hours": 4,
            "category": "security",
            "approach": "JWT in cookies",
        },
    )
    s.log("validate", epic=epic, outcome="failure", error="refresh token accepted twice")
    s.log("deploy", epic=epic, outcome="blocked", error="port 5000 already allocated")
    s.log(
        "commit",
        epic=epic,
        context={"message": "Revoke the token family on reuse", "commit_hash": "1a2b3c4d5e"},
    )
    s.log("validate", epic=epic, outcome="success")


def test_epic_complete_drafts_from_the_epic(book: Lorebook) -> None:
    git(book.root, "commit", "-q", "--allow-empty", "-m", "epic-12: rotate refresh tokens")
    epic_story(book)
    trigger = book.log("epic_complete", session="s-1", epic="epic-12", context={"actual_hours": 6})
    [path] = drafts(book.root)
    assert path.name.startswith("auto-epic-12-") and path.name.endswith(".md")
    learning = book.learnings.get(path.stem)
    assert (learning.status, learning.severity, learning.category) == ("draft", "high", "security")
    assert learning.title == "Learnings from Authentication (epic-12)"
    assert learning.source.epic == "epic-12" and "auto-draft" in learning.tags
    text = path.read_text()
    for needle in (
        "# Learning [AUTO-GENERATED]: Learnings from Authentication",
        "**Status:** DRAFT - Review and approve before publishing",
        "**Severity:** HIGH",
        "- [ ] Root cause correct?",
        f"**Auto-generated from:** epic-12 (epic_complete action {trigger['id']})",
        f"`lore promote {learning.id}`",
    ):
        assert needle in text
    sections = learning.sections()
    assert "refresh token accepted twice" in sections["Problem"]
    assert "port 5000 already allocated" in sections["Root Cause"]
    assert "epic-12: rotate refresh tokens" in sections["Solution"]  # from git
    assert "Revoke the token family on reuse (1a2b3c4)" in sections["Solution"]  # logged commit
    assert "Estimated 4 h, took 6 h (+50%)" in sections["Key Takeaway"]
    [logged] = draft_actions(book.root)
    assert logged["context"]["learning"] == learning.id and logged["session"] == "s-1"
    assert logged["ts"] > trigger["ts"]


def test_the_third_failed_validation_drafts_once(book: Lorebook) -> None:
    for i in range(5):
        book.log("validate", session="s", epic="e-1", outcome="failure", error=f"check {i}")
        book.log("validate", session="s", epic="e-2", outcome="failure", error=f"other {i}")
        book.log("validate", session="s", epic="e-3", outcome="success")
        expected = {0: 0, 1: 0}.get(i, 2)  # one per epic (e-1, e-2) from the 3rd on
        assert len(drafts(book.root)) == expected, i
    titles = sorted(book.learnings.get(p.stem).title for p in drafts(book.root))
    assert titles == ["Repeated validation failures in e-1", "Repeated validation failures in e-2"]


def test_bug_issue_with_a_long_resolution_drafts(book: Lorebook) -> None:
    context = {"labels": ["bug", "auth"], "title": "Login loops", "resolution": RESOLUTION}
    book.log("issue_resolved", session="s", issue="42", context=context)
    [path] = drafts(book.root)
    learning = book.learnings.get(path.stem)
    assert path.name.startswith("auto-issue-42-")
    assert learning.title == "Bug 42: Login loops" and learning.source.issue == "42"
    assert set(learning.tags) >= {"bug", "auth", "auto-draft"}
    assert "cookie was set for the wrong domain" in learning.sections()["Root Cause"]
    assert RESOLUTION in learning.sections()["Solution"]


@pytest.mark.parametrize(
    "context",
    [
        {"labels": ["enhancement"], "resolution": RESOLUTION},  # not a bug
        {"labels": ["bug"], "resolution": RESOLUTION[:200]},  # exactly 200: not longer
        {"labels": "docs, question", "resolution": RESOLUTION},
        {"resolution": RESOLUTION},
    ],
)
def test_issue_resolved_without_bug_or_long_resolution_drafts_nothing(
    book: Lorebook, context: dict[str, Any]
) -> None:
    book.log("issue_resolved", session="s", issue="7", context=context)
    assert drafts(book.root) == []


def test_labels_as_a_comma_string(book: Lorebook) -> None:
    book.log(
        "issue_resolved",
        session="s",
        issue="8",
        context={"labels": "Bug, ui", "resolution": RESOLUTION + " More."},
    )
    assert len(drafts(book.root)) == 1


def test_near_duplicate_is_logged_not_written(store: Path) -> None:
    book = Lorebook.open(store, env={})
    epic_story(book)
    env = clean_env(store)
    first = lore("draft", "from-epic", "epic-12", "--json", env=env)
    assert first.code == 0, first.err
    written = json.loads(first.out)
    assert written["status"] == "written" and written["supersedes"] == []
    # a second run is refused (drafted before); forced, the near-duplicate check still holds
    second = lore("draft", "from-epic", "epic-12", "--force", env=env)
    assert second.code == 0, second.err
    assert second.out.startswith(f"not written: near-duplicate of {written['id']} (100% similar)")
    assert [p.stem for p in drafts(store)] == [written["id"]]
    blocked = draft_actions(store)[-1]
    assert blocked["outcome"] == "blocked" and written["id"] in blocked["error"]
    assert blocked["context"]["duplicate_of"] == written["id"]


def test_similar_draft_gets_supersedes_suggested(book: Lorebook) -> None:
    words = " ".join(f"word{i}" for i in range(60))
    spec = DraftSpec(
        title="Cache invalidation",
        origin="test",
        problem=words,
        root_cause="stale keys",
        solution="purge on write",
        takeaway="purge",
    )
    store, log = book.learnings.store, book.action_log  # what the draft writer is given
    first = write_draft(store, log, spec)
    assert first.status == "written"
    changed = words.replace("word30", "changed30").replace("word45", "changed45")
    second = write_draft(store, log, DraftSpec(**{**spec.__dict__, "problem": changed}))
    assert second.status == "written" and second.learning is not None
    assert [m.learning for m in second.supersedes] == [first.learning.id]  # type: ignore[union-attr]
    assert 0.80 <= second.supersedes[0].similarity < 0.95
    assert second.learning.supersedes == [first.learning.id]  # type: ignore[union-attr]
    text = Path(str(second.learning.path)).read_text()
    assert f"- [ ] Supersedes {first.learning.id}" in text  # type: ignore[union-attr]
    unrelated = write_draft(
        store, log, DraftSpec(title="Other", origin="t", problem="entirely new")
    )
    assert unrelated.status == "written" and unrelated.supersedes == []


def test_similarity_measure() -> None:
    a = shingles("the quick brown fox jumps over the lazy dog")
    assert jaccard(a, a) == 1.0
    assert jaccard(a, shingles("completely different words here")) == 0.0
    assert shingles("two words") == frozenset({"two", "words"})
    body = "# Learning\n**Date:** 2026-01-01\n\n## Problem\nx y z\n\n## Review checklist\n- [ ] a"
    assert substance("T", body) == "T\n## Problem\nx y z\n\n"
    found = best_matches("a b c d e", [("same", "a b c d e"), ("other", "v w x y z")])
    assert [(m.learning, m.similarity) for m in found] == [("same", 1.0)]


def test_cli_from_issue(store: Path) -> None:
    book = Lorebook.open(store, env={})
    book.log(
        "issue_resolved",
        session="s",
        issue="77",
        context={"labels": ["question"], "title": "Slow CI", "resolution": "Cache pip."},
    )
    assert drafts(store) == []  # not a bug: no automatic draft ...
    result = cli_run(["draft", "from-issue", "77"], env={"LORE_ROOT": str(store)})
    assert result.code == 0, result.err  # ... but asked for explicitly
    assert result.out.startswith("draft learnings/drafts/auto-issue-77-")
    assert len(drafts(store)) == 1


def test_cli_draft_bad_input(store: Path) -> None:
    env = clean_env(store)
    assert_one_error_line(
        lore("draft", "from-epic", "epic-none", env=env), "no actions logged for epic 'epic-none'"
    )
    assert_one_error_line(
        lore("draft", "from-issue", "999", env=env), "no issue_resolved action for issue '999'"
    )
    assert_one_error_line(
        lore("draft", "from-epic", "e", "--since", "yesterday-ish", env=env), "--since"
    )
    Lorebook.open(store, env={}).log("issue_resolved", session="s", issue="5", context={})
    assert_one_error_line(lore("draft", "from-issue", "5", env=env), "no context.resolution")
    assert drafts(store) == []


def test_backdated_validations_count_in_their_own_time(book: Lorebook) -> None:
    """Failures logged with an old timestamp (an import, a replay) still draft on the 3rd,
    and a later failure of the same epic does not change what the 3rd one saw."""
    from datetime import UTC, datetime, timedelta

    start = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)
    for i in range(3):
        book.log(
            "validate",
            session="old",
            epic="e-old",
            outcome="failure",
            error=f"check {i}",
            now=start + timedelta(minutes=i),
        )
    [path] = drafts(book.root)
    assert book.learnings.get(path.stem).title == "Repeated validation failures in e-old"
    logged = draft_actions(book.root)[0]
    assert logged["ts"].startswith("2024-03-01T09:02")


def test_failed_validations_outside_the_window_do_not_count(book: Lorebook) -> None:
    from datetime import UTC, datetime, timedelta

    now = datetime(2026, 5, 20, 12, 0, tzinfo=UTC)
    for days in (20, 15):  # older than drafts.validate_lookback_days (14)
        book.log(
            "validate", session="w", epic="e-w", outcome="failure", now=now - timedelta(days=days)
        )
    book.log("validate", session="w", epic="e-w", outcome="failure", now=now)
    assert drafts(book.root) == []
    book.log("validate", session="w", epic="e-w", outcome="failure", now=now + timedelta(minutes=1))
    assert drafts(book.root) == []
    book.log("validate", session="w", epic="e-w", outcome="failure", now=now + timedelta(minutes=2))
    assert len(drafts(book.root)) == 1
