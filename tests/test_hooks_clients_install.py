"""`lore hooks install|uninstall|status CLIENT` for every client, on real files in temp git
repositories with the real `lore`: the user's own entries kept, a rerun changing nothing, a
broken or symlinked file refused untouched, `--dry-run` writing nothing, uninstall restoring
the user's file, and every installed command run as its client runs it (a shell, the client's
variables, no virtual environment) landing a record that says which client wrote it.

The client binaries are not needed here (their own end-to-end tests run them); Cursor cannot
be installed at all, so its files are proven this way only.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from conftest import assert_one_error_line, clean_env, lore, stored_actions
from lorebook.hooks.admin import CLIENTS as WIRED
from lorebook.hooks.launcher import LAUNCHER, RECORD
from test_hooks import bash_payload

HOMES = ("CODEX_HOME", "COPILOT_HOME", "GEMINI_CLI_HOME")


class Client(NamedTuple):
    """What a test needs to know of one client."""

    main: str  # the hook file, under the repository (project) or the client's home (user)
    mcp: str | None  # the MCP file when it is another one
    user: Callable[[Path], Path]  # the client's user folder, from the temp home
    given: dict[str, Any]  # the user's own hook file
    given_mcp: dict[str, Any] | None
    events: int  # how many of its events install wires
    command: Callable[[dict[str, Any]], str]  # the post-tool-use command in the hook file
    variables: Callable[[Path], dict[str, str]]  # what the client sets for its hooks
    payload: Callable[[Path], str]  # a real post-tool-use payload
    source: str  # meta.source's prefix


def claude_command(config: dict[str, Any]) -> str:
    return str(config["hooks"]["PostToolUse"][-1]["hooks"][0]["command"])


def grouped(event: str) -> Callable[[dict[str, Any]], str]:
    return lambda config: str(config["hooks"][event][-1]["hooks"][0]["command"])


def flat(event: str, key: str) -> Callable[[dict[str, Any]], str]:
    return lambda config: str(config["hooks"][event][-1][key])


USER_MCP = {"mcpServers": {"db": {"command": "pg-mcp", "args": ["--read-only"]}}}

CLIENTS = {
    "claude": Client(
        ".claude/settings.json", ".mcp.json", lambda home: home / ".claude",
        {"model": "opus", "hooks": {"PostToolUse": [{"matcher": "Write", "hooks": [
            {"type": "command", "command": "npx prettier --write"}]}]}},
        USER_MCP, 9, claude_command,
        lambda repo: {"CLAUDE_PROJECT_DIR": str(repo)},
        lambda repo: bash_payload(repo, "hello"), "claude-code",
    ),
    "codex": Client(
        ".codex/hooks.json", None, lambda home: home / "codex-home",
        {"hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "./audit.sh", "timeout": 30}]}]}},
        None, 8, grouped("PostToolUse"),
        lambda repo: {},  # Codex sets no project variable: the working directory it is
        lambda repo: json.dumps({
            "session_id": "01a21e32-codex", "turn_id": "01a21e32-t", "cwd": str(repo),
            "transcript_path": str(repo / "rollout.jsonl"), "hook_event_name": "PostToolUse",
            "model": "fake-model", "permission_mode": "bypassPermissions", "tool_name": "Bash",
            "tool_input": {"command": "echo hello-from-fake"},
            "tool_response": "hello-from-fake\n", "tool_use_id": "call_3"}),
        "codex",
    ),
    "gemini": Client(
        ".gemini/settings.json", None, lambda home: home / "gemini-home" / ".gemini",
        {"model": {"name": "gemini-2.5-pro"}, "hooks": {"AfterTool": [{"matcher": "write_file",
         "hooks": [{"type": "command", "command": "./fmt.sh"}]}]}, **USER_MCP},
        None, 5, grouped("AfterTool"),
        lambda repo: {"GEMINI_PROJECT_DIR": str(repo), "CLAUDE_PROJECT_DIR": str(repo)},
        lambda repo: json.dumps({
            "session_id": "e9efec34-gemini", "transcript_path": str(repo / "s.jsonl"),
            "cwd": str(repo), "hook_event_name": "AfterTool",
            "timestamp": "2026-11-27T18:09:11.881Z", "tool_name": "run_shell_command",
            "tool_input": {"command": "echo hello-from-fake", "description": "say hello"},
            "tool_response": {"llmContent": "Output: hello-from-fake",
                              "returnDisplay": "hello-from-fake"}}),
        "gemini-cli",
    ),
    "copilot": Client(
        ".github/hooks/lorebook.json", ".github/mcp.json", lambda home: home / "copilot-home",
        {"version": 1, "hooks": {"postToolUse": [{"type": "command", "bash": "./audit.sh"}]}},
        {"mcpServers": {"db": {"type": "local", "command": "pg-mcp", "args": [],
                               "tools": ["*"]}}},
        9, flat("postToolUse", "bash"),
        lambda repo: {"COPILOT_PROJECT_DIR": str(repo), "CLAUDE_PROJECT_DIR": str(repo),
                      "COPILOT_HOOK_DIR": str(repo / ".github" / "hooks")},
        lambda repo: json.dumps({
            "sessionId": "34f836af-copilot", "timestamp": 1795802956221, "cwd": str(repo),
            "toolName": "bash",
            "toolArgs": {"command": "echo hello-from-fake", "description": "say hello"},
            "toolResult": {"resultType": "success",
                           "textResultForLlm": "hello-from-fake\n<exit code 0>"}}),
        "copilot-cli",
    ),
    "cursor": Client(
        ".cursor/hooks.json", ".cursor/mcp.json", lambda home: home / ".cursor",
        {"version": 1, "hooks": {"afterFileEdit": [{"command": "./fmt.sh"}]}},
        USER_MCP, 9, flat("postToolUse", "command"),
        lambda repo: {"CURSOR_PROJECT_DIR": str(repo)},
        lambda repo: json.dumps({
            "conversation_id": "c0nv-cursor", "generation_id": "gen-1",
            "hook_event_name": "postToolUse", "cursor_version": "1.7.2",
            "workspace_roots": [str(repo)], "tool_name": "run_terminal_cmd",
            "tool_input": {"command": "echo hello-from-fake"},
            "tool_output": "hello-from-fake\n", "tool_use_id": "tool_7", "duration": 12}),
        "cursor",
    ),
}  # fmt: skip
NAMES = sorted(CLIENTS)


def homes(tmp_path: Path) -> dict[str, str]:
    """Every client's user folder inside the test's temp home."""
    home = tmp_path / "home"
    return {"HOME": str(home), "CODEX_HOME": str(home / "codex-home"),
            "COPILOT_HOME": str(home / "copilot-home"),
            "GEMINI_CLI_HOME": str(home / "gemini-home")}  # fmt: skip


def hooks(repo: Path, *args: str) -> Any:
    return lore("hooks", *args, cwd=repo, env=clean_env(**homes(repo.parent)))


def ok(run: Any) -> Any:
    assert run.code == 0, run.err
    return run


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def files_of(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and ".git" not in p.parts}  # fmt: skip


def given(repo: Path, name: str) -> list[Path]:
    """The user's own config files for `name`, written before any install."""
    spec = CLIENTS[name]
    written = []
    for rel, value in ((spec.main, spec.given), (spec.mcp, spec.given_mcp)):
        if rel and value is not None:
            path = repo / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(value, indent=4))
            written.append(path)
    return written


