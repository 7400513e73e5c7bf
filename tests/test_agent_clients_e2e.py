"""The real Codex, Gemini, Copilot, Cline and OpenCode CLIs, headless and offline against a
scripted model on 127.0.0.1 (tests/scripted_wires.py), each with lorebook's hooks wired by
`lore hooks install CLIENT --scope project`: what lorebook logs from the client's real payloads,
and what context of lorebook's reaches the client's model.

One run per client (a module-scoped fixture), several assertions on it. The clients are
installed, pinned, by .ci/run into $LORE_AGENTS_DIR; a missing one is skipped here and fails
under LORE_REQUIRE_REAL=1."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conftest import clean_env, git, lore, require_real, rls_lesson, stored, wait_for
from lorebook import Lorebook
from scripted_wires import Wires, scripted_wires

VERSIONS = {  # the npm package and the version each client is tested at (.ci/run installs them)
    "codex": ("@openai/codex", "0.171.0"),
    "gemini": ("@google/gemini-cli", "0.61.0"),
    "copilot": ("@github/copilot", "1.0.102"),
    "cline": ("cline", "3.0.65"),
    "opencode": ("opencode-ai", "1.18.33"),
}
SOURCES = {"codex": "codex", "gemini": "gemini-cli", "copilot": "copilot-cli", "cline": "cline",
           "opencode": "opencode"}  # fmt: skip
# the events each client fires in a one-shot headless run (agent-clients.md): Cline and OpenCode
# have no session end there (Cline's SessionShutdown does not fire, OpenCode has none)
ENDS = {"codex", "gemini", "copilot"}
# where the client reads context from a hook's answer at session start or prompt (Cline only at
# PostToolUse, where lorebook answers nothing)
INJECTS = {"codex", "gemini", "copilot", "opencode"}

SECRET = "ghp_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"
COMMAND = 'echo "deploy note: $DEPLOY_NOTE"'  # the secret reaches the output through the env
PROMPT = "Why does the supabase insert fail with RLS? Run the deploy note check."


def agents_dir() -> Path:
    return Path(os.environ.get("LORE_AGENTS_DIR") or
                Path.home() / ".cache" / "lorebook-test" / "agents")  # fmt: skip


def agent_bin(client: str) -> Path:
    found = agents_dir() / "node_modules" / ".bin" / client
    if not found.exists():
        package, version = VERSIONS[client]
        require_real(f"{client} CLI not installed: npm install --prefix {agents_dir()} "
                     f"{package}@{version}")  # fmt: skip
    return found


@dataclass
class Outcome:
    """One headless run of a client: its store, home, output and the model's requests."""

    client: str
    repo: Path
    home: Path
    wires: Wires
    out: str
    err: str
    lesson: str

    def records(self) -> list[dict[str, Any]]:
        return stored(self.repo)

    def calls(self) -> list[dict[str, Any]]:
        return [r for r in self.records() if r.get("type") == "tool_call"]

    def diagnose(self) -> str:
        log = self.repo / ".lore" / "cache" / "hooks.log"
        hooks = log.read_text(errors="replace")[-2000:] if log.exists() else ""
        return f"stdout: {self.out[-1500:]}\nstderr: {self.err[-1500:]}\nhooks.log: {hooks}"


def lore_store(repo: Path) -> str:
    """A store with one published lesson about the prompt; its id is the marker looked for in
    the model's requests."""
    git(repo, "init", "-q", "-b", "main")
    (repo / "README.md").write_text("# sample\n")
    Lorebook.init(repo, env={})
    # a loaded CI machine may take longer than the 1 s default to import the search stack
    (repo / ".lore" / "config.yaml").write_text("hooks:\n  budget_seconds: 60\n")
    book = Lorebook.open(repo, env={})
    lesson = rls_lesson(book)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "lorebook")
    return lesson


def install_hooks(client: str, repo: Path, env: dict[str, str]) -> None:
    """`lore hooks install CLIENT --scope project`, recording a command that runs this tree's
    lorebook (its PYTHONPATH kept even where a client trims a hook's environment)."""
    runner = repo.parent / "run-lore"
    path = os.environ.get("PYTHONPATH")
    runner.write_text("#!/bin/sh\n" + (f"PYTHONPATH='{path}'; export PYTHONPATH\n" if path else "")
                      + f"exec '{sys.executable}' -m lorebook \"$@\"\n")  # fmt: skip
    runner.chmod(0o755)
    done = lore("hooks", "install", client, "--scope", "project", "--command", str(runner),
                cwd=repo, env=env)  # fmt: skip
    assert done.code == 0, done.err
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", f"lorebook hooks for {client}")


