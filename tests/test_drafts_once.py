"""One draft per trigger, whatever the window: a validation streak is named by its first
failure even after the lookback window slid past it, a success starts a new streak, and a draft
asked for by hand of an epic or issue drafted before needs --force."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from conftest import clean_env, lore, stored_actions
from lorebook import Lorebook

T0 = datetime(2026, 5, 1, 10, 0, tzinfo=UTC)
ERRORS = (
    "refresh token accepted twice after rotation",
    "cookie domain wrong behind the reverse proxy",
    "session fixation test failed on login redirect",
    "rate limiter let 500 requests through in one second",
    "password reset link valid after use",
    "audit log missing the admin role change",
    "csrf token not checked on the settings form",
)


def _drafts(root: Path) -> list[str]:
    return sorted(p.stem for p in (root / "learnings" / "drafts").glob("*.md"))


def _drafting(root: Path, outcome: str) -> list[dict[str, Any]]:
    return [
        a for a in stored_actions(root) if a["type"] == "learning_draft" and a["outcome"] == outcome
    ]


def _fail(book: Lorebook, n: int, at: datetime, epic: str = "e-auth") -> dict[str, Any]:
    return book.log("validate", session="s", epic=epic, outcome="failure", error=ERRORS[n], now=at)


def test_a_window_sliding_along_one_streak_drafts_once(book: Lorebook) -> None:
    first = _fail(book, 0, T0)
    _fail(book, 1, T0 + timedelta(days=1))
    _fail(book, 2, T0 + timedelta(days=2))
    [draft] = _drafts(book.root)
    # 14 days on, the window (drafts.validate_lookback_days) starts after the first failure:
    # it holds the 2nd, 3rd and this one, three failures of the same streak
    _fail(book, 3, T0 + timedelta(days=14, hours=1))
    _fail(book, 4, T0 + timedelta(days=15, hours=1))  # and again, one day further on
    assert _drafts(book.root) == [draft]
    blocked = _drafting(book.root, "blocked")
    assert blocked and {b["context"]["trigger_key"] for b in blocked} == {
        f"validate:e-auth:{first['id']}"
    }
    assert blocked[-1]["error"] == (
        f"validate:e-auth:{first['id']} was drafted before as {draft}: not written"
    )


def test_a_new_streak_after_a_success_drafts_again(book: Lorebook) -> None:
    for n in range(3):
        _fail(book, n, T0 + timedelta(minutes=n))
    [first] = _drafts(book.root)
    book.log(
        "validate", session="s", epic="e-auth", outcome="success", now=T0 + timedelta(minutes=10)
    )
    for n in range(3, 5):
        _fail(book, n, T0 + timedelta(minutes=10 + n))
    assert _drafts(book.root) == [first]  # two in a row so far
    newest = _fail(book, 5, T0 + timedelta(minutes=20))
    assert len(_drafts(book.root)) == 2
    keys = [a["context"]["trigger_key"] for a in _drafting(book.root, "success")]
    assert len(set(keys)) == 2 and newest["id"] not in keys[-1]  # named by its first failure


def test_failures_with_a_success_between_are_no_streak(book: Lorebook) -> None:
    _fail(book, 0, T0)
    _fail(book, 1, T0 + timedelta(minutes=1))
    book.log(
        "validate", session="s", epic="e-auth", outcome="success", now=T0 + timedelta(minutes=2)
    )
    _fail(book, 2, T0 + timedelta(minutes=3))
    assert _drafts(book.root) == []


# -- by hand -------------------------------------------------------------------------------------
def _epic_work(book: Lorebook, epic: str, n: int, at: datetime) -> None:
    book.log("plan", session="s", epic=epic, context={"title": "Authentication"}, now=at)
    _fail(book, n, at + timedelta(minutes=1), epic=epic)
    book.log(
        "commit",
        session="s",
        epic=epic,
        context={"message": f"fix: {ERRORS[n]}"},
        now=at + timedelta(minutes=2),
    )
    book.log("validate", session="s", epic=epic, outcome="success", now=at + timedelta(minutes=3))


def test_from_epic_by_hand_after_an_automatic_draft_needs_force(store: Path) -> None:
    book = Lorebook.open(store, env={})
    book.install_subscribers()
    now = datetime.now(UTC) - timedelta(hours=3)
    _epic_work(book, "epic-012", 0, now)
    book.log("epic_complete", session="s", epic="epic-012", now=now + timedelta(minutes=5))
    [auto] = _drafts(store)
    for n in (1, 2, 3):  # more work since: the text differs well over 5 %
        _epic_work(book, "epic-012", n, now + timedelta(minutes=10 * n))
    env = clean_env(store)
    again = lore("draft", "from-epic", "epic-012", env=env)
    assert again.code == 0, again.err
    assert again.out.strip() == (
        f"not written: epic epic-012 was drafted before as {auto} (--force writes another); "
        "logged as a blocked learning_draft action"
    )
    assert _drafts(store) == [auto]
    data = json.loads(lore("draft", "from-epic", "epic-012", "--json", env=env).out)
    assert (data["status"], data["drafted_as"], data["can_force"]) == ("drafted", auto, True)
    assert _drafting(store, "blocked")[-1]["error"] == (
        f"epic epic-012 was drafted before as {auto}: not written"
    )
    forced = lore("draft", "from-epic", "epic-012", "--force", env=env)
    assert forced.code == 0 and forced.out.startswith("draft learnings/drafts/auto-epic-012-")
    [second] = [d for d in _drafts(store) if d != auto]
    # the hand-written draft counts too: the next run names it, the newest
    named = json.loads(lore("draft", "from-epic", "epic-012", "--json", env=env).out)
    assert named["drafted_as"] == second and len(_drafts(store)) == 2


def test_from_issue_by_hand_twice_writes_one_draft(store: Path) -> None:
    book = Lorebook.open(store, env={})
    book.log(
        "issue_resolved",
        session="s",
        issue="77",
        epic="epic-9",
        context={"labels": ["question"], "title": "Slow CI", "resolution": "Cache pip."},
    )
    env = clean_env(store)
    first = lore("draft", "from-issue", "77", env=env)
    assert first.code == 0 and first.out.startswith("draft learnings/drafts/auto-issue-77-")
    [draft] = _drafts(store)
    again = lore("draft", "from-issue", "77", env=env)
    assert again.code == 0 and f"issue 77 was drafted before as {draft}" in again.out
    assert _drafts(store) == [draft]
    # an issue's draft is not its epic's: the epic has none yet
    book.log("plan", session="s", epic="epic-9", context={"title": "CI"})
    epic = lore("draft", "from-epic", "epic-9", env=env)
    assert epic.code == 0 and epic.out.startswith("draft learnings/drafts/auto-epic-9-")
