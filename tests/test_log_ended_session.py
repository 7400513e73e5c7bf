"""`lore log` into a session that has ended: the action is kept (an agent's record is never
dropped) and one warning names the session and how to start a new one."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import clean_env, lore, shard_files, stored_actions
from lorebook import Lorebook


def _log(store: Path, *args: str, **env: str) -> tuple[int, str, str]:
    result = lore("log", *args, cwd=store, env=clean_env(store, **env))
    return result.code, result.out, result.err


def test_logging_into_an_ended_session_warns_once_per_action(store: Path) -> None:
    code, _, err = _log(store, "plan", "--session", "s-ended")
    assert code == 0 and err == ""  # an open session: silent
    lore("session", "end", "--session", "s-ended", cwd=store, env=clean_env(store))
    code, out, err = _log(store, "commit", "--session", "s-ended")
    assert code == 0 and out.strip()  # the action is stored, its id printed
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("lore: warning: session s-ended ended at ")
    assert "(normal)" in lines[0] and "lore session start" in lines[0]
    # still ended for the next action too (the end is not the last line any more)
    code, _, err = _log(store, "push", "--session", "s-ended")
    assert code == 0 and "session s-ended ended" in err
    # LORE_SESSION is an explicit session as well
    code, _, err = _log(store, "push", LORE_SESSION="s-ended")
    assert code == 0 and "session s-ended ended" in err
    assert [a["type"] for a in stored_actions(store)][-3:] == ["commit", "push", "push"]


def test_no_warning_for_open_restarted_or_turn_ended_sessions(store: Path) -> None:
    book = Lorebook.open(store, env={})
    book.start_session(session_id="s-again")
    book.end_session("s-again", reason="network_disconnect")
    book.start_session(session_id="s-again")  # started again with the same id
    assert _log(store, "plan", "--session", "s-again")[2] == ""
    book.log("tool_call", session="s-turn")
    book.end_session("s-turn", reason="stop")  # a Claude Code turn ended, not the session
    assert _log(store, "plan", "--session", "s-turn")[2] == ""
    assert _log(store, "plan")[2] == ""  # the automatic session


def test_the_end_event_is_found_past_a_torn_line_and_not_in_a_context(store: Path) -> None:
    book = Lorebook.open(store, env={})
    book.log("plan", session="s-ctx", context={"kind": "session", "event": "end"})
    assert _log(store, "plan", "--session", "s-ctx")[2] == ""  # a context is not an event
    book.end_session("s-ctx", reason="timeout")
    # the end event's: the session's newest shard (two when midnight UTC passed meanwhile)
    shard = max(p for p in shard_files(store) if p.name == "s-ctx.jsonl")
    with open(shard, "ab") as out:
        out.write(b'{"v":1,"kind":"action","id":"torn')  # a torn last line
    code, _, err = _log(store, "commit", "--session", "s-ctx")
    assert code == 0 and "session s-ctx ended" in err and "(timeout)" in err
    assert json.loads(shard.read_text().splitlines()[-1])["type"] == "commit"
