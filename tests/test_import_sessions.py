"""`lore import claude|codex` on real Claude Code transcripts and on Codex rollouts shaped as
Codex writes them (codex-rs/protocol `RolloutLine`): what the log gets, that a rerun and a
hooked session add nothing, and bad input named one line each with the rest imported."""

from __future__ import annotations

import gzip
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import clean_env, lore, on_a_terminal, real_sessions_root, require_real, stored

SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
AWS = "AKIA" + "QWERTYUIOPASDFGH"
# three real sessions: rejected calls and a call with no result (60b38d1e), a compaction
# (13da966e), six subagents (9667a07f)
PICKED = ("60b38d1e", "13da966e", "9667a07f")


def data() -> Path:
    root = real_sessions_root()
    if root is None:
        require_real("../shared/data/claude-sessions is missing")
    return (root / "../shared/data/claude-sessions").resolve()


def index() -> dict[str, dict[str, Any]]:
    found = json.loads((data() / "index.json").read_text(encoding="utf-8"))
    return {s["id"]: s for s in found["sessions"]}


def picked() -> list[dict[str, Any]]:
    every = index()
    return [next(s for k, s in every.items() if k.startswith(p)) for p in PICKED]


def project_dir(config: Path, repo: Path) -> Path:
    """Where Claude Code keeps the sessions of `repo`: its path with every other character
    than a letter or digit as `-`."""
    folder = config / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(repo.resolve()))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def place(session: dict[str, Any], config: Path, repo: Path) -> Path:
    """A real session copied where Claude Code keeps it, its working directory remapped onto
    `repo` (as if it had run there)."""
    with gzip.open(data() / session["dir"] / "full.jsonl.gz", "rt", encoding="utf-8") as f:
        text = f.read()
    path = project_dir(config, repo) / f"{session['id']}.jsonl"
    path.write_text(text.replace(session["cwd"], str(repo.resolve())), encoding="utf-8")
    return path


def env_for(store: Path, tmp_path: Path, **extra: str) -> dict[str, str]:
    return clean_env(store, CLAUDE_CONFIG_DIR=str(tmp_path / "claude"),
                     CODEX_HOME=str(tmp_path / "codex"), HOME=str(tmp_path), **extra)  # fmt: skip


def run_import(store: Path, tmp_path: Path, *args: str, **extra: str) -> Any:
    done = lore("import", *args, "--json", env=env_for(store, tmp_path, **extra), timeout=300)
    return done


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def hooked_calls(path: Path) -> set[str]:
    """The tool calls of a transcript that fire a post-tool hook: a tool_use with a result
    that is not the user refusing it (a checkpoint may hold a result whose call it lacks)."""
    lines = lines_of(path)
    uses = {b["id"] for x in lines if x.get("type") == "assistant"
            for b in x["message"]["content"] if b.get("type") == "tool_use"}  # fmt: skip
    done = set()
    for line in lines:
        content = (line.get("message") or {}).get("content")
        for block in content if line.get("type") == "user" and isinstance(content, list) else []:
            if block.get("type") != "tool_result":
                continue
            text = block.get("content")
            text = (
                text
                if isinstance(text, str)
                else " ".join(b.get("text", "") for b in text or [] if isinstance(b, dict))
            )
            if not text.startswith("The user doesn't want to proceed"):
                done.add(block["tool_use_id"])
    return uses & done


def files_text(root: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in root.rglob("*")
                     if p.is_file() and ".git" not in p.parts)  # fmt: skip


# -- Claude Code -------------------------------------------------------------------------------
def test_real_sessions_become_the_records_the_hooks_write(store: Path, tmp_path: Path) -> None:
    sessions = picked()
    paths = {s["id"]: place(s, tmp_path / "claude", store) for s in sessions}
    done = run_import(store, tmp_path, "claude")
    assert done.code == 0, done.err
    result = done.json()
    assert result["sessions_seen"] == result["sessions_imported"] == 3
    assert result["duplicates_skipped"] == 0 and result["problems"] == []
    records = stored(store)
    assert result["actions_written"] == len(records)
    for session in sessions:
        own = [r for r in records if r["session"] == session["id"]]
        calls = [r for r in own if r.get("type") == "tool_call"]
        # every call that fired a post-tool hook, once: not refused, not cut before its result
        expected = hooked_calls(paths[session["id"]])
        assert session["tool_calls"] - len(expected) <= 3  # the few the data set says
        assert sorted(c["context"]["tool_use_id"] for c in calls) == sorted(expected)
        # the transcript's times, to the millisecond; the hooks' source, marked imported
        stamps = {line["timestamp"] for line in lines_of(paths[session["id"]])
                  if line.get("timestamp")}  # fmt: skip
        assert {r["ts"] for r in own} <= stamps
        assert all(r["meta"]["imported"] is True for r in own)
        assert all(r["meta"]["source"].startswith("claude-code:") for r in own)
        starts = [r for r in own if r["kind"] == "session" and r["event"] == "start"]
        assert starts[0]["ts"] == min(stamps)
        assert len(starts) == 1 + session["compact_boundaries"]
        prompts = [r for r in own if r.get("type") == "prompt"]
        assert len(prompts) == session["prompts"]
        spawns = [r for r in own if r.get("type") == "spawn"]
        tasks = [c for c in calls if c["context"].get("tool") == "Task"]
        assert len(spawns) >= 2 * len(tasks)  # every Task: started, then its outcome
    assert len([r for r in records if r.get("type") == "checkpoint"]) == sum(
        s["compact_boundaries"] for s in sessions
    )


