"""The prompt hook records what the user asked (redacted, cut; `hooks.record_prompts` turns it
off) and the next brief says it: the real `lore hook` in subprocesses, then `lore resume`."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import lore, stored_actions
from test_hooks import GENEROUS, SECRET, SID, files_text, generous, hook, payload

ASKED = f"Make the deploy script read the token {SECRET} from the vault, not the env file"


def test_every_prompt_is_a_redacted_record_without_a_matching_lesson(store: Path) -> None:
    generous(store)
    done = hook("user-prompt-submit", payload("UserPromptSubmit", store, prompt=ASKED), store)
    assert (done.code, done.out, done.err) == (0, "", "")  # no lesson: nothing injected
    (record,) = [a for a in stored_actions(store) if a["type"] == "prompt"]
    assert record["session"] == SID and "overhead_ms" in record["meta"]
    text = record["context"]["prompt"]
    assert text.startswith("Make the deploy script read the token ") and "vault" in text
    assert SECRET not in files_text(store)
    long = payload("UserPromptSubmit", store, prompt="explain " * 200 + SECRET)
    assert hook("user-prompt-submit", long, store).code == 0
    newest = [a for a in stored_actions(store) if a["type"] == "prompt"][-1]
    assert len(newest["context"]["prompt"]) == 500 and SECRET not in files_text(store)


def test_the_switch_off_stores_no_prompt(store: Path) -> None:
    (store / ".lore" / "config.yaml").write_text(GENEROUS + "  record_prompts: false\n")
    done = hook("user-prompt-submit", payload("UserPromptSubmit", store, prompt=ASKED), store)
    assert (done.code, done.out) == (0, "")
    assert [a for a in stored_actions(store) if a["type"] == "prompt"] == []


def test_the_brief_states_the_last_prompt(store: Path) -> None:
    generous(store)
    first = payload("UserPromptSubmit", store, prompt="First: list the failing tests")
    assert hook("user-prompt-submit", first, store).code == 0
    assert (
        hook("user-prompt-submit", payload("UserPromptSubmit", store, prompt=ASKED), store).code
        == 0
    )
    state = json.loads(lore("resume", "--json", cwd=store).out)
    assert state["last_prompt"].startswith("Make the deploy script read the token ")
    assert SECRET not in state["last_prompt"]
    assert all(a["type"] != "prompt" for a in state["recent_actions"])  # not the work done
    text = lore("resume", cwd=store).out
    assert "Last asked: Make the deploy script read the token " in text
    start = payload("SessionStart", store, source="startup", session_id="next-session-1")
    brief = json.loads(hook("session-start", start, store).out)
    context = brief["hookSpecificOutput"]["additionalContext"]
    assert "Last asked: Make the deploy script" in context and SECRET not in context


def test_a_session_without_prompts_has_none(store: Path) -> None:
    from lorebook import Lorebook

    Lorebook.open(store, env={}).start_session(session_id="quiet-1").log("plan")
    state = json.loads(lore("resume", "--json", cwd=store).out)
    assert state["last_prompt"] is None
    assert "Last asked" not in lore("resume", cwd=store).out
