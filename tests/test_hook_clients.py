"""`lore hook CLIENT EVENT`: every agent's payload lands as the same record, its context comes
back in the form that client reads, and a call reported twice is logged once. The payloads are
the shapes the real clients sent (docs of each client's e2e run: Codex 0.171, Gemini CLI 0.61,
Copilot CLI 1.0.102, Cline 3.0.65, OpenCode 1.18.33; Cursor from its public hooks docs)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import LORE, clean_env, lore, stored, stored_actions
from lorebook import Lorebook
from lorebook.hooks.clients import CLIENTS
from lorebook.hooks.entry import CLIENT_NAMES
from test_hooks import SECRET, generous, publish


def run(client: str, event: str, payload: dict[str, Any], store: Path, **env: str) -> Any:
    return lore(
        "hook",
        client,
        event,
        cwd=store,
        env=clean_env(LORE_HOOK_DETACH="0", **env),
        stdin=json.dumps(payload),
    )


def codex_tool(store: Path, command: str, call: str = "call_3") -> dict[str, Any]:
    return {
        "session_id": "01a21e32-aaaa-bbbb-cccc-000000000001",
        "turn_id": "t1",
        "transcript_path": str(store / "rollout.jsonl"),
        "cwd": str(store),
        "hook_event_name": "PostToolUse",
        "model": "fake-model",
        "permission_mode": "bypassPermissions",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "tool_response": "hello-from-fake\n",
        "tool_use_id": call,
    }


# each client's real PostToolUse-like payload, and the command it ran
TOOL_CALLS: dict[str, tuple[str, Any]] = {
    "codex": ("PostToolUse", lambda s: codex_tool(s, "echo hello-from-fake")),
    "gemini": (
        "AfterTool",
        lambda s: {
            "session_id": "e9efec34-0000-4000-8000-000000000002",
            "transcript_path": str(s / "chat.jsonl"),
            "cwd": str(s),
            "hook_event_name": "AfterTool",
            "timestamp": "2026-11-27T18:09:11.881Z",
            "tool_name": "run_shell_command",
            "tool_input": {"command": "echo hello-from-fake", "description": "say hello"},
            "tool_response": {"llmContent": "Output: hello-from-fake", "returnDisplay": "hello"},
        },
    ),
    "copilot": (
        "postToolUse",
        lambda s: {
            "sessionId": "34f836af-0000-4000-8000-000000000003",
            "timestamp": 1795802956221,
            "cwd": str(s),
            "toolName": "bash",
            "toolArgs": {"command": "echo hello-from-fake", "description": "say hello"},
            "toolResult": {"resultType": "success", "textResultForLlm": "hello-from-fake\n"},
        },
    ),
    "cline": (
        "PostToolUse",
        lambda s: {
            "clineVersion": "",
            "timestamp": "2026-11-27T18:09:41.093Z",
            "taskId": "conv_1795",
            "sessionContext": {"rootSessionId": "r1"},
            "workspaceRoots": [str(s)],
            "workspaceInfo": {"rootPath": str(s), "hint": "work"},
            "userId": "unknown",
            "agent_id": "agent_1",
            "parent_agent_id": None,
            "hookName": "tool_result",
            "iteration": 1,
            "tool_result": {
                "id": "call_2",
                "name": "run_commands",
                "input": {"commands": ["echo hello-from-fake"]},
                "output": [{"query": "echo hello-from-fake", "result": "hello\n", "success": True}],
                "durationMs": 15,
            },
            "postToolUse": {
                "toolName": "run_commands",
                "parameters": {"commands": '["echo hello-from-fake"]'},
                "result": "[{}]",
                "success": True,
                "executionTimeMs": 15,
            },
        },
    ),
    "cursor": (
        "afterShellExecution",
        lambda s: {
            "hook_event_name": "afterShellExecution",
            "conversation_id": "conv-123",
            "generation_id": "gen-456",
            "workspace_roots": [str(s)],
            "cursor_version": "2.0.77",
            "command": "echo hello-from-fake",
            "cwd": str(s),
            "output": "hello\n",
            "duration": 150,
        },
    ),
    "opencode": (
        "tool.execute.after",
        lambda s: {
            "directory": str(s),
            "input": {
                "tool": "bash",
                "sessionID": "ses_de1ccc72",
                "callID": "call_3",
                "args": {"command": "echo hello-from-fake"},
            },
            "output": {
                "title": "echo hello-from-fake",
                "output": "hello-from-fake\n",
                "metadata": {"output": "hello-from-fake\n", "exit": 0, "truncated": False},
            },
        },
    ),
}


@pytest.mark.parametrize("client", sorted(TOOL_CALLS))
def test_each_clients_tool_call_lands_as_the_same_record(store: Path, client: str) -> None:
    event, make = TOOL_CALLS[client]
    done = run(client, event, make(store), store)
    assert (done.code, done.out, done.err) == (0, "", "")
    (action,) = stored_actions(store)
    assert action["type"] == "tool_call" and action["outcome"] == "success"
    context = action["context"]
    assert (context["tool"], context["command"]) == ("Bash", "echo hello-from-fake")
    assert action["meta"]["source"] == f"{CLIENTS[client].source}:post-tool-use"
    assert action["session"], action  # the client's session id is the lorebook session


def test_a_failed_call_is_a_failure_in_every_client_that_says_so(store: Path) -> None:
    gemini = TOOL_CALLS["gemini"][1](store)
    gemini["tool_response"] = {"llmContent": "", "error": {"message": "exit 2: no such file"}}
    copilot = TOOL_CALLS["copilot"][1](store)
    copilot["toolResult"] = {"resultType": "failure", "textResultForLlm": "exit 1"}
    cline = TOOL_CALLS["cline"][1](store)
    cline["postToolUse"]["success"] = False
    opencode = TOOL_CALLS["opencode"][1](store)
    opencode["output"]["metadata"]["exit"] = 2
    for client, given in (
        ("gemini", gemini),
        ("copilot", copilot),
        ("cline", cline),
        ("opencode", opencode),
    ):
        assert run(client, TOOL_CALLS[client][0], given, store).code == 0
    failed = {a["meta"]["source"]: a for a in stored_actions(store)}
    assert {a["outcome"] for a in failed.values()} == {"failure"}
    assert set(failed) == {
        f"{CLIENTS[c].source}:post-tool-use-failure"
        for c in ("gemini", "copilot", "cline", "opencode")
    }
    assert "no such file" in failed["gemini-cli:post-tool-use-failure"]["error"]


def test_a_call_reported_twice_is_logged_once(store: Path) -> None:
    """Project and user hooks both wired, or a client firing native and Claude-style hooks:
    the same (client, session, tool-use id) is one record; another id is another record."""
    first = codex_tool(store, "make test", call="call_9")
    for _ in range(2):
        assert run("codex", "PostToolUse", first, store).code == 0
    assert (
        run("codex", "PostToolUse", codex_tool(store, "make lint", call="call_10"), store).code == 0
    )
    commands = [a["context"]["command"] for a in stored_actions(store)]
    assert commands == ["make test", "make lint"]


def test_concurrent_deliveries_of_one_call_write_one_record(store: Path) -> None:
    given = json.dumps(codex_tool(store, "pytest -q", call="call_77"))
    env = clean_env(LORE_HOOK_DETACH="0")
    procs = [
        subprocess.Popen(
            [*LORE, "hook", "codex", "PostToolUse"],
            cwd=store,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for _ in range(6)
    ]
    for proc in procs:
        proc.communicate(given.encode(), timeout=60)
        assert proc.returncode == 0
    assert [a["context"]["command"] for a in stored_actions(store)] == ["pytest -q"]


def test_claude_hooks_run_by_cursor_are_cursors(store: Path) -> None:
    """Cursor also runs Claude Code's hooks: its payload says so, and a call it reports both
    ways (Claude-style and native, same id) is one record, under Cursor's name."""
    claude_style = {
        "session_id": "conv-123",
        "conversation_id": "conv-123",
        "cursor_version": "2.0.77",
        "cwd": str(store),
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
        "tool_response": "a\n",
        "tool_use_id": "tool-1",
    }
    native = {
        "hook_event_name": "postToolUse",
        "conversation_id": "conv-123",
        "cursor_version": "2.0.77",
        "workspace_roots": [str(store)],
        "tool_name": "Shell",
        "tool_input": {"command": "ls"},
        "tool_output": "a\n",
        "tool_use_id": "tool-1",
    }
    done = lore(
        "hook",
        "post-tool-use",
        cwd=store,
        env=clean_env(LORE_HOOK_DETACH="0"),
        stdin=json.dumps(claude_style),
    )
    assert done.code == 0, done.err
    assert run("cursor", "postToolUse", native, store).code == 0
    (action,) = stored_actions(store)
    assert action["meta"]["source"] == "cursor:post-tool-use"
    assert action["session"] == "conv-123"