def test_a_second_run_adds_nothing(store: Path, tmp_path: Path) -> None:
    for session in picked()[:2]:
        place(session, tmp_path / "claude", store)
    first = run_import(store, tmp_path, "claude")
    assert first.code == 0, first.err
    before = {p: p.read_bytes() for p in (store / "actionlog").rglob("*.jsonl")}
    again = run_import(store, tmp_path, "claude")
    assert again.code == 0, again.err
    found = again.json()
    assert found["actions_written"] == 0 and found["sessions_imported"] == 0
    assert found["duplicates_skipped"] == first.json()["actions_written"]
    assert {p: p.read_bytes() for p in (store / "actionlog").rglob("*.jsonl")} == before


def test_calls_the_hooks_logged_are_not_logged_again(store: Path, tmp_path: Path) -> None:
    """The hooks caught part of a session (its start, a prompt, one call); the import adds
    the calls they missed and nothing twice."""
    session = picked()[0]
    path = place(session, tmp_path / "claude", store)
    lines = lines_of(path)
    call = next(b for line in lines if line.get("type") == "assistant"
                for b in line["message"]["content"] if b.get("type") == "tool_use")  # fmt: skip
    base = {"session_id": session["id"], "cwd": str(store), "transcript_path": str(path)}
    env = clean_env(store, LORE_HOOK_DETACH="0")
    for event, fields in (
        ("session-start", {"hook_event_name": "SessionStart", "source": "startup"}),
        ("user-prompt-submit", {"hook_event_name": "UserPromptSubmit", "prompt": "go on"}),
        ("post-tool-use", {"hook_event_name": "PostToolUse", "tool_name": call["name"],
                           "tool_input": call["input"], "tool_use_id": call["id"],
                           "tool_response": "ok"}),
    ):  # fmt: skip
        assert lore("hook", event, env=env, stdin=json.dumps({**base, **fields})).code == 0
    hooked = stored(store)
    done = run_import(store, tmp_path, "claude")
    assert done.code == 0, done.err
    records = stored(store)
    calls = [r for r in records if r.get("type") == "tool_call"]
    assert [c["context"]["tool_use_id"] for c in calls].count(call["id"]) == 1
    assert len(calls) == len(hooked_calls(path))
    # the session was already in the log (the hooks' records are newer than every line):
    # no second start, no prompt twice
    starts = [r for r in records if r["kind"] == "session" and r["event"] == "start"]
    assert len(starts) == 1 and [r for r in records if r.get("type") == "prompt"] == [
        r for r in hooked if r.get("type") == "prompt"
    ]


def test_resume_after_an_import_names_the_last_prompt(store: Path, tmp_path: Path) -> None:
    session = picked()[0]
    place(session, tmp_path / "claude", store)
    assert run_import(store, tmp_path, "claude").code == 0
    done = lore("resume", "--json", env=clean_env(store))
    assert done.code == 0, done.err
    brief = done.json()
    assert brief["session"]["id"] == session["id"]
    assert brief["last_prompt"][:60] == " ".join(session["last_prompt"].split())[:60]


