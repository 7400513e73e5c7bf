"""A cold `lore resume` of a session whose shards did not change redacts nothing again: the
catalog's memo of shards with nothing to redact vouches for them (the one `lore actions` keeps).
Resume adds only shards it read whole, every line a record it checked; a secret, an appended
line, a damaged or repeated line, other redaction rules or a shard too fresh to trust its
identity are redacted as before, and never vouched for."""

from __future__ import annotations

import json
import sqlite3
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from clean_memo import count_redactions, trust_at_once
from conftest import clean_env, lore
from lorebook import Lorebook
from lorebook.log import resume_state

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
NOW = T0 + timedelta(hours=2)
TOKEN = "ghp_" + "Zq8Lr2Vt6Xw0Yb4Nc7Md1Pf5Hs9Jk3Ga8Ue"  # a GitHub token's shape


@pytest.fixture
def trusted_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    trust_at_once(monkeypatch)


@pytest.fixture
def redactions(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many records resume handed to the redactor."""
    return count_redactions(monkeypatch, resume_state)


def _session(store: Path, actions: int = 4) -> tuple[str, Path]:
    book = Lorebook.open(store, env={})
    session = book.start_session(agent="claude", project="lorebook", now=T0)
    for n in range(actions):
        book.log(
            "commit",
            session=session.id,
            outcome="success",
            epic="epic-3",
            context={"note": f"step {n}"},
            now=T0 + timedelta(minutes=n + 1),
        )
    book.catalog.sync()  # the catalog, with no shard verified yet
    book.close()
    shards = sorted((store / "actionlog").rglob(f"{session.id}.jsonl"))
    assert len(shards) == 1
    return session.id, shards[0]


def _resume(store: Path) -> dict[str, Any]:
    with Lorebook.open(store, env={}) as book:  # a new process: no memo of its own
        return book.resume(now=NOW)


def _memo(store: Path) -> set[str]:
    """The shards the memo vouches for as they are now."""
    conn = sqlite3.connect(store / ".lore" / "cache" / "catalog.sqlite")
    try:
        rows = conn.execute("SELECT path, ino, size, mtime_ns, ctime_ns FROM clean").fetchall()
    except sqlite3.OperationalError:
        return set()
    finally:
        conn.close()
    found = set()
    for path, *identity in rows:
        st = (store / path).stat()
        if identity == [st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]:
            found.add(path)
    return found


def _append(shard: Path, **changes: Any) -> None:
    """A line written by hand: the shard's last record with `changes`."""
    last = json.loads(shard.read_bytes().splitlines()[-1])
    with shard.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({**last, **changes}) + "\n")


def _new_id(old: str) -> str:
    return old[:-4] + ("ZZZZ" if old[-4:] != "ZZZZ" else "YYYY")


def test_a_second_cold_resume_redacts_nothing_of_unchanged_shards(
    store: Path, trusted_at_once: None, redactions: list[int]
) -> None:
    session, shard = _session(store)
    first = _resume(store)
    assert first["session"]["id"] == session
    assert redactions[0] == 5  # the start and four actions, checked once
    assert shard.relative_to(store).as_posix() in _memo(store)
    redactions[0] = 0
    again = _resume(store)
    assert redactions[0] == 0
    assert again == first


def test_a_line_appended_by_hand_with_a_secret_is_redacted(
    store: Path, trusted_at_once: None, redactions: list[int]
) -> None:
    _, shard = _session(store)
    _resume(store)  # remembered clean
    last = json.loads(shard.read_bytes().splitlines()[-1])
    _append(shard, id=_new_id(last["id"]), context={"note": f"pushed with {TOKEN}"})
    redactions[0] = 0
    shown = json.dumps(_resume(store))
    assert TOKEN not in shown and "[REDACTED" in shown
    assert redactions[0] == 6  # the shard changed: every record checked again
    assert shard.relative_to(store).as_posix() not in _memo(store)  # and not vouched for


def test_a_shard_holding_a_secret_is_never_vouched_for(
    store: Path, trusted_at_once: None, redactions: list[int]
) -> None:
    _, shard = _session(store)
    last = json.loads(shard.read_bytes().splitlines()[-1])
    _append(shard, id=_new_id(last["id"]), context={"note": f"token {TOKEN}"})
    for _ in range(2):
        redactions[0] = 0
        assert TOKEN not in json.dumps(_resume(store))
        assert redactions[0] == 6
    assert shard.relative_to(store).as_posix() not in _memo(store)
    listed = lore("actions", "--json", "--limit", "50", env=clean_env(store))
    assert listed.code == 0 and TOKEN not in listed.out


@pytest.mark.parametrize("line", ["damaged", "repeated id"])
def test_a_shard_with_a_bad_or_repeated_line_is_not_vouched_for(
    store: Path, trusted_at_once: None, line: str
) -> None:
    _, shard = _session(store)
    if line == "damaged":
        with shard.open("a", encoding="utf-8") as handle:
            handle.write('{"id": "torn\n')
    else:  # the same id again, now holding a secret: resume shows the first, checks neither
        first = json.loads(shard.read_bytes().splitlines()[1])
        _append(shard, id=first["id"], context={"note": f"token {TOKEN}"})
    with Lorebook.open(store, env={}) as book:
        shown = json.dumps(book.resume(now=NOW))
        listed = json.dumps(book.actions(limit=None))
    assert TOKEN not in shown and TOKEN not in listed
    assert shard.relative_to(store).as_posix() not in _memo(store)


def test_other_redaction_rules_are_not_vouched_for(
    store: Path, trusted_at_once: None, redactions: list[int]
) -> None:
    _session(store)
    _resume(store)
    (store / ".lore" / "config.yaml").write_text(
        "redaction:\n  extra_patterns: {step_word: 'step [0-9]'}\n"
    )
    redactions[0] = 0
    shown = _resume(store)
    assert redactions[0] == 5  # checked again under the new rules
    assert "step 1" not in json.dumps(shown)


def test_a_shard_changed_within_the_racy_window_is_not_remembered(store: Path) -> None:
    _, shard = _session(store)
    _resume(store)  # written this second: its identity may still change unseen
    assert shard.relative_to(store).as_posix() not in _memo(store)
    time.sleep(2.1)
    _resume(store)
    assert shard.relative_to(store).as_posix() in _memo(store)


def test_the_cold_command_answers_the_same_with_the_memo(store: Path) -> None:
    _session(store)
    time.sleep(2.1)  # past the racy window, so the first run remembers the shard
    env = clean_env(store)
    first = lore("resume", "--json", env=env)
    assert first.code == 0, first.err
    assert _memo(store)
    again = lore("resume", "--json", env=env)
    assert again.code == 0 and json.loads(again.out) == json.loads(first.out)