def test_copilot_running_claude_style_hooks_is_copilot(store: Path) -> None:
    given = {
        "hook_event_name": "PostToolUse",
        "session_id": "s-cp",
        "cwd": str(store),
        "tool_name": "bash",
        "tool_input": {"command": "echo hi"},
        "tool_result": {"result_type": "success", "text_result_for_llm": "hi"},
    }
    done = lore(
        "hook",
        "post-tool-use",
        cwd=store,
        stdin=json.dumps(given),
        env=clean_env(LORE_HOOK_DETACH="0", COPILOT_PROJECT_DIR=str(store)),
    )
    assert done.code == 0, done.err
    (action,) = stored_actions(store)
    assert action["meta"]["source"] == "copilot-cli:post-tool-use"
    assert (action["context"]["tool"], action["context"]["command"]) == ("Bash", "echo hi")
    assert action["context"]["response"]  # Copilot's tool_result kept as the response


ANSWERS = {  # how each client reads added context: the JSON path to the text
    "codex": ("UserPromptSubmit", ("hookSpecificOutput", "additionalContext")),
    "gemini": ("BeforeAgent", ("hookSpecificOutput", "additionalContext")),
    "copilot": ("userPromptSubmitted", ("additionalContext",)),
    "opencode": ("chat.message", ("additionalContext",)),
}