def write_json(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2) + "\n")


# -- each client: its model endpoint, its trust gates, its headless command ---------------------
def codex(
    repo: Path, home: Path, url: str, prompt: str = PROMPT
) -> tuple[list[str], dict[str, str]]:
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(
        'model = "fake-model"\nmodel_provider = "fake"\n'
        f'[model_providers.fake]\nname = "fake"\nbase_url = "{url}/v1"\n'
        'env_key = "FAKE_API_KEY"\nwire_api = "responses"\n'
        f'[projects."{repo}"]\ntrust_level = "trusted"\n')  # fmt: skip
    command = [str(agent_bin("codex")), "exec", "--json", "--skip-git-repo-check",
               "--dangerously-bypass-hook-trust", "--dangerously-bypass-approvals-and-sandbox",
               prompt]  # fmt: skip
    return command, {"CODEX_HOME": str(codex_home), "FAKE_API_KEY": "sk-fake"}


def gemini(
    repo: Path, home: Path, url: str, prompt: str = PROMPT
) -> tuple[list[str], dict[str, str]]:
    write_json(home / ".gemini" / "settings.json",
               {"security": {"auth": {"selectedType": "gemini-api-key"}}})  # fmt: skip
    command = [str(agent_bin("gemini")), "-p", prompt, "-m", "gemini-2.5-flash", "--yolo",
               "--output-format", "json"]  # fmt: skip
    return command, {"GEMINI_CLI_HOME": str(home), "GEMINI_API_KEY": "fake-key",
                     "GOOGLE_GEMINI_BASE_URL": url,
                     "GEMINI_CLI_TRUST_WORKSPACE": "true"}  # fmt: skip


def copilot(
    repo: Path, home: Path, url: str, prompt: str = PROMPT
) -> tuple[list[str], dict[str, str]]:
    command = [str(agent_bin("copilot")), "-p", prompt, "--allow-all-tools", "--trust-folder",
               "--output-format", "json"]  # fmt: skip
    return command, {"COPILOT_HOME": str(home / ".copilot"), "COPILOT_OFFLINE": "true",
                     "COPILOT_PROVIDER_BASE_URL": f"{url}/v1",
                     "COPILOT_PROVIDER_API_KEY": "sk-fake", "COPILOT_MODEL": "gpt-4.1",
                     "COPILOT_AUTO_UPDATE": "false",
                     # where it unpacks itself (235 MB) on a first run: once, beside the install
                     "XDG_CACHE_HOME": str(agents_dir() / ".copilot-cache")}  # fmt: skip


def cline(
    repo: Path, home: Path, url: str, prompt: str = PROMPT
) -> tuple[list[str], dict[str, str]]:
    env = clean_env(HOME=str(home), CLINE_SESSION_BACKEND_MODE="local", CLINE_NO_AUTO_UPDATE="1")
    binary = str(agent_bin("cline"))
    done = subprocess.run(
        [binary, "auth", "-p", "openai-compatible", "-k", "sk-fake", "-m", "fake-model", "-b",
         f"{url}/v1"], cwd=repo, env=env, stdin=subprocess.DEVNULL, capture_output=True,
        text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-2000:])
    return [binary, prompt, "--json", "-c", str(repo)], {
        "CLINE_SESSION_BACKEND_MODE": "local", "CLINE_NO_AUTO_UPDATE": "1"}  # fmt: skip


def opencode(
    repo: Path, home: Path, url: str, prompt: str = PROMPT
) -> tuple[list[str], dict[str, str]]:
    write_json(home / ".config" / "opencode" / "opencode.json", {
        "model": "fake/fake-model",
        "provider": {"fake": {"npm": "@ai-sdk/openai-compatible",
                              "options": {"baseURL": f"{url}/v1", "apiKey": "sk-fake"},
                              "models": {"fake-model": {"tool_call": True}}}},
        "permission": {"bash": "allow", "edit": "allow"}})  # fmt: skip
    command = [str(agent_bin("opencode")), "run", prompt, "--format", "json", "--auto"]
    return command, {
        "XDG_CONFIG_HOME": str(home / ".config"), "XDG_DATA_HOME": str(home / ".local/share"),
        "XDG_CACHE_HOME": str(home / ".cache"), "XDG_STATE_HOME": str(home / ".local/state"),
        "OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "1", "OPENCODE_DISABLE_SHARE": "1",
        # its startup npm install of the plugin SDK fails at once, offline (not after a minute
        # of retries); the plugin imports nothing
        "npm_config_registry": "http://127.0.0.1:9/", "npm_config_offline": "true",
        "npm_config_fetch_retries": "0"}  # fmt: skip


