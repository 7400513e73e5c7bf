"""`ActionLog`: the log collaborator works on its own, without a `Lorebook` around it."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from lorebook.errors import UsageError
from lorebook.log.actionlog import ActionLog
from lorebook.log.append import Appender

T0 = datetime(2026, 3, 4, 12, 0, tzinfo=UTC)


def test_appends_and_reads_without_the_facade(store: Path) -> None:
    log = ActionLog(Appender.open(store, env={"LORE_AGENT": "claude"}))
    session = log.start(project="api", now=T0)["session"]
    first = log.log("commit", session=session, epic="epic-1", now=T0)
    log.log("deploy", session=session, outcome="failure", error="port taken", now=T0)
    log.end(session, now=T0)
    assert [a["type"] for a in log.actions(epic="epic-1")] == ["commit"]
    assert log.actions(outcome="failure")[0]["error"] == "port taken"
    assert log.actions(limit=1)[0]["type"] in {"deploy", "commit"}
    assert first["agent"] == "claude"
    (info,) = log.sessions(now=T0)
    assert (info.id, info.project, info.status) == (session, "api", "ended")


def test_refuses_a_bad_limit_and_status(store: Path) -> None:
    log = ActionLog(Appender.open(store, env={}))
    with pytest.raises(UsageError, match="limit must be a positive number"):
        log.actions(limit=0)
    with pytest.raises(UsageError, match="status 'asleep' is not one of"):
        log.sessions(now=T0, status="asleep")


def test_subscribers_see_every_stored_record(store: Path) -> None:
    log = ActionLog(Appender.open(store, env={}))
    seen: list[str] = []
    log.on("action", lambda record: seen.append(str(record.get("type"))))
    log.log("commit", session="s-1", now=T0)
    assert seen == ["commit"]


def test_scan_note_says_why_reads_scanned_the_shards(store: Path) -> None:
    """`lore` prints this note once (tests/test_catalog.py has the CLI side)."""
    log = ActionLog(Appender.open(store, env={}))
    log.log("commit", session="s-1", now=T0)
    assert log.scan_note() is None  # nothing read yet: no catalog opened, nothing to say
    log.actions()
    assert log.scan_note() == log.catalog.unavailable
