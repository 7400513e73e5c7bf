"""lorebook's own bookkeeping is not activity: reports leave it out unless asked, and a
preflight without a session logs nothing rather than inventing a session and project."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from conftest import clean_env, cli_run, lore
from lorebook import Lorebook
from lorebook.model import INTERNAL_TYPES

NOW = datetime.now(UTC).replace(microsecond=0)


@pytest.fixture
def busy(store: Path) -> Path:
    """One commit of work; six drafts, a search and an application of lorebook's own."""
    book = Lorebook.open(store, env={})
    s = book.start_session(
        session_id="w-1", agent="PS", project="consilio", now=NOW - timedelta(hours=3)
    )
    s.log("commit", now=NOW - timedelta(hours=2))
    for i in range(6):
        s.log("learning_draft", context={"n": i}, now=NOW - timedelta(hours=2, minutes=-i))
    s.log("search", now=NOW - timedelta(hours=1))
    s.log(
        "apply_learning", outcome="failure", error="unknown error", now=NOW - timedelta(minutes=30)
    )
    return store


def report_json(root: Path, *args: str) -> dict[str, Any]:
    result = cli_run(["--root", str(root), "report", "--json", "--days", "1", *args])
    assert result.code == 0, result.err
    return dict(json.loads(result.out))


def test_report_leaves_lorebook_bookkeeping_out(busy: Path) -> None:
    s = report_json(busy)["summary"]
    assert s["total_actions"] == 1
    assert s["most_common_action"] == {"type": "commit", "count": 1}
    assert report_json(busy)["recent_failures"] == []
    shown = report_json(busy, "--include-internal")
    assert shown["summary"]["total_actions"] == 9
    assert shown["summary"]["most_common_action"] == {"type": "learning_draft", "count": 6}
    assert [f["type"] for f in shown["recent_failures"]] == ["apply_learning"]
    assert shown["filters"]["include_internal"] is True


def test_the_api_and_the_text_report_agree(busy: Path) -> None:
    book = Lorebook.open(busy, env={})
    assert book.report(days=1)["summary"]["total_actions"] == 1
    assert book.report(days=1, include_internal=True)["summary"]["total_actions"] == 9
    text = lore("report", "--days", "1", env=clean_env(busy))
    assert text.code == 0 and "Total actions: 1\n" in text.out
    # internal actions are not counted, and the report says so: 1 counted + 8 left out = 9
    (note,) = [line for line in text.out.splitlines() if "learning_draft" in line]
    assert "--include-internal" in note and "bookkeeping" in note
    counted = text.out.replace(note, "")
    assert "learning_draft" not in counted


def test_internal_types_are_the_ones_lorebook_writes() -> None:
    assert {
        "learning_draft",
        "learning_promoted",
        "learning_rejected",
        "apply_learning",
        "search",
    } <= set(INTERNAL_TYPES)
    assert not {"commit", "deploy", "tool_call", "plan", "spawn"} & set(INTERNAL_TYPES)


def _sessions(root: Path) -> list[str]:
    return sorted(p.stem for p in (root / "actionlog").rglob("*.jsonl"))


def test_preflight_without_a_session_invents_none(store: Path) -> None:
    before = _sessions(store)
    result = lore(
        "preflight", "deploy the api container", env=clean_env(store), timeout=240
    )  # a first hybrid preflight builds the index
    assert result.code == 0, result.err
    assert _sessions(store) == before  # no agent/<dir> session, no project
    listed = lore("sessions", "--json", env=clean_env(store))
    assert listed.code == 0 and "auto" not in listed.out


def test_preflight_in_a_session_is_logged_there(store: Path) -> None:
    book = Lorebook.open(store, env={})
    book.start_session(session_id="s-9", agent="PS", project="consilio")
    env = {**clean_env(store), "LORE_SESSION": "s-9"}
    result = lore(
        "preflight", "deploy the api container", env=env, timeout=240
    )  # a first hybrid preflight builds the index
    assert result.code == 0, result.err
    searches = book.actions(type="search")
    assert [(a["session"], a["project"]) for a in searches] == [("s-9", "consilio")]