SETUP = {"codex": codex, "gemini": gemini, "copilot": copilot, "cline": cline,
         "opencode": opencode}  # fmt: skip


def headless(client: str, base: Path) -> Outcome:
    """One headless session of the client, in a temp HOME and a temp repo with a store."""
    agent_bin(client)
    repo, home = base / "repo", base / "home"
    repo.mkdir()
    home.mkdir()
    lesson = lore_store(repo)
    with scripted_wires() as wires:
        wires.commands = [COMMAND]
        wires.final = "The insert fails under RLS."
        command, extra = SETUP[client](repo, home, wires.url)
        # PWD too: OpenCode takes its project from $PWD, not from the working directory
        env = clean_env(HOME=str(home), PWD=str(repo), DEPLOY_NOTE=SECRET, **extra)
        install_hooks(client, repo, env)
        done = subprocess.run(command, cwd=repo, env=env, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=300)  # fmt: skip
        outcome = Outcome(client, repo, home, wires, done.stdout, done.stderr, lesson)
        assert done.returncode == 0, outcome.diagnose()
        # the detached capture of the last events may still be writing
        wait_for(lambda: outcome.calls() and len(
            [r for r in outcome.records() if r.get("event") == "end"]
        ) >= (2 if client in ENDS else 1))  # fmt: skip
    return outcome


@pytest.fixture(scope="module", params=list(SETUP))
def run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Outcome:
    client: str = request.param
    return headless(client, tmp_path_factory.mktemp(client))


def test_the_scripted_command_is_logged_once_as_bash(run: Outcome) -> None:
    assert run.wires.calls, f"the model was never offered a shell tool\n{run.diagnose()}"
    calls = run.calls()
    assert len(calls) == 1, f"{calls}\n{run.diagnose()}"
    call = calls[0]
    assert call["context"]["tool"] == "Bash", call
    assert call["context"]["command"] == COMMAND, call
    assert call["meta"]["source"].startswith(SOURCES[run.client] + ":"), call["meta"]
    assert call["outcome"] == "success", call


def test_the_session_is_one_and_started_and_ended(run: Outcome) -> None:
    records = run.records()
    call = run.calls()[0]
    session = [r for r in records if r["session"] == call["session"]]
    starts = [r for r in session if r.get("event") == "start" and r["session_type"] == "hook"]
    assert starts, records
    assert all(r["meta"]["source"].startswith(SOURCES[run.client] + ":") for r in session
               if r.get("meta", {}).get("source"))  # fmt: skip
    if run.client in INJECTS:  # Cline fires no UserPromptSubmit for a one-shot prompt
        prompts = [r["context"]["prompt"] for r in session if r.get("type") == "prompt"]
        assert len(prompts) == 1 and PROMPT in prompts[0], prompts  # OpenCode quotes it
    ends = [r.get("reason") for r in session if r.get("event") == "end"]
    assert "stop" in ends, records  # the turn's end: Stop, AfterAgent, agentStop, TaskComplete…
    if run.client in ENDS:
        assert [e for e in ends if e != "stop"], records  # and the session's


def test_no_secret_reaches_the_store(run: Outcome) -> None:
    everything = "\n".join(p.read_text(errors="replace") for p in run.repo.rglob("*")
                           if p.is_file() and ".git" not in p.parts)  # fmt: skip
    assert SECRET not in everything and SECRET[:12] not in everything
    # the command printed it (Copilot masks it for its model, not for its hooks): redacted
    assert "[REDACTED" in json.dumps(run.calls()[0]["context"].get("response")), run.calls()


def test_a_published_lesson_reaches_the_model_where_the_agent_takes_context(
    run: Outcome,
) -> None:
    """Where the agent reads a hook's answer at the prompt, the lesson is in a request; Cline
    3.0.65 reads none there (docs/agents.md), and the lesson is in none of its requests."""
    if run.client in INJECTS:
        assert run.wires.seen(run.lesson), run.diagnose()
    else:
        assert not run.wires.seen(run.lesson), run.diagnose()