def test_a_secret_in_a_transcript_never_reaches_the_store(store: Path, tmp_path: Path) -> None:
    session = picked()[0]
    path = place(session, tmp_path / "claude", store)
    last = lines_of(path)[-1]
    common = {k: last[k] for k in ("sessionId", "cwd", "version", "gitBranch") if k in last}
    stamp = "2026-02-03T12:00:00.000Z"
    planted = [
        {**common, "type": "user", "timestamp": stamp, "uuid": "p1",
         "message": {"role": "user", "content": f"deploy with token {SECRET} and {AWS}"}},
        {**common, "type": "assistant", "timestamp": stamp, "uuid": "p2",
         "message": {"role": "assistant", "content": [
             {"type": "tool_use", "id": "toolu_01PLANTED", "name": "Bash",
              "input": {"command": f"GITHUB_TOKEN={SECRET} git push"}}]}},
        {**common, "type": "user", "timestamp": stamp, "uuid": "p3",
         "message": {"role": "user", "content": [
             {"type": "tool_result", "tool_use_id": "toolu_01PLANTED", "is_error": True,
              "content": f"Exit code 1\nfatal: bad credentials {AWS}"}]},
         "toolUseResult": f"Error: bad credentials {SECRET}"},
    ]  # fmt: skip
    with open(path, "a", encoding="utf-8") as out:
        out.writelines(json.dumps(line) + "\n" for line in planted)
    done = run_import(store, tmp_path, "claude")
    assert done.code == 0, done.err
    assert SECRET not in done.out + done.err and AWS not in done.out + done.err
    text = files_text(store)
    assert SECRET not in text and SECRET[:12] not in text and AWS not in text
    planted_call = [r for r in stored(store) if r.get("context", {}).get("tool_use_id")
                    == "toolu_01PLANTED"]  # fmt: skip
    assert len(planted_call) == 1 and planted_call[0]["outcome"] == "failure"


def test_another_repositorys_sessions_stay_out(store: Path, tmp_path: Path) -> None:
    session = picked()[0]
    other = tmp_path / "elsewhere"
    other.mkdir()
    place(session, tmp_path / "claude", other)  # its folder and cwd: another repository
    inside_name = project_dir(tmp_path / "claude", store)  # a folder named like ours...
    with gzip.open(data() / session["dir"] / "full.jsonl.gz", "rt", encoding="utf-8") as f:
        (inside_name / "x.jsonl").write_text(f.read())  # ...whose lines say another cwd
    done = run_import(store, tmp_path, "claude")
    assert done.code == 0, done.err
    assert done.json()["sessions_seen"] == 0 and stored(store) == []


def test_a_bad_line_is_named_and_the_rest_imported(store: Path, tmp_path: Path) -> None:
    session = picked()[0]
    path = place(session, tmp_path / "claude", store)
    expected = hooked_calls(path)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines.insert(3, '{"type": "user", "message": {"content": "torn\n')
    path.write_text("".join(lines), encoding="utf-8")
    done = lore("import", "claude", env=env_for(store, tmp_path), timeout=300)
    assert done.code == 1
    assert done.err.strip().splitlines() == [f"lore import: {path}:4: not a JSON line; skipped"]
    calls = [r for r in stored(store) if r.get("type") == "tool_call"]
    assert len(calls) == len(expected)


def test_no_session_folder_is_one_line(store: Path, tmp_path: Path) -> None:
    done = lore("import", "claude", env=env_for(store, tmp_path), timeout=60)
    assert done.code == 1
    assert done.err.strip().splitlines() == [
        f"lore import: {tmp_path / 'claude' / 'projects'}: no Claude Code sessions here "
        "(not a directory)"
    ]
    assert stored(store) == []


def test_since_and_dry_run(store: Path, tmp_path: Path) -> None:
    old, new = picked()[:2]
    aged = place(old, tmp_path / "claude", store)
    place(new, tmp_path / "claude", store)
    os.utime(aged, (1_000_000_000, 1_000_000_000))  # written in 2001
    dry = run_import(store, tmp_path, "claude", "--dry-run")
    assert dry.code == 0, dry.err
    assert dry.json()["sessions_imported"] == 2 and stored(store) == []
    done = run_import(store, tmp_path, "claude", "--since", "2026-01-01")
    assert done.code == 0, done.err
    assert {r["session"] for r in stored(store)} == {new["id"]}
    assert done.json()["actions_written"] == len(stored(store))


def test_progress_shows_on_a_terminal_only(store: Path, tmp_path: Path) -> None:
    place(picked()[0], tmp_path / "claude", store)
    command = [sys.executable, "-m", "lorebook", "import", "claude", "--dry-run"]
    code, out, err = on_a_terminal(command, env_for(store, tmp_path), stream="stderr", raw=True)
    assert code == 0 and "Importing sessions" in err and "would import 1 of 1" in out
    piped = lore("import", "claude", "--dry-run", env=env_for(store, tmp_path))
    assert piped.code == 0 and "Importing" not in piped.err