# -- install, rerun, uninstall -----------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_install_keeps_the_users_entries_reruns_idempotently_and_uninstall_restores_them(
    repo: Path, name: str
) -> None:
    spec = CLIENTS[name]
    mine = given(repo, name)
    ok(hooks(repo, "install", name))
    config = read_json(repo / spec.main)
    wired = json.loads(ok(hooks(repo, "status", name, "--json")).out)["clients"]
    assert len(wired[0]["hooks"]) == spec.events and wired[0]["scope"] == "project"
    event = next(iter(spec.given["hooks"]))
    assert config["hooks"][event][0] == spec.given["hooks"][event][0]  # the user's, first
    mcp_path = repo / (spec.mcp or spec.main)
    if name == "codex":
        servers = tomllib.loads((repo / ".codex" / "config.toml").read_text())["mcp_servers"]
    else:
        servers = read_json(mcp_path)["mcpServers"]
    assert servers["lore"]["args"][-1] == "mcp"
    if spec.given_mcp or name == "gemini":
        assert servers["db"] == USER_MCP["mcpServers"]["db"] or name == "copilot"
    assert (repo / LAUNCHER).is_file() and (repo / RECORD).is_file()

    before = files_of(repo)
    again = ok(hooks(repo, "install", name))
    assert "nothing to change" in again.out and files_of(repo) == before

    ok(hooks(repo, "uninstall", name))
    for path in mine:
        original = spec.given if path == repo / spec.main else spec.given_mcp
        assert read_json(path) == original
    if name == "codex":
        assert not (repo / ".codex" / "config.toml").exists()  # the file install created
    assert not (repo / LAUNCHER).exists() and not (repo / RECORD).exists()


