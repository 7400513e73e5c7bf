"""Session status that is right: a session started again after its end is open, a Claude Code
turn (`stop`) is not the end of its session, and the catalog and a scan of the shards agree."""

from __future__ import annotations

import json
import sqlite3
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from conftest import clean_env, lore, stored
from lorebook import Lorebook

HOOK_SID = "9c1d2e3f-0a1b-4c2d-8e3f-abcdef012345"


def sessions_json(store: Path, *args: str) -> dict[str, dict[str, Any]]:
    result = lore("sessions", "--json", *args, env=clean_env(store))
    assert result.code == 0, result.err
    return {s["id"]: s for s in json.loads(result.out)}


def hook(event: str, store: Path, **fields: Any) -> None:
    """One real `lore hook` run, in the foreground so its record is there when it returns."""
    stdin = json.dumps({"session_id": HOOK_SID, "cwd": str(store), **fields})
    done = lore("hook", event, cwd=store, env=clean_env(LORE_HOOK_DETACH="0"), stdin=stdin)
    assert (done.code, done.err) == (0, "")


def test_a_session_started_again_after_its_end_is_active(store: Path) -> None:
    env = clean_env(store)
    assert lore("session", "start", "--id", "s-again", env=env).code == 0
    assert lore("session", "end", "--session", "s-again", env=env).code == 0
    assert sessions_json(store)["s-again"]["status"] == "ended"
    assert lore("session", "start", "--id", "s-again", env=env).code == 0
    info = sessions_json(store)["s-again"]
    assert (info["status"], info["ended"], info["end_reason"]) == ("active", None, None)
    assert lore("session", "end", "--session", "s-again", "--reason", "timeout", env=env).code == 0
    info = sessions_json(store)["s-again"]
    assert (info["status"], info["end_reason"]) == ("ended", "timeout")
    shown = lore("sessions", "--status", "active", env=env)
    assert shown.code == 0 and "s-again" not in shown.out


def test_a_claude_code_turn_is_not_the_end_of_its_session(store: Path) -> None:
    hook("session-start", store, source="startup")
    hook("stop", store, stop_hook_active=False)  # the agent's turn ended; a prompt may follow
    info = sessions_json(store)[HOOK_SID]
    assert (info["status"], info["ended"], info["end_reason"]) == ("active", None, None)
    hook("stop", store, stop_hook_active=False)
    hook("session-end", store, reason="prompt_input_exit")
    info = sessions_json(store)[HOOK_SID]
    assert (info["status"], info["end_reason"]) == ("ended", "user_exit")
    hook("stop", store, stop_hook_active=False)  # a late turn end does not undo the end
    assert sessions_json(store)[HOOK_SID]["status"] == "ended"


T0 = datetime(2026, 3, 4, 12, 0, tzinfo=UTC)


def _fill(book: Lorebook) -> None:
    """Every way a session's events can fall: each case ends at a known status."""
    at = T0 - timedelta(hours=6)

    def step(minutes: float) -> datetime:
        nonlocal at
        at += timedelta(minutes=minutes)
        return at

    book.start_session(session_id="plain-ended", now=step(1))
    book.log("plan", session="plain-ended", now=step(1))
    book.end_session("plain-ended", now=step(1))
    book.start_session(session_id="restarted", now=step(1))
    book.end_session("restarted", reason="network_disconnect", now=step(1))
    book.start_session(session_id="restarted", now=step(1))
    book.log("commit", session="restarted", now=step(1))
    book.start_session(session_id="twice-ended", now=step(1))
    book.end_session("twice-ended", now=step(1))
    book.start_session(session_id="twice-ended", now=step(1))
    book.end_session("twice-ended", reason="error", now=step(1))
    book.start_session(session_id="turns", session_type="hook", now=step(1))
    book.log("tool_call", session="turns", now=step(1))
    book.end_session("turns", reason="stop", now=step(1))
    book.start_session(session_id="turns-then-end", session_type="hook", now=step(1))
    book.end_session("turns-then-end", reason="stop", now=step(1))
    book.end_session("turns-then-end", reason="user_exit", now=step(1))
    book.start_session(session_id="fresh", now=T0 - timedelta(minutes=2))
    book.end_session("fresh", reason="stop", now=T0 - timedelta(minutes=1))


