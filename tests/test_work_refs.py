"""The issue a session works on, as its branch or a prompt names it, is captured and stated in
the next brief; shapes that only look like one (`release-2026`, `utf-8`, `#fff`) are not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import git, lore
from lorebook.log.workrefs import current_issue, issue_in_branch, issue_in_text
from lorebook.repoid import head_branch
from test_brief_content import call, resume
from test_hooks import generous, hook, payload


@pytest.mark.parametrize(
    ("branch", "issue"),
    [
        ("fix/42-login", "#42"),
        ("42-login-timeout", "#42"),
        ("issue-7", "#7"),
        ("gh-12", "#12"),
        ("feature/PROJ-123-login", "PROJ-123"),
        ("main", None),
        ("release-2026", None),
        ("dependabot/npm/lodash-4.17.21", None),
        ("python3.11-upgrade", None),
        ("claude/funny-name", None),
        (None, None),
    ],
)
def test_the_issue_a_branch_names(branch: str | None, issue: str | None) -> None:
    assert issue_in_branch(branch) == issue


@pytest.mark.parametrize(
    ("text", "issue"),
    [
        ("please fix #42 before the release", "#42"),
        ("see issue 17, it is the same crash", "#17"),
        ("https://github.com/acme/shop/issues/99 is back", "#99"),
        ("go on with PROJ-7", "PROJ-7"),
        ("the utf-8 decoding fails", None),
        ("make the header #fff", None),
        ("we have 3 bugs left", None),
        ("hashes are SHA-256", None),
    ],
)
def test_the_issue_a_prompt_names(text: str, issue: str | None) -> None:
    assert issue_in_text(text) == issue


def test_the_newest_named_issue_wins_over_the_branch() -> None:
    start = {"kind": "session", "event": "start", "meta": {"branch": "fix/42-x", "issue": "#42"}}
    prompt = {"kind": "action", "type": "prompt", "issue": "#50"}
    assert current_issue([start]) == ("#42", "fix/42-x")
    assert current_issue([start, prompt]) == ("#50", None)


def test_a_worktree_reads_its_own_branch(store: Path, tmp_path: Path) -> None:
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", "store")
    git(store, "worktree", "add", "-q", "-b", "fix/42-login", str(tmp_path / "wt"))
    assert head_branch(str(store)) == "main"
    assert head_branch(str(tmp_path / "wt")) == "fix/42-login"
    git(store, "checkout", "-q", "--detach")
    assert head_branch(str(store)) is None


def test_the_next_brief_names_the_issue_of_the_branch_then_of_the_prompt(store: Path) -> None:
    generous(store)
    git(store, "checkout", "-q", "-b", "fix/42-login")
    started = hook("session-start", payload("SessionStart", store, source="startup"), store)
    assert started.code == 0, started.err
    call(store, "Bash", {"command": "pytest -q tests/test_login.py"})
    state, text, brief = resume(store)
    assert (state["issue"], state["branch"]) == ("#42", "fix/42-login")
    assert "Issue: #42 (branch fix/42-login)" in text and "Issue: #42" in brief

    asked = payload("UserPromptSubmit", store, prompt="now the refund bug, PROJ-7, please")
    assert hook("user-prompt-submit", asked, store).code == 0
    call(store, "Bash", {"command": "pytest -q tests/test_refund.py"})
    state, text, _ = resume(store)
    assert (state["issue"], state["branch"]) == ("PROJ-7", None)
    assert "Issue: PROJ-7" in text
    done = lore("actions", "--type", "prompt", "--json", cwd=store)
    assert [a["issue"] for a in json.loads(done.out)] == ["PROJ-7"]