def test_an_opencode_session_id_is_not_refused_as_a_secret(store: Path) -> None:
    """OpenCode's session ids (`ses_` + 12 hex + 14 base62, capitals included) read as a
    generated key to the identifier check: every hook of a real OpenCode session was refused
    ("looks like a secret") and nothing was logged. The payload is one OpenCode 1.18 sent. The
    id recorded is named as it is in a brief, not redacted (lower-cased, it mostly was)."""
    payload = {"input": {"tool": "bash", "sessionID": "ses_ddf98efd6ffeym8TGJ0rxu0Ccx",
                         "callID": "call_3", "args": {"command": "echo hello-from-fake"}},
               "output": {"title": "echo hello-from-fake", "output": "hello-from-fake\n",
                          "metadata": {"output": "hello-from-fake\n", "exit": 0,
                                       "truncated": False}},
               "directory": str(store)}  # fmt: skip
    done = lore("hook", "opencode", "tool.execute.after", cwd=store, env=clean_env(),
                stdin=json.dumps(payload))  # fmt: skip
    assert done.code == 0, done.err
    calls = wait_for(lambda: [r for r in stored(store) if r.get("type") == "tool_call"])
    log = store / ".lore" / "cache" / "hooks.log"
    assert calls, log.read_text() if log.exists() else "no record, no hooks.log"
    session = calls[0]["session"]
    assert session.startswith("ses_"), session
    assert bytes.fromhex(session[4:]) == b"ddf98efd6ffeym8TGJ0rxu0Ccx"  # OpenCode's id, back
    assert calls[0]["context"]["command"] == "echo hello-from-fake"


def test_copilot_reporting_a_call_both_ways_logs_it_once(tmp_path: Path) -> None:
    """Copilot CLI also runs Claude-compatible (flat PascalCase) hook entries, with Claude-like
    payloads: a repository wired both ways (lorebook's Copilot hooks, and Claude-style entries
    calling `lore hook post-tool-use`) reports each call twice, and neither payload carries a
    call id (it was logged twice); the hook's timestamp, the same in both, keys it: once."""
    agent_bin("copilot")
    repo, home = tmp_path / "repo", tmp_path / "home"
    repo.mkdir()
    home.mkdir()
    lore_store(repo)
    with scripted_wires() as wires:
        wires.commands = [COMMAND]
        command, extra = copilot(repo, home, wires.url)
        env = clean_env(HOME=str(home), PWD=str(repo), DEPLOY_NOTE=SECRET, **extra)
        install_hooks("copilot", repo, env)
        claude_style = {e: [{"type": "command", "bash": f"sh {repo}/.lore/bin/lore hook {n}"}]
                        for e, n in (("PostToolUse", "post-tool-use"),
                                     ("SessionStart", "session-start"))}  # fmt: skip
        write_json(repo / ".github" / "hooks" / "claude-style.json",
                   {"version": 1, "hooks": claude_style})  # fmt: skip
        done = subprocess.run(command, cwd=repo, env=env, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=300)  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
    outcome = Outcome("copilot", repo, home, wires, done.stdout, done.stderr, "")
    assert wait_for(lambda: len([r for r in outcome.records() if r.get("event") == "end"]) >= 2)
    time.sleep(1)  # a second delivery, were there one, has had time to land
    calls = outcome.calls()
    assert len(calls) == 1, calls
    assert calls[0]["meta"]["source"].startswith("copilot-cli:")
    starts = [r for r in outcome.records() if r.get("event") == "start"]
    assert len(starts) == 1, starts


def test_a_copilot_call_in_both_payload_forms_is_logged_once(store: Path) -> None:
    """The two payloads Copilot CLI 1.0.102 sent for one call (its camelCase hook and its
    Claude-like PascalCase one), with no call id in either: one record."""
    args = {"command": "echo hello-from-fake", "description": "say hello"}
    camel = {
        "sessionId": "34f836af-0c2e-4a8e-9d0e-7d3b1c2a9f10",
        "timestamp": 1795840801243,
        "cwd": str(store),
        "toolName": "bash",
        "toolArgs": args,
        "toolResult": {"resultType": "success", "textResultForLlm": "hello-from-fake\n"},
    }
    result = {"result_type": "success", "text_result_for_llm": "hello-from-fake\n"}
    pascal = {
        "hook_event_name": "PostToolUse",
        "session_id": camel["sessionId"],
        "timestamp": "2026-11-28T04:40:01.243Z",
        "cwd": str(store),
        "tool_name": "Bash",
        "tool_input": args,
        "tool_result": result,
    }
    env = clean_env(COPILOT_HOOK_DIR=str(store / ".github" / "hooks"))
    for args_, payload in ((("copilot", "postToolUse"), camel), (("post-tool-use",), pascal)):
        done = lore("hook", *args_, cwd=store, env=env, stdin=json.dumps(payload))
        assert done.code == 0, done.err
    assert wait_for(lambda: [r for r in stored(store) if r.get("type") == "tool_call"])
    time.sleep(1)  # the other delivery's detached write has landed, were it logged
    calls = [r for r in stored(store) if r.get("type") == "tool_call"]
    assert len(calls) == 1, calls
    assert calls[0]["meta"]["source"] == "copilot-cli:post-tool-use"


