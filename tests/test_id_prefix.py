"""Ids with a random suffix are hard to type: any unique prefix names a learning, draft, pattern
or session in every command that takes one (as git takes a hash prefix); an ambiguous prefix
is one line listing the candidates."""

from __future__ import annotations

import pytest

from conftest import assert_one_error_line, cli_run, git
from lorebook import Lorebook
from lorebook.errors import UsageError

DRAFT = "auto-epic-012-20261124-101500"
LESSON = "2026-11-22-rls-policy-blocks-insert"


def test_resolve_prefix() -> None:
    from lorebook.ids import resolve_prefix

    ids = ["abc1", "abc2", "abd", "x"]
    assert resolve_prefix("abd", ids, "id") == "abd"
    assert resolve_prefix("ab", ["abc"], "id") == "abc"
    assert resolve_prefix("abc1", ["abc1", "abc10"], "id") == "abc1"  # exact wins
    assert resolve_prefix("zz", ids, "id") is None
    with pytest.raises(UsageError) as err:
        resolve_prefix("a", [f"a{i}" for i in range(8)], "session")
    message = str(err.value)
    assert "ambiguous" in message and "a0, a1, a2, a3, a4 and 3 more" in message
    assert "\n" not in message


@pytest.fixture
def learned(book: Lorebook) -> Lorebook:
    book.learnings.new(title="RLS policy", publish=True, learning_id=LESSON)
    book.learnings.new(title="Another RLS one", publish=True, learning_id="2026-11-22-rls-other")
    book.learnings.new(title="Epic 12 draft", learning_id=DRAFT)
    book.learnings.new(title="Ports", publish=True, learning_id="port-conflict", kind="pattern",
                       solutions=[{"id": "s1", "text": "Allocate ports"}])  # fmt: skip
    git(book.root, "add", "-A")
    git(book.root, "commit", "-q", "-m", "learnings")
    return book


def test_learning_commands_take_a_unique_prefix(learned: Lorebook) -> None:
    root = str(learned.root)
    shown = cli_run(["--root", root, "show", "2026-11-22-rls-p", "--json"])
    assert shown.code == 0, shown.err
    assert shown.json()["id"] == LESSON  # type: ignore[index]
    applied = cli_run(["--root", root, "apply", "2026-11-22-rls-p", "--outcome", "success",
                         "--session", "s1", "--json"])  # fmt: skip
    assert applied.code == 0, applied.err
    assert applied.json()["context"]["learning"] == LESSON  # type: ignore[index]
    stats = cli_run(["--root", root, "stats", "2026-11-22-rls-p", "--json"])
    assert stats.code == 0, stats.err
    assert stats.json()["applications"] == 1  # type: ignore[index]
    recorded = cli_run(["--root", root, "pattern", "record", "port", "--solution", "s1",
                          "--success", "--session", "s1", "--json"])  # fmt: skip
    assert recorded.code == 0, recorded.err
    assert recorded.json()["context"]["learning"] == "port-conflict"  # type: ignore[index]
    history = cli_run(["--root", root, "history", "auto-epic", "--json"])
    assert history.code == 0, history.err
    assert history.json()[0]["path"].endswith(f"{DRAFT}.md")  # type: ignore[index]
    rejected = cli_run(["--root", root, "reject", "auto-epic", "--reason", "duplicate"])
    assert rejected.code == 0, rejected.err
    assert f"rejected {DRAFT}" in rejected.out


def test_an_ambiguous_or_unknown_prefix_is_one_line(learned: Lorebook) -> None:
    root = str(learned.root)
    ambiguous = cli_run(["--root", root, "show", "2026-11-22-rls"])
    line = assert_one_error_line(ambiguous, "ambiguous", LESSON, "2026-11-22-rls-other")
    assert "type more" in line
    missing = cli_run(["--root", root, "show", "nope"])
    assert_one_error_line(missing, "no learning or draft with id 'nope'")


def test_session_commands_take_a_unique_prefix(book: Lorebook) -> None:
    sid = book.start_session(session_id="review-7f3a9c2e41").id
    book.start_session(session_id="review-80aa")
    book.log("validate", session=sid, outcome="failure", epic="epic-9", error="2 tests fail")
    root = str(book.root)
    found = cli_run(["--root", root, "actions", "--session", "review-7f", "--json"])
    assert found.code == 0, found.err
    assert [a["session"] for a in found.json()] == [sid]  # type: ignore[union-attr]
    resumed = cli_run(["--root", root, "resume", "--session", "review-7f", "--json"])
    assert resumed.code == 0, resumed.err
    assert resumed.json()["session"]["id"] == sid  # type: ignore[index]
    ended = cli_run(["--root", root, "session", "end", "--session", "review-7f", "--json"])
    assert ended.code == 0, ended.err
    assert ended.json()["session"] == sid  # type: ignore[index]
    ambiguous = cli_run(["--root", root, "actions", "--session", "review-"])
    assert_one_error_line(ambiguous, "ambiguous", sid, "review-80aa")
