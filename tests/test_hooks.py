"""Claude Code hooks: `lore hook <event>` as real subprocesses fed the payloads Claude Code
sends, every bad input failing open, and `lore hooks install|uninstall|status` on real files."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import lorebook
from conftest import (
    assert_one_error_line,
    clean_env,
    lore,
    read_only_mount,
    stored,
    stored_actions,
)
from lorebook import Lorebook
from lorebook.render.framing import CLOSE, FRAME_CHARS, NOTICE

SID = "5b7a1f0e-2c1d-4e8a-9f00-1234567890ab"
SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


# The default budget is 1 s; a loaded test machine needs longer to import the search stack on
# the context hooks' first call. The budget itself is tested in test_a_spent_budget_…
GENEROUS = "hooks:\n  budget_seconds: 60\n"


def generous(store: Path, extra: str = "") -> None:
    (store / ".lore" / "config.yaml").write_text(GENEROUS + extra)


def payload(event: str, cwd: Path, **fields: Any) -> str:
    """A hook payload as Claude Code 2.1 sends it (common fields first)."""
    base = {
        "session_id": SID,
        "transcript_path": str(cwd / "t.jsonl"),
        "cwd": str(cwd),
        "permission_mode": "default",
        "hook_event_name": event,
    }
    return json.dumps({**base, **fields})


def hook(event: str, stdin: str, store: Path, **env: str) -> Any:
    """One hook run, its capture in the foreground (LORE_HOOK_DETACH=0) so the test can read
    the record as soon as it returns; test_capture_hooks_return_before_they_write detaches."""
    return lore("hook", event, cwd=store, env=clean_env(LORE_HOOK_DETACH="0", **env), stdin=stdin)


CALLS = itertools.count(1)  # each call its own tool-use id, as Claude Code gives (see deliveries)


def bash_payload(store: Path, stdout: str, **extra: Any) -> str:
    extra.setdefault("tool_use_id", f"toolu_01ABC{next(CALLS):04d}")
    return payload(
        "PostToolUse",
        store,
        prompt_id="p1",
        effort={"level": "medium"},
        tool_name="Bash",
        tool_input={"command": "cat .env", "description": "Show the env file"},
        tool_response={
            "stdout": stdout,
            "stderr": "",
            "interrupted": False,
            "isImage": False,
            "noOutputExpected": False,
        },
        duration_ms=186,
        **extra,
    )


def publish(book: Lorebook, title: str, takeaway: str, tags: list[str]) -> str:
    body = f"## Problem\n{title}\n\n## Solution\n{takeaway}\n\n## Key Takeaway\n{takeaway}\n"
    return book.learnings.new(
        title=title, body=body, category="database", tags=tags, publish=True
    ).id


def files_text(root: Path) -> str:
    return "\n".join(
        p.read_text(errors="replace")
        for p in root.rglob("*")
        if p.is_file() and ".git" not in p.parts
    )


# -- capture ----------------------------------------------------------------------------------
def test_post_tool_use_logs_one_redacted_tool_call(store: Path) -> None:
    given = bash_payload(store, f"TOKEN={SECRET}\nok\n", tool_use_id="toolu_01ABC")
    done = hook("post-tool-use", given, store)
    assert (done.code, done.out, done.err) == (0, "", "")
    (action,) = stored_actions(store)
    assert action["type"] == "tool_call" and action["outcome"] == "success"
    assert action["session"] == SID and action["agent"] == "claude-code"
    ctx = action["context"]
    assert ctx["tool"] == "Bash" and ctx["tool_use_id"] == "toolu_01ABC"
    assert ctx["input"]["command"] == "cat .env" and ctx["duration_ms"] == 186
    assert "[REDACTED" in ctx["response"]["stdout"]
    assert action["duration_s"] == 0.186
    assert isinstance(action["meta"]["overhead_ms"], int) and action["meta"]["overhead_ms"] >= 0
    assert SECRET not in files_text(store) and SECRET[:12] not in files_text(store)


def test_capture_hooks_return_before_they_write(store: Path) -> None:
    """The agent waits only for the read of stdin: the write happens in a detached child."""
    generous(store)
    done = lore(
        "hook",
        "post-tool-use",
        cwd=store,
        env=clean_env(),
        stdin=bash_payload(store, f"TOKEN={SECRET}"),
    )
    assert (done.code, done.out, done.err) == (0, "", "")
    deadline = time.monotonic() + 60
    while not stored_actions(store) and time.monotonic() < deadline:
        time.sleep(0.1)
    (action,) = stored_actions(store)
    meta = action["meta"]
    assert 0 <= meta["overhead_ms"] <= meta["background_ms"]
    assert SECRET not in files_text(store)


def test_a_long_response_is_redacted_then_truncated(store: Path) -> None:
    long = "x" * 3000 + f" {SECRET} " + "y" * 3000
    assert hook("post-tool-use", bash_payload(store, long), store).code == 0
    (action,) = stored_actions(store)
    stdout = action["context"]["response"]["stdout"]
    assert len(stdout) < 1100  # log.max_value_chars
    assert SECRET[:10] not in files_text(store)


def test_post_tool_use_failure_logs_the_error(store: Path) -> None:
    stdin = payload(
        "PostToolUseFailure",
        store,
        tool_name="Bash",
        tool_input={"command": "false"},
        tool_use_id="toolu_02",
        error=f"Exit code 1 password={SECRET}",
        is_interrupt=False,
        duration_ms=12,
    )
    assert hook("post-tool-use-failure", stdin, store).code == 0
    (action,) = stored_actions(store)
    assert action["outcome"] == "failure" and action["type"] == "tool_call"
    assert action["error"].startswith("Exit code 1") and SECRET not in action["error"]
    assert action["context"]["interrupted"] is False


def test_subagents_are_spawn_actions_linked_by_parent(store: Path) -> None:
    agent = {"agent_id": "a-77", "agent_type": "Explore"}
    assert hook("subagent-start", payload("SubagentStart", store, **agent), store).code == 0
    stop = payload(
        "SubagentStop",
        store,
        stop_hook_active=False,
        last_assistant_message="done",
        agent_transcript_path=str(store / "a.jsonl"),
        **agent,
    )
    assert hook("subagent-stop", stop, store).code == 0
    opened, closed = sorted(stored_actions(store), key=lambda a: a["ts"])
    assert (opened["type"], opened["outcome"]) == ("spawn", "in_progress")
    assert (closed["type"], closed["outcome"]) == ("spawn", "success")
    assert closed["parent"] == opened["id"] and closed["context"]["agent_type"] == "Explore"


def test_a_call_inside_a_subagent_carries_its_agent_id(store: Path) -> None:
    """Claude Code 2.1.328 sends `agent_id` and `agent_type` with a tool call a subagent makes
    (seen with the real CLI; test_claude_code_e2e runs one): the call records the agent id,
    the same one its spawn records, so the timeline puts the call under its subagent."""
    agent = {"agent_id": "ac5e2c161e9ef4453", "agent_type": "general-purpose"}
    assert hook("subagent-start", payload("SubagentStart", store, **agent), store).code == 0
    inside = payload("PostToolUse", store, tool_name="Bash", tool_use_id="toolu_01SUB0001",
                     tool_input={"command": "echo hi", "description": "Say hi"},
                     tool_response={"stdout": "hi", "stderr": "", "interrupted": False},
                     duration_ms=31, **agent)  # fmt: skip
    assert hook("post-tool-use", inside, store).code == 0
    main = bash_payload(store, "main")
    assert hook("post-tool-use", main, store).code == 0
    spawn, call, own = sorted(stored_actions(store), key=lambda a: a["ts"])
    assert spawn["context"]["agent_id"] == call["context"]["agent_id"] == agent["agent_id"]
    assert "agent_id" not in own["context"]  # the main agent's call names no subagent
    rows = Lorebook.open(store, env={}).timeline(SID).rows
    assert [(r.depth, r.type) for r in rows] == [(0, "spawn"), (1, "tool_call"), (0, "tool_call")]


def test_pre_compact_is_a_checkpoint_and_session_end_ends_the_session(store: Path) -> None:
    assert hook("session-start", payload("SessionStart", store, source="startup"), store).code == 0
    pre = payload("PreCompact", store, trigger="manual", custom_instructions="")
    assert hook("pre-compact", pre, store).code == 0
    assert hook("stop", payload("Stop", store, stop_hook_active=False), store).code == 0
    assert (
        hook("session-end", payload("SessionEnd", store, reason="prompt_input_exit"), store).code
        == 0
    )
    (checkpoint,) = stored_actions(store)
    assert checkpoint["type"] == "checkpoint" and checkpoint["context"]["trigger"] == "manual"
    ends = [r for r in stored(store) if r.get("event") == "end"]
    assert [e["reason"] for e in ends] == ["stop", "user_exit"]
    assert ends[-1]["meta"]["claude_reason"] == "prompt_input_exit"
    (session,) = Lorebook.open(store, env={}).sessions()
    assert session.id == SID and session.status == "ended" and session.end_reason == "user_exit"
    assert lore("check", env=clean_env(store)).code == 0


# -- context ----------------------------------------------------------------------------------
def test_session_start_injects_the_last_sessions_brief_and_starts_a_session(store: Path) -> None:
    generous(store)
    book = Lorebook.open(store, env={})
    publish(
        book,
        "Migrations lock the users table",
        "Run migrations with lock_timeout set.",
        ["migrations", "postgres"],
    )
    publish(
        book,
        "Supabase RLS blocks INSERT with the anon key",
        "Use the service role key.",
        ["rls", "supabase"],
    )
    publish(
        book,
        "Docker builds miss the cache",
        "Copy the lock file before the sources.",
        ["docker", "build"],
    )
    earlier = book.start_session(agent="claude-code", session_id="earlier-1")
    earlier.log(
        "tool_call",
        context={"tool": "Bash", "command": "alembic upgrade head migrations"},
        epic="epic-12",
    )
    done = hook(
        "session-start",
        payload("SessionStart", store, source="startup", model="claude-opus-5-5"),
        store,
    )
    assert done.code == 0 and done.err == "", done.err
    out = json.loads(done.out)["hookSpecificOutput"]
    assert out["hookEventName"] == "SessionStart"
    text = out["additionalContext"]
    assert "Resume: session earlier-1" in text and "epic-12" in text
    assert "Migrations lock the users table" in text
    assert "Supabase" not in text and "Docker" not in text
    start = [r for r in stored(store) if r.get("event") == "start" and r["session"] == SID]
    assert len(start) == 1 and start[0]["session_type"] == "hook"
    assert start[0]["meta"]["claude_source"] == "startup"
    assert start[0]["meta"]["overhead_ms"] >= 0
    again = hook("session-start", payload("SessionStart", store, source="compact"), store)
    assert again.code == 0 and f"Resume: session {SID}" in again.out


def test_session_start_context_is_capped_by_config(store: Path) -> None:
    generous(store, "  context_tokens: 40\n")
    book = Lorebook.open(store, env={})
    session = book.start_session(session_id="earlier-2")
    for i in range(30):
        session.log("tool_call", context={"tool": "Bash", "command": f"step number {i}"})
    done = hook("session-start", payload("SessionStart", store, source="startup"), store)
    text = json.loads(done.out)["hookSpecificOutput"]["additionalContext"]
    # the body to the budget; the frame around it stays whole
    assert len(text) <= 40 * 4 + FRAME_CHARS and "lore resume" in text
    assert text.startswith(NOTICE) and text.endswith(CLOSE)


def test_a_spent_budget_still_starts_the_session(store: Path) -> None:
    (store / ".lore" / "config.yaml").write_text("hooks:\n  budget_seconds: 0\n")
    Lorebook.open(store, env={}).start_session(session_id="earlier-3").log("plan")
    done = hook("session-start", payload("SessionStart", store, source="startup"), store)
    assert (done.code, done.out) == (0, "")
    assert any(r.get("event") == "start" and r["session"] == SID for r in stored(store))
    assert "time budget" in (store / ".lore" / "cache" / "hooks.log").read_text()


def test_user_prompt_submit_brings_the_lesson_and_nothing_else(store: Path) -> None:
    generous(store)
    book = Lorebook.open(store, env={})
    lesson = publish(
        book,
        "Supabase RLS blocks INSERT with the anon key",
        "Use the service role key for server-side inserts under RLS.",
        ["rls", "supabase"],
    )
    asked = payload("UserPromptSubmit", store, prompt="Why does the supabase insert fail with RLS?")
    done = hook("user-prompt-submit", asked, store)
    assert done.code == 0, done.err
    text = json.loads(done.out)["hookSpecificOutput"]["additionalContext"]
    assert lesson in text and "service role key" in text
    (search,) = [a for a in stored_actions(store) if a["type"] == "search"]
    assert search["context"]["results"] == [lesson] and "overhead_ms" in search["meta"]
    other = payload("UserPromptSubmit", store, prompt="Rename the README headline to Welcome")
    quiet = hook("user-prompt-submit", other, store)
    assert (quiet.code, quiet.out, quiet.err) == (0, "", "")
    off = store / ".lore" / "config.yaml"
    off.write_text(GENEROUS + "  user_prompt: false\n")
    assert hook("user-prompt-submit", asked, store).out == ""


def test_context_hooks_never_import_torch(store: Path) -> None:
    """The context hooks search by keywords: no model, no torch, no chromadb (and never the
    OpenTelemetry export: it runs from CI, not in a hook)."""
    generous(store)
    code = (
        "import sys, runpy; sys.argv = ['lore', 'hook', 'user-prompt-submit'];"
        "import lorebook.launch as l; rc = l.main(sys.argv[1:]);"
        "bad = [m for m in ('torch', 'chromadb', 'onnxruntime', 'click', 'opentelemetry',"
        " 'lorebook.otel') if m in sys.modules];"
        "print(rc, bad, file=sys.stderr)"
    )
    Lorebook.open(store, env={}).start_session(session_id="e").log("plan")
    for event, text in (("UserPromptSubmit", "fix the RLS insert"), ("SessionStart", "")):
        stdin = payload(event, store, prompt=text, source="startup")
        code_event = code.replace("user-prompt-submit", "session-start") if text == "" else code
        done = subprocess.run(
            [sys.executable, "-c", code_event],
            cwd=store,
            input=stdin,
            capture_output=True,
            text=True,
            env=clean_env(),
        )
        assert done.stderr.strip().endswith("0 []"), done.stderr


# -- bad input: always exit 0, nothing on stdout ---------------------------------------------
BAD = {
    "empty": "",
    "not json": "{not json",
    "json array": "[1, 2]",
    "missing fields": "{}",
    "wrong types": json.dumps(
        {
            "session_id": 5,
            "tool_name": ["x"],
            "duration_ms": "slow",
            "tool_response": None,
            "cwd": 7,
        }
    ),
    "bad session id": json.dumps({"session_id": "../../etc", "tool_name": "Bash"}),
}


@pytest.mark.parametrize(
    "event",
    [
        "session-start",
        "user-prompt-submit",
        "post-tool-use",
        "post-tool-use-failure",
        "subagent-start",
        "subagent-stop",
        "pre-compact",
        "stop",
        "session-end",
    ],
)
@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_input_fails_open(store: Path, event: str, name: str) -> None:
    done = hook(event, BAD[name], store)
    assert done.code == 0 and "Traceback" not in done.err, done.err
    if event not in ("session-start", "user-prompt-submit"):
        assert done.out == ""


def test_unknown_extra_fields_are_ignored(store: Path) -> None:
    stdin = bash_payload(
        store, "ok", future_field={"nested": [1, 2]}, agent_id="sub-1", agent_type="general-purpose"
    )
    assert hook("post-tool-use", stdin, store).code == 0
    (action,) = stored_actions(store)
    assert action["context"]["tool"] == "Bash" and "future_field" not in action["context"]


def test_a_20_mb_payload_is_logged_cut_within_the_budget(store: Path) -> None:
    big = ("line of build output\n" * 1_000_000)[: 20 << 20]
    started = time.monotonic()
    done = hook("post-tool-use", bash_payload(store, big), store)
    assert (done.code, done.out) == (0, "")
    assert time.monotonic() - started < 30
    (action,) = stored_actions(store)
    assert len(action["context"]["response"]["stdout"]) < 1100


def test_an_uninitialized_repository_stays_silent(repo: Path) -> None:
    for event in ("session-start", "post-tool-use", "session-end"):
        done = hook(event, bash_payload(repo, "x"), repo)
        assert (done.code, done.out, done.err) == (0, "", "")
    assert not (repo / ".lore").exists() and not (repo / "actionlog").exists()


def test_an_internal_error_goes_to_hooks_log_redacted(store: Path) -> None:
    (store / ".lore" / "config.yaml").write_text(f"log: [unclosed {SECRET}\n")
    done = hook("post-tool-use", bash_payload(store, "x"), store)
    assert (done.code, done.out, done.err) == (0, "", "")
    log = (store / ".lore" / "cache" / "hooks.log").read_text()
    assert "post-tool-use" in log and "invalid YAML" in log
    assert SECRET not in log


def test_a_read_only_store_fails_open(store: Path) -> None:
    generous(store)
    Lorebook.open(store, env={}).start_session(session_id="earlier-4").log("plan")
    with read_only_mount(store) as ro:
        capture = hook("post-tool-use", bash_payload(ro, "x"), ro)
        assert (capture.code, capture.out) == (0, "")
        start = hook("session-start", payload("SessionStart", ro, source="startup"), ro)
        assert start.code == 0 and "Traceback" not in start.err


# -- install / uninstall / status --------------------------------------------------------------
USER_SETTINGS = {
    "model": "opus",
    "hooks": {
        "PostToolUse": [
            {
                "matcher": "Write|Edit",
                "hooks": [{"type": "command", "command": "npx prettier --write"}],
            }
        ],
        "Notification": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
    },
}


def admin(repo: Path, *args: str, home: Path | None = None) -> Any:
    env = clean_env(HOME=str(home or repo.parent / "home"))
    return lore("hooks", *args, cwd=repo, env=env)


def test_install_merges_keeps_the_users_hooks_and_is_idempotent(repo: Path) -> None:
    settings = repo / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps(USER_SETTINGS, indent=4))
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"db": {"command": "pg-mcp"}}}))
    done = admin(repo, "install", "claude")
    assert done.code == 0, done.err
    data = json.loads(settings.read_text())
    assert data["model"] == "opus"
    assert data["hooks"]["Notification"] == USER_SETTINGS["hooks"]["Notification"]  # type: ignore[index]
    post = data["hooks"]["PostToolUse"]
    assert post[0] == USER_SETTINGS["hooks"]["PostToolUse"][0]  # type: ignore[index]
    assert post[1]["hooks"][0]["command"].endswith("hook post-tool-use")
    assert post[1]["hooks"][0]["timeout"] == 5 and "async" not in post[1]["hooks"][0]
    for event in (
        "SessionStart",
        "UserPromptSubmit",
        "PostToolUseFailure",
        "SubagentStart",
        "SubagentStop",
        "PreCompact",
        "Stop",
        "SessionEnd",
    ):
        assert len(data["hooks"][event]) == 1, event
    servers = json.loads((repo / ".mcp.json").read_text())["mcpServers"]
    assert servers["db"] == {"command": "pg-mcp"} and servers["lore"]["args"][-1] == "mcp"
    assert (repo / ".lore").is_dir()  # one command: the store too
    before = settings.read_bytes()
    again = admin(repo, "install", "claude")
    assert again.code == 0 and "nothing to change" in again.out
    assert settings.read_bytes() == before
    status = admin(repo, "status", "--json")
    wired = json.loads(status.out)
    assert len(wired["settings"][0]["events"]) == 9 and wired["mcp"]["registered"] is True

    removed = admin(repo, "uninstall", "claude")
    assert removed.code == 0, removed.err
    assert json.loads(settings.read_text()) == USER_SETTINGS
    servers_left = json.loads((repo / ".mcp.json").read_text())
    assert servers_left == {"mcpServers": {"db": {"command": "pg-mcp"}}}


def test_install_refuses_invalid_json_and_leaves_it_untouched(repo: Path) -> None:
    settings = repo / ".claude" / "settings.json"
    settings.parent.mkdir()
    broken = b'{\n  "hooks": {\n    "Stop": [,]\n}\n'
    settings.write_bytes(broken)
    done = admin(repo, "install", "claude")
    assert_one_error_line(done, str(settings), ":3:", "invalid JSON")
    assert settings.read_bytes() == broken
    assert not (repo / ".mcp.json").exists()


def test_dry_run_prints_the_diff_and_writes_nothing(repo: Path) -> None:
    done = admin(repo, "install", "claude", "--dry-run")
    assert done.code == 0, done.err
    assert "+++ " in done.out and "hook session-start" in done.out
    assert not (repo / ".claude").exists() and not (repo / ".mcp.json").exists()
    assert not (repo / ".lore").exists()


def test_user_scope_writes_home_settings(repo: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    done = admin(repo, "install", "claude", "--scope", "user", home=home)
    assert done.code == 0, done.err
    data = json.loads((home / ".claude" / "settings.json").read_text())
    assert "SessionStart" in data["hooks"] and not (repo / ".claude").exists()
    assert "claude mcp add --scope user lore" in done.out
    assert admin(repo, "uninstall", "claude", "--scope", "user", home=home).code == 0
    assert not (home / ".claude" / "settings.json").exists()


def test_unknown_event_and_usage_errors_are_one_line(repo: Path) -> None:
    assert_one_error_line(
        lore("hook", "bogus", cwd=repo, env=clean_env(), stdin="{}"), "session-start"
    )
    assert_one_error_line(admin(repo, "install", "emacs"), "invalid choice")
    helped = lore("--help", env=clean_env())
    assert "  hook " in helped.out and "  hooks " in helped.out


def test_every_event_has_a_handler() -> None:
    from lorebook.hooks.entry import EVENTS
    from lorebook.hooks.handlers import HANDLERS
    from lorebook.hooks.wire_claude import OUR_EVENTS

    assert set(EVENTS) == set(HANDLERS) == OUR_EVENTS


def test_a_capture_hook_detaches_before_loading_more_than_the_standard_library(store: Path) -> None:
    """What the agent waits for: the parent process reads stdin, forks and exits."""
    code = (
        "import sys; import lorebook.launch as l; from lorebook.hooks import failopen as f;"
        "f.detach = lambda: True; l.main(['hook', 'post-tool-use']);"
        "print(sorted(m for m in sys.modules if m.startswith('lorebook')),"
        " [m for m in ('json', 'pathlib', 'typing', 're') if m in sys.modules],"
        " file=sys.stderr)"
    )
    # -S skips site-packages (and so an editable install's .pth): name the package's folder
    source = str(Path(lorebook.__file__).resolve().parents[1])
    done = subprocess.run(
        [sys.executable, "-S", "-c", code],
        cwd=store,
        input=bash_payload(store, "x"),
        capture_output=True,
        text=True,
        env=clean_env(PYTHONPATH=source),
    )
    assert done.returncode == 0, done.stderr
    assert "'lorebook.hooks.handlers'" not in done.stderr, done.stderr
    assert "'json'" not in done.stderr, done.stderr