EXPECTED = {
    "plain-ended": ("ended", "normal"),
    "restarted": ("disconnected", None),
    "twice-ended": ("ended", "error"),
    "turns": ("disconnected", None),
    "turns-then-end": ("ended", "user_exit"),
    "fresh": ("active", None),
}


def _summaries(store: Path, *, catalog: bool) -> list[dict[str, Any]]:
    config = store / ".lore" / "config.yaml"
    config.write_text("" if catalog else "catalog:\n  enabled: false\n")
    book = Lorebook.open(store, env={})
    found = [s.to_dict() for s in book.sessions(now=T0)]
    assert (book.catalog.unavailable is None) == catalog, book.catalog.unavailable
    return found


def test_the_catalog_and_a_scan_give_every_session_the_same_status(store: Path) -> None:
    _fill(Lorebook.open(store, env={}))
    scanned = _summaries(store, catalog=False)
    assert {s["id"]: (s["status"], s["end_reason"]) for s in scanned} == EXPECTED
    assert _summaries(store, catalog=True) == scanned  # built from scratch
    book = Lorebook.open(store, env={})  # then folded in, record by record, as they come
    book.start_session(session_id="plain-ended", now=T0 - timedelta(seconds=30))
    book.end_session("fresh", reason="stop", now=T0 - timedelta(seconds=20))
    folded = _summaries(store, catalog=True)
    assert folded == _summaries(store, catalog=False)
    assert {s["id"]: s["status"] for s in folded}["plain-ended"] == "active"


def test_a_catalog_folded_by_the_old_rule_is_recomputed_once(store: Path) -> None:
    _fill(Lorebook.open(store, env={}))
    built = _summaries(store, catalog=True)
    path = store / ".lore" / "cache" / "catalog.sqlite"
    conn = sqlite3.connect(path)
    with conn:  # what an earlier version stored: the restart and the turn read as ends
        conn.execute("UPDATE sessions SET ended = last_activity, end_reason = 'stop'")
        conn.execute("DELETE FROM meta WHERE key = 'sessions_rule'")
    conn.close()
    assert _summaries(store, catalog=True) == built == _summaries(store, catalog=False)
    conn = sqlite3.connect(path)
    rule = conn.execute("SELECT value FROM meta WHERE key = 'sessions_rule'").fetchone()
    conn.close()
    assert rule is not None


# -- the edge hooks detach: the agent waits for the parent only, and nothing is lost -------------
def _records_of(store: Path, session: str) -> list[dict[str, Any]]:
    return [r for r in stored(store) if r["session"] == session]


def test_stop_and_session_end_detach_and_lose_nothing(store: Path) -> None:
    """Claude Code runs `stop` then `session-end` and exits at once: each hook's parent returns
    after reading its payload, its child writes. Run as Claude Code does (detached, nothing
    killed), then read every record back: a stop per turn, the end with its reason."""
    sid = "4f1e2d3c-0a1b-4c2d-8e3f-0123456789ab"
    env = clean_env()

    def run(event: str, **fields: Any) -> None:
        stdin = json.dumps({"session_id": sid, "cwd": str(store), **fields})
        done = lore("hook", event, cwd=store, env=env, stdin=stdin)
        assert (done.code, done.out, done.err) == (0, "", "")

    run("session-start", source="startup")  # a context hook: in the foreground
    for _ in range(3):  # three turns, the last one's stop racing the session's end
        run("stop", stop_hook_active=False)
    run("session-end", reason="prompt_input_exit")
    deadline = time.monotonic() + 60
    while len(_records_of(store, sid)) < 5 and time.monotonic() < deadline:
        time.sleep(0.1)
    records = _records_of(store, sid)
    ends = [r for r in records if r.get("event") == "end"]
    assert sorted(e["reason"] for e in ends) == ["stop", "stop", "stop", "user_exit"]
    for end in ends:  # each written by the child, after the agent moved on
        meta = end["meta"]
        assert 0 <= meta["overhead_ms"] <= meta["background_ms"], meta
    (info,) = [s for s in Lorebook.open(store, env={}).sessions() if s.id == sid]
    assert (info.status, info.end_reason) == ("ended", "user_exit")  # in whatever order written
    assert lore("check", env=clean_env(store)).code == 0