# -- Codex -------------------------------------------------------------------------------------
def rollout(cwd: Path, session: str = "01a21e32-7f8c-4bd1-9b1a-2f0c1d2e3f40") -> list[Any]:
    """A rollout as Codex writes it: `{timestamp, type, payload}` per line (RolloutLine)."""
    t = "2026-11-27T10:00:0{}.000Z".format
    return [
        {"timestamp": t(0), "type": "session_meta", "payload": {
            "id": session, "timestamp": t(0), "cwd": str(cwd), "originator": "codex_exec",
            "cli_version": "0.171.0", "instructions": None,
            "git": {"commit_hash": "abc123", "branch": "main", "repository_url": None}}},
        {"timestamp": t(1), "type": "response_item", "payload": {
            "type": "message", "role": "user",
            "content": [{"type": "input_text", "text": "<environment_context>…"}]}},
        {"timestamp": t(1), "type": "event_msg", "payload": {
            "type": "user_message", "message": "run echo hello", "images": []}},
        {"timestamp": t(2), "type": "turn_context", "payload": {
            "cwd": str(cwd), "approval_policy": "never", "model": "fake-model"}},
        {"timestamp": t(3), "type": "response_item", "payload": {
            "type": "reasoning", "id": "rs_1", "summary": [], "content": None}},
        {"timestamp": t(4), "type": "response_item", "payload": {
            "type": "function_call", "name": "exec_command",
            "arguments": json.dumps({"cmd": "echo hello"}), "call_id": "call_3"}},
        {"timestamp": t(5), "type": "response_item", "payload": {
            "type": "function_call_output", "call_id": "call_3",
            "output": "Process exited with code 0\nOutput:\nhello\n"}},
        {"timestamp": t(6), "type": "response_item", "payload": {
            "type": "custom_tool_call", "status": "completed", "call_id": "call_4",
            "name": "apply_patch", "input": "*** Begin Patch\n*** End Patch\n"}},
        {"timestamp": t(7), "type": "response_item", "payload": {
            "type": "custom_tool_call_output", "call_id": "call_4", "output": "Done!"}},
        {"timestamp": t(8), "type": "some_future_item", "payload": {"type": "whatever"}},
        {"timestamp": t(9), "type": "event_msg", "payload": {
            "type": "task_complete", "last_agent_message": "hello"}},
    ]  # fmt: skip


def write_rollout(home: Path, lines: list[Any], name: str = "a") -> Path:
    folder = home / "sessions" / "2026" / "11" / "27"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"rollout-2026-11-27T10-00-00-{name}.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def test_a_codex_rollout_is_imported_as_codex_hooks_would(store: Path, tmp_path: Path) -> None:
    write_rollout(tmp_path / "codex", rollout(store))
    write_rollout(tmp_path / "codex", rollout(tmp_path, "0b9e"), "other")  # another repo's
    done = run_import(store, tmp_path, "codex")
    assert done.code == 0, done.err
    assert done.json()["sessions_seen"] == 1
    records = stored(store)
    assert {r["session"] for r in records} == {"01a21e32-7f8c-4bd1-9b1a-2f0c1d2e3f40"}
    calls = [r for r in records if r.get("type") == "tool_call"]
    assert [c["context"]["tool_use_id"] for c in calls] == ["call_3", "call_4"]
    assert calls[0]["context"]["command"] == "echo hello"
    assert calls[0]["context"]["client_tool"] == "exec_command"
    assert calls[0]["ts"] == "2026-11-27T10:00:05.000Z"
    assert {r["meta"]["source"] for r in calls} == {"codex:post-tool-use"}
    prompts = [r for r in records if r.get("type") == "prompt"]
    assert [p["context"]["prompt"] for p in prompts] == ["run echo hello"]
    start = next(r for r in records if r["kind"] == "session" and r["event"] == "start")
    assert start["ts"] == "2026-11-27T10:00:00.000Z" and start["meta"]["branch"] == "main"
    again = run_import(store, tmp_path, "codex")
    assert again.code == 0 and again.json()["actions_written"] == 0
    assert stored(store) == records


def test_a_codex_call_the_hook_logged_is_not_logged_again(store: Path, tmp_path: Path) -> None:
    payload = {"session_id": "01a21e32-7f8c-4bd1-9b1a-2f0c1d2e3f40", "turn_id": "t1",
               "cwd": str(store), "hook_event_name": "PostToolUse", "model": "fake-model",
               "tool_name": "Bash", "tool_input": {"command": "echo hello"},
               "tool_response": "hello\n", "tool_use_id": "call_3"}  # fmt: skip
    env = clean_env(store, LORE_HOOK_DETACH="0")
    assert lore("hook", "codex", "PostToolUse", env=env, stdin=json.dumps(payload)).code == 0
    write_rollout(tmp_path / "codex", rollout(store))
    done = run_import(store, tmp_path, "codex")
    assert done.code == 0, done.err
    calls = [r for r in stored(store) if r.get("type") == "tool_call"]
    assert sorted(c["context"]["tool_use_id"] for c in calls) == ["call_3", "call_4"]