def prompt_payload(client: str, store: Path, prompt: str) -> dict[str, Any]:
    if client == "copilot":
        return {"sessionId": "s-1", "cwd": str(store), "prompt": prompt}
    if client == "cline":
        return {
            "taskId": "t-1",
            "workspaceRoots": [str(store)],
            "hookName": "prompt_submit",
            "userPromptSubmit": {"prompt": prompt},
        }
    if client == "opencode":
        return {
            "directory": str(store),
            "input": {"sessionID": "ses_1"},
            "output": {
                "message": {"id": "m1", "role": "user"},
                "parts": [{"type": "text", "text": prompt}],
            },
        }
    return {
        "session_id": "s-1",
        "cwd": str(store),
        "hook_event_name": ANSWERS[client][0],
        "prompt": prompt,
    }


@pytest.mark.parametrize("client", sorted(ANSWERS))
def test_the_prompts_lesson_comes_back_in_the_clients_own_form(store: Path, client: str) -> None:
    generous(store)
    lesson = publish(
        Lorebook.open(store, env={}),
        "Supabase RLS blocks INSERT with the anon key",
        "Use the service role key for server-side inserts under RLS.",
        ["rls", "supabase"],
    )
    event, path = ANSWERS[client]
    asked = prompt_payload(client, store, f"Why does the supabase insert fail? {SECRET}")
    done = run(client, event, asked, store)
    assert done.code == 0 and done.err == "", done.err
    answer: Any = json.loads(done.out)
    for key in path:
        answer = answer[key]
    assert lesson in answer and "service role key" in answer
    (prompt,) = [a for a in stored_actions(store) if a["type"] == "prompt"]
    assert prompt["context"]["prompt"].startswith("Why does the supabase insert fail?")
    assert SECRET not in json.dumps(stored(store))


def test_a_session_from_start_to_end_in_another_client(store: Path) -> None:
    base = {"session_id": "g-1", "cwd": str(store), "transcript_path": str(store / "c.jsonl")}
    for event, extra in (
        ("SessionStart", {"source": "startup"}),
        ("BeforeAgent", {"prompt": "run the tests"}),
        ("AfterAgent", {"prompt": "run the tests", "prompt_response": "done"}),
        ("SessionEnd", {"reason": "exit"}),
    ):
        done = run("gemini", event, {**base, "hook_event_name": event, **extra}, store)
        assert done.code == 0, done.err
    records = [r for r in stored(store) if r.get("session") == "g-1"]
    kinds = [(r["kind"], r.get("event") or r.get("type")) for r in records]
    assert kinds == [
        ("session", "start"),
        ("action", "prompt"),
        ("session", "end"),
        ("session", "end"),
    ]
    assert {r["meta"]["source"].split(":")[0] for r in records} == {"gemini-cli"}
    assert [r["reason"] for r in records if r.get("event") == "end"] == ["stop", "exit"]