@pytest.mark.parametrize("name", NAMES)
def test_user_scope_writes_the_clients_own_home_and_nothing_in_the_repository(
    repo: Path, name: str
) -> None:
    spec = CLIENTS[name]
    folder = spec.user(repo.parent / "home")
    done = ok(hooks(repo, "install", name, "--scope", "user"))
    assert str(folder) in done.out
    written = [p for p in folder.rglob("*") if p.is_file()]
    assert written, done.out
    text = "\n".join(p.read_text() for p in written)
    assert "/.lore/bin/lore" not in text  # a user's file runs this install, absolute
    assert set(files_of(repo)) == {"README.md"}
    wired = json.loads(ok(hooks(repo, "status", name, "--json")).out)["clients"]
    user = next(w for w in wired if w["scope"] == "user")
    assert len(user["hooks"]) == spec.events and user["problems"] == []
    assert user["mcp"] is (name != "claude")  # Claude's user servers: `claude mcp add`
    ok(hooks(repo, "uninstall", name, "--scope", "user"))
    assert not [p for p in folder.rglob("*") if p.is_file()]


# -- refusals and dry runs ---------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_a_broken_file_is_refused_untouched_with_its_line(repo: Path, name: str) -> None:
    path = repo / CLIENTS[name].main
    path.parent.mkdir(parents=True)
    broken = b'{\n  "hooks": {\n    "Stop": [,]\n}\n'
    path.write_bytes(broken)
    assert_one_error_line(hooks(repo, "install", name), str(path), ":3:", "invalid JSON")
    assert path.read_bytes() == broken
    assert set(files_of(repo)) == {"README.md", CLIENTS[name].main}


@pytest.mark.parametrize("name", NAMES)
def test_dry_run_prints_the_diff_and_writes_nothing(repo: Path, name: str) -> None:
    done = ok(hooks(repo, "install", name, "--dry-run"))
    assert f"+++ {repo / CLIENTS[name].main}" in done.out
    assert f"hook {name}" in done.out or name == "claude"
    assert "would record" in done.out
    assert set(files_of(repo)) == {"README.md"} and not (repo / ".lore").exists()


@pytest.mark.parametrize("name", NAMES)
def test_a_symlinked_config_is_refused(repo: Path, tmp_path: Path, name: str) -> None:
    outside = tmp_path / "elsewhere.json"
    outside.write_text("{}")
    path = repo / CLIENTS[name].main
    path.parent.mkdir(parents=True)
    path.symlink_to(outside)
    assert_one_error_line(hooks(repo, "install", name), str(path), "symlink")
    assert outside.read_text() == "{}" and not (repo / ".lore").exists()


# -- every installed command runs -----------------------------------------------------------------
def no_venv(tmp_path: Path, **extra: str) -> dict[str, str]:
    """As the client started from a shell without the virtual environment: PATH holds only
    `sh`, so only the launcher's record reaches lore (this checkout's sources by PYTHONPATH)."""
    only_sh = tmp_path / "only-sh"
    only_sh.mkdir(exist_ok=True)
    if not (only_sh / "sh").exists():
        (only_sh / "sh").symlink_to("/bin/sh")
    env = {k: v for k, v in clean_env(**extra).items()
           if k not in ("VIRTUAL_ENV", "PYTHONHOME", *HOMES)}  # fmt: skip
    env.update(PATH=str(only_sh), LORE_HOOK_DETACH="0",
               PYTHONPATH=os.environ.get("PYTHONPATH", ""))  # fmt: skip
    return env


def as_gemini_runs_it(command: str, cwd: Path) -> str:
    """Gemini CLI replaces `$GEMINI_PROJECT_DIR` and `$CLAUDE_PROJECT_DIR` in a hook's command
    with the quoted directory before its shell sees it (hookRunner.expandCommand)."""
    quoted = shlex.quote(str(cwd))
    return command.replace("$GEMINI_PROJECT_DIR", quoted).replace("$CLAUDE_PROJECT_DIR", quoted)