@pytest.mark.parametrize("bad", ["not json at all", "[1, 2]"])
def test_a_bad_codex_line_is_named(store: Path, tmp_path: Path, bad: str) -> None:
    path = write_rollout(tmp_path / "codex", rollout(store))
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join([*lines[:2], bad + "\n", *lines[2:]]), encoding="utf-8")
    done = lore("import", "codex", env=env_for(store, tmp_path))
    assert done.code == 1
    assert done.err.strip().splitlines()[0].startswith(f"lore import: {path}:3: not a JSON")
    assert len([r for r in stored(store) if r.get("type") == "tool_call"]) == 2


def test_a_subagents_calls_land_in_its_session(store: Path, tmp_path: Path) -> None:
    """Claude Code keeps a subagent's transcript beside its session; its hooks fire in the
    parent session, so its calls are imported there, in time order."""
    session = picked()[0]
    path = place(session, tmp_path / "claude", store)
    base = {"sessionId": session["id"], "isSidechain": True, "agentId": "a1b2c3",
            "cwd": str(store), "timestamp": "2026-02-03T04:00:00.000Z"}  # fmt: skip
    lines = [
        {**base, "type": "user", "message": {"role": "user", "content": "look at the tests"}},
        {**base, "type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_01SUBAGENT", "name": "Grep",
             "input": {"pattern": "TestRun"}}]}},
        {**base, "type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_01SUBAGENT", "content": "a_test.go"}]},
         "toolUseResult": {"mode": "files_with_matches", "filenames": ["a_test.go"]}},
    ]  # fmt: skip
    folder = path.parent / session["id"] / "subagents"
    folder.mkdir(parents=True)
    (folder / "agent-a1b2c3.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    done = run_import(store, tmp_path, "claude")
    assert done.code == 0, done.err
    records = stored(store)
    calls = [r for r in records if r.get("type") == "tool_call"]
    assert len(calls) == len(hooked_calls(path)) + 1
    sub = [c for c in calls if c["context"]["tool_use_id"] == "toolu_01SUBAGENT"]
    assert len(sub) == 1 and sub[0]["session"] == session["id"]
    assert sub[0]["ts"] == "2026-02-03T04:00:00.000Z"
    # the subagent's prompt is its Task's, not the person's
    assert "look at the tests" not in [(r.get("context") or {}).get("prompt") for r in records]
    assert run_import(store, tmp_path, "claude").json()["actions_written"] == 0


def test_usage_errors_are_one_line(repo: Path, tmp_path: Path) -> None:
    env = env_for(repo, tmp_path)
    no_store = lore("import", "claude", env=env)
    assert no_store.code == 1 and no_store.out == ""
    assert no_store.err.strip().splitlines() == [
        f"lore: error: no lorebook store in {repo}: run `lore init` first"
    ]
    assert lore("init", env=env).code == 0
    bad = lore("import", "claude", "--since", "lately", env=env)
    assert bad.code == 1 and len(bad.err.strip().splitlines()) == 1
    assert bad.err.startswith("lore: error: --since 'lately'")
    unknown = lore("import", "cursor", env=env)
    assert unknown.code == 1 and "invalid choice: 'cursor'" in unknown.err


def test_a_codex_prompt_in_either_form_is_one_prompt() -> None:
    """Codex 0.171 writes the prompt as an `item_completed` UserMessage; older versions as a
    `user_message` event; a version writing both gives one prompt, then the turn's end."""
    from lorebook.hooks.importer import codex

    at = "2026-11-28T05:06:58.000Z"
    item = {
        "type": "UserMessage",
        "id": "u1",
        "content": [{"type": "text", "text": "run the tests", "text_elements": []}],
    }
    lines = [
        {"timestamp": at, "type": "session_meta", "payload": {"id": "s1"}},
        {"timestamp": at, "type": "event_msg", "payload": {"type": "item_completed", "item": item}},
        {
            "timestamp": at,
            "type": "event_msg",
            "payload": {"type": "user_message", "message": "run the tests"},
        },
        {"timestamp": at, "type": "event_msg", "payload": {"type": "task_complete"}},
    ]
    names = [(e.name, e.fields.get("prompt")) for e in codex.events(lines)]
    assert names == [("SessionStart", None), ("UserPromptSubmit", "run the tests"), ("Stop", None)]