def test_an_unknown_event_of_a_known_client_is_one_line(store: Path) -> None:
    done = lore("hook", "gemini", "AfterToolz", cwd=store, env=clean_env(), stdin="{}")
    assert done.code == 1 and done.out == ""
    assert done.err.count("\n") == 1 and "AfterToolz" in done.err and "AfterTool" in done.err


def test_unknown_fields_and_odd_values_never_fail_the_hook(store: Path) -> None:
    """A newer client version: extra fields, missing ones, wrong types. Capture never fails."""
    odd = {
        "sessionId": 42,
        "toolName": None,
        "toolArgs": "not json {",
        "toolResult": [1, 2],
        "cwd": str(store),
        "newField": {"deep": [1, 2, 3]},
    }
    done = run("copilot", "postToolUse", odd, store)
    assert (done.code, done.out, done.err) == (0, "", "")
    (action,) = stored_actions(store)
    assert action["context"]["tool"] == "unknown"
    assert not (store / ".lore" / "cache" / "hooks.log").exists()


def test_every_client_the_command_knows_has_a_mapper() -> None:
    assert set(CLIENT_NAMES) | {"claude"} == set(CLIENTS)
    normalised = {
        "session-start",
        "user-prompt-submit",
        "post-tool-use",
        "post-tool-use-failure",
        "subagent-start",
        "subagent-stop",
        "pre-compact",
        "stop",
        "session-end",
    }
    for client in CLIENTS.values():
        assert set(client.events.values()) <= normalised, client.name
        assert client.context <= normalised


def test_the_claude_path_loads_no_client_mapper(store: Path) -> None:
    """Claude Code's own hooks stay as lean as before: the mappers load only for others."""
    code = (
        "import sys, io, os; from lorebook.hooks import entry; "
        "sys.stdin = io.TextIOWrapper(io.BytesIO(b'{}')); entry.main(['hook', 'stop']); "
        "print('lorebook.hooks.clients' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=store,
        capture_output=True,
        text=True,
        env=clean_env(LORE_HOOK_DETACH="0"),
        timeout=60,
    )
    assert done.stdout.strip() == "False", done.stderr