@pytest.mark.parametrize("name", NAMES)
def test_the_installed_hook_command_reaches_lore_without_the_venv(
    repo: Path, tmp_path: Path, name: str
) -> None:
    spec = CLIENTS[name]
    ok(hooks(repo, "install", name))
    command = spec.command(read_json(repo / spec.main))
    where = repo
    if name == "codex":  # Codex runs hooks where the session is: a subfolder finds it too
        where = repo / "src" / "deep"
        where.mkdir(parents=True)
    if name == "gemini":
        command = as_gemini_runs_it(command, repo)
    env = {**no_venv(tmp_path), **spec.variables(repo)}
    done = subprocess.run(["/bin/sh", "-c", command], cwd=where, input=spec.payload(repo),
                          text=True, capture_output=True, env=env, timeout=60)  # fmt: skip
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    [action] = stored_actions(repo)
    assert action["type"] == "tool_call", action
    assert action["meta"]["source"].startswith(spec.source + ":"), action["meta"]


@pytest.mark.parametrize("name", NAMES)
def test_the_user_scope_hook_command_reaches_lore_without_the_venv(
    repo: Path, tmp_path: Path, name: str
) -> None:
    """A user's config holds this install's absolute command: no launcher, no PATH needed."""
    spec = CLIENTS[name]
    ok(lore("init", cwd=repo, env=clean_env()))
    ok(hooks(repo, "install", name, "--scope", "user"))
    folder = spec.user(repo.parent / "home")
    config = folder / ("hooks/lorebook.json" if name == "copilot" else Path(spec.main).name)
    command = spec.command(read_json(config))
    env = {**no_venv(tmp_path), **spec.variables(repo)}
    done = subprocess.run(["/bin/sh", "-c", command], cwd=repo, input=spec.payload(repo),
                          text=True, capture_output=True, env=env, timeout=60)  # fmt: skip
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    [action] = stored_actions(repo)
    assert action["meta"]["source"].startswith(spec.source + ":"), action["meta"]


@pytest.mark.parametrize("name", NAMES)
def test_a_checkout_without_the_launcher_never_blocks_the_agent(
    repo: Path, tmp_path: Path, name: str
) -> None:
    """A teammate's clone with the config but not `.lore/bin/lore`: one line, exit 0. The
    defect (Claude Code): `sh "$CLAUDE_PROJECT_DIR"/.lore/bin/lore` exits 2 there, which
    blocks the prompt in Claude Code (and the call in Codex and Gemini)."""
    spec = CLIENTS[name]
    ok(hooks(repo, "install", name))
    (repo / LAUNCHER).unlink()
    command = spec.command(read_json(repo / spec.main))
    if name == "gemini":
        command = as_gemini_runs_it(command, repo)
    env = {**no_venv(tmp_path), **spec.variables(repo)}
    done = subprocess.run(["/bin/sh", "-c", command], cwd=repo, text=True, capture_output=True,
                          input=spec.payload(repo), env=env)  # fmt: skip
    assert (done.returncode, done.stdout) == (0, "")
    assert done.stderr.splitlines() == [
        "lorebook: no .lore/bin/lore here or above: run lore hooks install"
    ]


def mcp_entry(repo: Path, name: str) -> dict[str, Any]:
    spec = CLIENTS[name]
    if name == "codex":
        entry: dict[str, Any] = tomllib.loads((repo / ".codex" / "config.toml").read_text())[
            "mcp_servers"
        ]["lore"]
        return entry
    return dict(read_json(repo / (spec.mcp or spec.main))["mcpServers"]["lore"])


@pytest.mark.parametrize("name", NAMES)
def test_the_installed_mcp_server_answers_without_the_venv(
    repo: Path, tmp_path: Path, name: str
) -> None:
    pytest.importorskip("mcp")
    ok(hooks(repo, "install", name))
    entry = mcp_entry(repo, name)
    env = no_venv(tmp_path)  # no project variable: the server finds the launcher from its cwd
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": {"name": "test", "version": "0"}}}  # fmt: skip
    line = json.dumps(hello) + "\n"
    done = subprocess.run([entry["command"], *entry["args"]], cwd=repo, env=env, text=True,
                          input=line, capture_output=True, timeout=120)  # fmt: skip
    first = json.loads(done.stdout.splitlines()[0])
    assert first["result"]["serverInfo"]["name"], first


