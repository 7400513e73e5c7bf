"""Staleness: anchors changed or deleted in commits after the learning's own last commit."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import cli_run, git
from lorebook import Lorebook


@pytest.fixture
def anchored(book: Lorebook) -> Lorebook:
    root = book.root
    (root / "src").mkdir()
    (root / "src" / "db.py").write_text(
        "def connect():\n    return 1\n\n\ndef other():\n    return 2\n"
    )
    (root / "src" / "policy.sql").write_text("create policy p;\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "code")
    book.learnings.new(
        title="Connect retries", publish=True, learning_id="connect", anchors=["src/db.py#connect"]
    )
    book.learnings.new(
        title="RLS policy", publish=True, learning_id="rls", anchors=["src/policy.sql"]
    )
    book.learnings.new(title="Whole folder", publish=True, learning_id="folder", anchors=["src/"])
    book.learnings.new(title="No anchors", publish=True, learning_id="free")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "learnings")
    return book


def _stale(book: Lorebook) -> dict[str, list[tuple[str, str]]]:
    return {r.id: [(c.anchor, c.reason) for c in r.anchors] for r in book.learnings.stale()}


def test_nothing_is_stale_right_after_the_learning_was_committed(anchored: Lorebook) -> None:
    assert _stale(anchored) == {}
    assert [x.stale for x in anchored.learnings.query(stale=False)] == [False] * 4


def test_a_change_after_the_learning_marks_it_stale(anchored: Lorebook) -> None:
    root = anchored.root
    (root / "src" / "policy.sql").write_text("create policy p with check (true);\n")
    git(root, "commit", "-q", "-am", "loosen policy")
    short = git(root, "rev-parse", "--short", "HEAD").strip()
    reports = {r.id: r for r in anchored.learnings.stale()}
    assert set(reports) == {"rls", "folder"}
    assert reports["rls"].anchors[0].reason == "changed"
    assert reports["rls"].anchors[0].commits == [short]
    assert [x.id for x in anchored.learnings.query(stale=True)] == ["folder", "rls"]
    # rewriting the learning (a newer commit of it) makes it fresh again
    learning = anchored.learnings.get("rls")
    learning.body = "## Problem\nUpdated after the policy change.\n"
    anchored.learnings.store.write(learning)
    git(root, "commit", "-q", "-am", "refresh rls lesson")
    assert set(_stale(anchored)) == {"folder"}


def test_symbol_anchors_count_only_changes_that_mention_the_symbol(anchored: Lorebook) -> None:
    root = anchored.root
    db = root / "src" / "db.py"
    db.write_text(db.read_text().replace("return 2", "return 3"))
    git(root, "commit", "-q", "-am", "touch other()")
    assert "connect" not in _stale(anchored)
    db.write_text(
        db.read_text().replace(
            "def connect():\n    return 1", "def connect():\n    return retry(1)"
        )
    )
    git(root, "commit", "-q", "-am", "retry connect()")
    assert _stale(anchored)["connect"] == [("src/db.py#connect", "changed")]


def test_deleted_and_missing_anchors(anchored: Lorebook) -> None:
    root = anchored.root
    git(root, "rm", "-q", "src/policy.sql")
    git(root, "commit", "-q", "-m", "drop policy")
    anchored.learnings.new(title="Typo", publish=True, learning_id="typo", anchors=["src/nope.py"])
    anchored.learnings.new(
        title="Odd",
        publish=True,
        learning_id="odd",
        anchors=["../elsewhere.py", "/etc/hosts", "./src/db.py"],
    )
    stale = _stale(anchored)
    assert stale["rls"] == [("src/policy.sql", "deleted")]
    assert stale["typo"] == [("src/nope.py", "missing")]
    assert stale["odd"] == [
        ("../elsewhere.py", "outside the repository"),
        ("/etc/hosts", "outside the repository"),
    ]


def test_stale_cli_json_and_human(anchored: Lorebook) -> None:
    root = anchored.root
    (root / "src" / "policy.sql").write_text("drop policy p;\n")
    git(root, "commit", "-q", "-am", "drop it")
    result = cli_run(["--root", str(root), "stale", "--json"])
    assert result.code == 1, result.err  # stale learnings found: fails a CI gate
    data = result.json()
    assert isinstance(data, list)
    assert [r["id"] for r in data] == ["folder", "rls"]
    assert data[1]["anchors"][0]["anchor"] == "src/policy.sql"
    human = cli_run(["--root", str(root), "stale"])
    assert human.code == 1, human.err
    assert "rls  RLS policy" in human.out and "src/policy.sql: changed" in human.out
    listed = cli_run(["--root", str(root), "learnings", "--stale"])
    assert [line.split()[0] for line in listed.out.splitlines()] == ["folder", "rls"]
    shown = cli_run(["--root", str(root), "show", "rls", "--json"])
    assert shown.json()["stale"] is True  # type: ignore[index]


def test_no_stale_learnings_outside_history(tmp_path: Path) -> None:
    root = tmp_path / "fresh"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    book = Lorebook.init(root, env={})
    book.learnings.new(title="x", publish=True, anchors=["a.py"])
    assert book.learnings.stale() == []  # no commits yet: nothing to compare with
    fresh = cli_run(["--root", str(root), "stale"])
    assert fresh.code == 0 and fresh.out.strip() == "no stale learnings"


def test_uncommitted_edits_to_an_anchor_count(anchored: Lorebook) -> None:
    root = anchored.root
    (root / "src" / "policy.sql").write_text("create policy p with check (true);\n")
    stale = {r.id: r for r in anchored.learnings.stale()}
    assert set(stale) == {"rls", "folder"}  # not committed: the working tree counts
    change = stale["rls"].anchors[0]
    assert (change.reason, change.uncommitted, change.commits) == ("changed", True, [])
    git(root, "add", "src/policy.sql")  # staged: still a change against HEAD
    assert set(_stale(anchored)) == {"rls", "folder"}
    human = cli_run(["--root", str(root), "stale"])
    assert human.code == 1 and "src/policy.sql: changed (uncommitted)" in human.out
    data = cli_run(["--root", str(root), "stale", "--json"]).json()
    assert data[1]["anchors"][0]["uncommitted"] is True  # type: ignore[index]


def test_uncommitted_symbol_edits_deletions_and_new_files(anchored: Lorebook) -> None:
    root = anchored.root
    db = root / "src" / "db.py"
    db.write_text(db.read_text().replace("return 2", "return 3"))  # other(): not the symbol
    assert set(_stale(anchored)) == {"folder"}
    db.write_text(db.read_text().replace("return 1", "return retry(1)"))  # connect()'s hunk
    # a hunk header names the function (`@@ ... def connect():`), like a commit would
    assert _stale(anchored)["connect"] == [("src/db.py#connect", "changed")]
    git(root, "checkout", "-q", "--", "src/db.py")
    db.unlink()
    assert _stale(anchored)["connect"] == [("src/db.py#connect", "deleted")]
    git(root, "checkout", "-q", "--", "src/db.py")
    assert _stale(anchored) == {}
    (root / "src" / "new.py").write_text("x = 1\n")  # an untracked file in an anchored folder
    assert set(_stale(anchored)) == {"folder"}


def test_a_learning_edited_in_the_same_change_is_fresh(anchored: Lorebook) -> None:
    root = anchored.root
    (root / "src" / "policy.sql").write_text("create policy p with check (true);\n")
    learning = anchored.learnings.get("rls")
    learning.body = "## Problem\nUpdated with the policy change.\n"
    anchored.learnings.store.write(learning)  # uncommitted, like the code change
    assert set(_stale(anchored)) == {"folder"}
    (root / "src" / "policy.sql").unlink()  # but a deleted anchor is still a deleted anchor
    assert _stale(anchored)["rls"] == [("src/policy.sql", "deleted")]


def test_an_anchor_that_is_not_utf8_text_is_read_through(anchored: Lorebook) -> None:
    """git's output is bytes; a Latin-1 anchor (its diff and its text at HEAD) is compared as
    text with the odd bytes kept, never a decoding error."""
    root = anchored.root
    legacy = root / "src" / "legacy.c"
    legacy.write_bytes(b"/* caf\xe9 */\nint connect(void);\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "legacy")
    anchored.learnings.new(
        title="Legacy", publish=True, learning_id="legacy", anchors=["src/legacy.c#connect"]
    )
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "legacy lesson")
    assert "legacy" not in _stale(anchored)
    legacy.write_bytes(b"/* na\xefve */\nint connect(int retries);\n")
    assert _stale(anchored)["legacy"] == [("src/legacy.c#connect", "changed")]
    git(root, "commit", "-q", "-am", "connect retries")
    assert _stale(anchored)["legacy"] == [("src/legacy.c#connect", "changed")]
    legacy.write_bytes(b"/* gone \xff */\n")
    git(root, "commit", "-q", "-am", "drop connect")
    assert _stale(anchored)["legacy"] == [("src/legacy.c#connect", "changed")]