def test_a_linked_ledger_folder_takes_no_write_and_loses_no_record(
    store: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    cache = store / ".lore" / "cache"
    cache.mkdir(parents=True, exist_ok=True)
    (cache / "deliveries").symlink_to(outside)
    for _ in range(2):
        assert run("codex", "PostToolUse", codex_tool(store, "make", call="c-1"), store).code == 0
    assert list(outside.iterdir()) == []
    assert [a["context"]["command"] for a in stored_actions(store)] == ["make", "make"]


def test_a_prompt_delivered_twice_is_recorded_once_and_a_later_repeat_again(
    store: Path,
) -> None:
    generous(store)
    claude_style = {"session_id": "conv-9", "conversation_id": "conv-9", "cwd": str(store),
                    "cursor_version": "2.0.77", "hook_event_name": "UserPromptSubmit",
                    "prompt": "continue"}  # fmt: skip
    native = {"conversation_id": "conv-9", "workspace_roots": [str(store)],
              "hook_event_name": "beforeSubmitPrompt", "prompt": "continue"}  # fmt: skip
    env = clean_env(LORE_HOOK_DETACH="0")
    assert (
        lore("hook", "user-prompt-submit", cwd=store, env=env, stdin=json.dumps(claude_style)).code
        == 0
    )
    assert run("cursor", "beforeSubmitPrompt", native, store).code == 0
    prompts = [a for a in stored_actions(store) if a["type"] == "prompt"]
    assert [p["meta"]["source"] for p in prompts] == ["cursor:user-prompt-submit"]
    # the user types the same prompt again a minute later: a new prompt
    (ledger,) = (store / ".lore" / "cache" / "deliveries").iterdir()
    key, _, stamp = ledger.read_text().strip().partition("\t")
    ledger.write_text(f"{key}\t{float(stamp) - 60:.3f}\n")
    assert run("cursor", "beforeSubmitPrompt", native, store).code == 0
    assert len([a for a in stored_actions(store) if a["type"] == "prompt"]) == 2


def test_the_agents_page_lists_every_clients_every_event() -> None:
    page = (Path(__file__).parent.parent / "docs" / "agents.md").read_text()
    table = page.split("## Hooks for every agent", 1)[1].split("\n\n**Once per call", 1)[0]
    for client in CLIENTS.values():
        assert f"| {client.source} " in table or f" {client.source} |" in table, client.name
        for native in client.events:
            assert native in table, (client.name, native)


def test_a_start_and_a_stop_delivered_both_ways_are_one_each(store: Path) -> None:
    """Cursor firing Claude Code's SessionStart/Stop beside its own sessionStart/stop: one
    start record, one brief, one end; a later stop of the next turn is recorded again."""
    common = {
        "conversation_id": "conv-5",
        "generation_id": "gen-1",
        "cursor_version": "2.0.77",
        "cwd": str(store),
    }
    env = clean_env(LORE_HOOK_DETACH="0")
    claude_start = {**common, "session_id": "conv-5", "hook_event_name": "SessionStart"}
    assert (
        lore("hook", "session-start", cwd=store, env=env, stdin=json.dumps(claude_start)).code == 0
    )
    assert (
        run("cursor", "sessionStart", {**common, "hook_event_name": "sessionStart"}, store).code
        == 0
    )
    claude_stop = {**common, "session_id": "conv-5", "hook_event_name": "Stop"}
    assert lore("hook", "stop", cwd=store, env=env, stdin=json.dumps(claude_stop)).code == 0
    assert (
        run(
            "cursor", "stop", {**common, "hook_event_name": "stop", "status": "completed"}, store
        ).code
        == 0
    )
    records = [r for r in stored(store) if r.get("session") == "conv-5"]
    assert [(r["kind"], r.get("event")) for r in records] == [
        ("session", "start"),
        ("session", "end"),
    ]
    assert {r["meta"]["source"].split(":")[0] for r in records} == {"cursor"}
    assert records[0]["meta"]["client_source"] == "startup"


def test_ledgers_of_sessions_long_over_are_removed_when_a_new_one_starts(store: Path) -> None:
    import os

    assert run("codex", "PostToolUse", codex_tool(store, "a", call="c-1"), store).code == 0
    folder = store / ".lore" / "cache" / "deliveries"
    (old,) = folder.iterdir()
    os.utime(old, (0, 0))
    recent = codex_tool(store, "b", call="c-2")
    recent["session_id"] = "another-session"
    assert run("codex", "PostToolUse", recent, store).code == 0
    assert not old.exists() and len(list(folder.iterdir())) == 1


def test_records_name_the_agent_that_wrote_them_unless_the_config_says(store: Path) -> None:
    assert run("codex", "PostToolUse", codex_tool(store, "a", call="c-1"), store).code == 0
    given = TOOL_CALLS["cline"][1](store)
    assert run("cline", "PostToolUse", given, store).code == 0
    assert sorted(a["agent"] for a in stored_actions(store)) == ["cline", "codex"]
    (store / ".lore" / "config.yaml").write_text("hooks:\n  agent: builder\n")
    assert run("codex", "PostToolUse", codex_tool(store, "b", call="c-2"), store).code == 0
    (after,) = [a for a in stored_actions(store) if a["context"].get("command") == "b"]
    assert after["agent"] == "builder"


def test_cline_which_reads_no_answer_at_a_prompt_gets_none_and_still_the_record(
    store: Path,
) -> None:
    generous(store)
    publish(
        Lorebook.open(store, env={}),
        "Supabase RLS blocks INSERT with the anon key",
        "Use the service role key for server-side inserts under RLS.",
        ["rls", "supabase"],
    )
    asked = prompt_payload("cline", store, "Why does the supabase insert fail?")
    done = run("cline", "UserPromptSubmit", asked, store)
    assert (done.code, done.out, done.err) == (0, "", "")
    (prompt,) = [a for a in stored_actions(store) if a["type"] == "prompt"]
    assert prompt["meta"]["source"] == "cline:user-prompt-submit"


def test_a_real_codex_call_id_is_kept_so_an_import_can_match_it(store: Path) -> None:
    """Codex's ids are OpenAI's `call_` + 24 random characters: an id, not a secret; kept
    whole, a fresh clone's `lore import codex` finds the call in the log (no ledger there)."""
    call = "call_Xk3mQ9vLr2TzA7bWc5YpN8dE"
    given = codex_tool(store, "pytest -q", call=call)
    given["tool_input"]["command"] = f"GH_TOKEN={SECRET} pytest -q"
    assert run("codex", "PostToolUse", given, store).code == 0
    (action,) = stored_actions(store)
    assert action["context"]["tool_use_id"] == call
    assert SECRET not in json.dumps(stored(store))