# -- status ------------------------------------------------------------------------------------
def test_status_lists_every_client_in_both_scopes(repo: Path) -> None:
    ok(hooks(repo, "install", "codex"))
    found = json.loads(ok(hooks(repo, "status", "--json")).out)
    pairs = {(w["client"], w["scope"]): w for w in found["clients"]}
    assert set(NAMES) <= set(WIRED)  # and Cline's and OpenCode's when installed with them
    assert set(pairs) == {(n, s) for n in WIRED for s in ("project", "user")}
    assert len(pairs["codex", "project"]["hooks"]) == 8 and pairs["codex", "project"]["mcp"]
    assert not pairs["gemini", "project"]["hooks"] and not pairs["codex", "user"]["hooks"]
    text = ok(hooks(repo, "status")).out
    for name in NAMES:
        assert f"{name} (project): " in text and f"{name} (user): " in text


def test_status_names_a_broken_file_and_a_disabled_switch(repo: Path) -> None:
    ok(hooks(repo, "install", "gemini"))
    settings = repo / ".gemini" / "settings.json"
    data = read_json(settings)
    data["hooksConfig"]["enabled"] = False
    settings.write_text(json.dumps(data))
    (repo / ".cursor").mkdir()
    (repo / ".cursor" / "hooks.json").write_text("{oops")
    found = json.loads(ok(hooks(repo, "status", "--json")).out)
    pairs = {(w["client"], w["scope"]): w for w in found["clients"]}
    assert "hooksConfig.enabled is false" in pairs["gemini", "project"]["problems"][0]
    assert "invalid JSON" in pairs["cursor", "project"]["problems"][0]
    ok(hooks(repo, "install", "gemini"))  # the user's false stays false
    assert read_json(settings)["hooksConfig"] == {"enabled": False}


# -- one client's particulars -------------------------------------------------------------------
USER_TOML = """# my codex config
model = "o4-mini"  # keep this comment

[mcp_servers.db]
command = "pg-mcp"
args = ["--read-only"]
"""


def test_codex_config_toml_keeps_every_byte_of_the_users_file(repo: Path) -> None:
    config = repo / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(USER_TOML)
    ok(hooks(repo, "install", "codex"))
    text = config.read_text()
    assert text.startswith(USER_TOML) and tomllib.loads(text)["mcp_servers"]["lore"]
    ok(hooks(repo, "install", "codex"))
    assert config.read_text() == text
    ok(hooks(repo, "uninstall", "codex"))
    assert config.read_text() == USER_TOML


def test_codex_refuses_broken_toml_and_a_foreign_lore_server(repo: Path) -> None:
    config = repo / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text('model = "o4"\n[mcp_servers.db\ncommand = "x"\n')
    assert_one_error_line(hooks(repo, "install", "codex"), str(config), ":2:", "invalid TOML")
    config.write_text('[mcp_servers.lore]\ncommand = "other-tool"\n')
    assert_one_error_line(hooks(repo, "install", "codex"), str(config), "not lorebook's")
    assert config.read_text() == '[mcp_servers.lore]\ncommand = "other-tool"\n'
    assert not (repo / ".codex" / "hooks.json").exists()


def test_claudes_old_bare_mcp_entry_is_replaced_by_the_launcher(repo: Path) -> None:
    (repo / ".mcp.json").write_text(json.dumps(
        {"mcpServers": {"lore": {"command": "lore", "args": ["mcp"]}}}))  # fmt: skip
    ok(hooks(repo, "install", "claude"))
    entry = read_json(repo / ".mcp.json")["mcpServers"]["lore"]
    assert entry["command"] == "sh" and "CLAUDE_PROJECT_DIR" in entry["args"][1]
    assert entry["args"][-1] == "mcp"


def test_the_launcher_stays_while_another_client_runs_it(repo: Path) -> None:
    ok(hooks(repo, "install", "claude"))
    ok(hooks(repo, "install", "copilot"))
    ok(hooks(repo, "uninstall", "claude"))
    assert (repo / LAUNCHER).is_file()
    ok(hooks(repo, "uninstall", "copilot"))
    assert not (repo / LAUNCHER).exists()