def test_the_next_sessions_first_request_carries_the_brief(run: Outcome) -> None:
    """A second session in the same repository: the brief of the first (its session id) is in
    the first request the model gets, where the agent takes context at session start."""
    first = run.calls()[0]["session"]
    with scripted_wires() as wires:
        wires.final = "Noted."
        command, extra = SETUP[run.client](run.repo, run.home, wires.url, "Where were we?")
        env = clean_env(HOME=str(run.home), PWD=str(run.repo), **extra)
        done = subprocess.run(command, cwd=run.repo, env=env, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=300)  # fmt: skip
        assert done.returncode == 0, (done.stdout[-1500:], done.stderr[-1500:])
    asked = [r for r in wires.requests if r.body.get("tools") and "Where were we?" in r.text()]
    assert asked, [r.path for r in wires.requests]
    briefed = f"Resume: session {first}" in asked[0].text()
    assert briefed == (run.client in INJECTS), asked[0].text()[-3000:]  # Cline takes none


def test_lore_import_codex_adds_nothing_the_hooks_logged_and_the_rest_from_the_rollout(
    tmp_path: Path,
) -> None:
    """`lore import codex` on Codex's real rollout file: after a session the hooks logged it adds
    nothing; on the store as it was before the hooks ran it brings the same tool call in."""
    run = headless("codex", tmp_path)
    env = clean_env(HOME=str(run.home), CODEX_HOME=str(run.home / ".codex"))
    assert list((run.home / ".codex" / "sessions").rglob("rollout-*.jsonl")), run.diagnose()
    before = run.records()
    done = lore("import", "codex", cwd=run.repo, env=env)
    assert done.code == 0, done.err
    assert run.records() == before, done.out
    assert len(run.calls()) == 1

    for shard in (run.repo / "actionlog").rglob("*.jsonl"):  # as if no hook had run
        shard.unlink()
    shutil.rmtree(run.repo / ".lore" / "cache", ignore_errors=True)
    done = lore("import", "codex", cwd=run.repo, env=env)
    assert done.code == 0, done.err
    calls = run.calls()
    assert len(calls) == 1, (done.out, calls)
    assert calls[0]["context"]["tool"] == "Bash"
    assert calls[0]["context"]["command"] == COMMAND
    assert calls[0]["session"] == before[0]["session"]
    assert calls[0]["meta"]["source"].startswith("codex"), calls[0]["meta"]
    records = run.records()  # the turn around the call: its prompt, then its end
    (prompt,) = [r for r in records if r.get("type") == "prompt"]
    assert prompt["context"]["prompt"].startswith("Why does the supabase insert fail")
    assert [r.get("reason") for r in records if r.get("event") == "end"] == ["stop"]
    everything = "\n".join(p.read_text(errors="replace") for p in run.repo.rglob("*")
                           if p.is_file() and ".git" not in p.parts)  # fmt: skip
    assert SECRET not in everything and SECRET[:12] not in everything
    again = lore("import", "codex", cwd=run.repo, env=env)
    assert again.code == 0 and len(run.calls()) == 1, again.out


def opencode_hook(store: Path, event: str, payload: dict[str, Any]) -> str:
    done = lore("hook", "opencode", event, cwd=store, env=clean_env(),
                stdin=json.dumps({**payload, "directory": str(store)}))  # fmt: skip
    assert done.code == 0, done.err
    return done.out


def test_an_opencode_session_is_named_in_the_next_brief(store: Path) -> None:
    """The next session's brief names the OpenCode session it resumes (`Resume: session …`),
    not a redaction marker, whatever random letters OpenCode's id holds."""
    for n, sid in enumerate(("ses_ddf826946ffeCBCo5wBeszcvk6", "ses_ddf9d43c6ffeyYRCJbHGk8RU7f")):
        created = {"type": "session.created", "properties": {"info": {"id": sid}}}
        opencode_hook(store, "session.created", {"event": created})
        opencode_hook(store, "tool.execute.after", {
            "input": {"tool": "bash", "sessionID": sid, "callID": f"call_{n}",
                      "args": {"command": "make test"}},
            "output": {"output": "ok\n", "metadata": {"exit": 0}}})  # fmt: skip
        calls = wait_for(lambda n=n: [r for r in stored(store) if r.get("type") == "tool_call"][n:])
        assert calls, n
        following = {"type": "session.created", "properties": {"info": {"id": f"ses_next{n}"}}}
        brief = json.loads(opencode_hook(store, "session.created", {"event": following}))
        text = brief["additionalContext"]
        assert f"Resume: session {calls[0]['session']}" in text, text
        assert "REDACTED" not in text, text
