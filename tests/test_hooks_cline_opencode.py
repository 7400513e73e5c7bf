"""The Cline and OpenCode installers (`hooks.wire_cline`, `hooks.wire_opencode`): their plans
on real files in temp git repositories, the installed Cline hook files run as Cline runs them
(`sh FILE`, the payload on stdin, no virtual environment), and the installed OpenCode plugin
run under node with the hook shapes OpenCode 1.18 passes it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import clean_env, stored, stored_actions
from lorebook import Lorebook, LoreError
from lorebook.hooks import admin, wire_cline, wire_opencode
from lorebook.hooks.clients import CLINE_EVENTS, OPENCODE_EVENTS
from lorebook.hooks.launcher import LAUNCHER, RECORD
from lorebook.hooks.wiring import Edit
from test_hooks import GENEROUS, publish

MACHINE = [sys.executable, "-m", "lorebook"]
SRC = str(Path(__file__).resolve().parents[1] / "src")
Tree = dict[str, tuple[bytes, int]]


def tree(root: Path) -> Tree:
    """Every file under `root` (but .git): its bytes and mode."""
    return {str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mode & 0o777)
            for p in sorted(root.rglob("*")) if p.is_file() and ".git" not in p.parts}  # fmt: skip


def plan(client: str, action: str, scope: str, root: Path, home: Path) -> list[Edit]:
    """What `lore hooks install|uninstall CLIENT` plans: the client's edits, the launcher's."""
    ours, launcher = admin.planned(client, action, scope, root, home, MACHINE)
    return ours + launcher


def apply(plan: list[Edit], base: Path) -> None:
    """As `lore hooks install|uninstall` applies a plan: every path checked, then written."""
    for edit in plan:
        admin.refuse_links(edit, {base})
    for edit in plan:
        admin.put(edit, {base})


def diff(plan: list[Edit], root: Path) -> str:
    return "\n".join(admin.say(edit, root, dry_run=True) for edit in plan) + "\n"


def no_venv(tmp: Path, **extra: str) -> dict[str, str]:
    """As an agent started from a shell without the virtual environment: PATH holds `sh`,
    `cat` and the system's tools only; the recorded interpreter imports this checkout's
    sources through PYTHONPATH, as the tests do."""
    env = {k: v for k, v in clean_env(**extra).items()
           if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}  # fmt: skip
    env.update(PATH="/usr/bin:/bin", LORE_HOOK_DETACH="0", PYTHONPATH=SRC, HOME=str(tmp / "h"))
    return env


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


# -- Cline ------------------------------------------------------------------------------------
HOOK_NAMES = {"TaskStart": "agent_start", "TaskResume": "agent_resume",
              "UserPromptSubmit": "prompt_submit", "PostToolUse": "tool_result",
              "PreCompact": "pre_compact", "TaskComplete": "agent_end",
              "TaskCancel": "agent_abort", "TaskError": "agent_error",
              "SessionShutdown": "session_shutdown"}  # fmt: skip


def cline_payload(event: str, repo: Path, task: str = "conv_1764266981093_abcde") -> str:
    """A payload as Cline 3.0.65 sends it (docs: agent-clients.md, section 5)."""
    common: dict[str, Any] = {
        "clineVersion": "", "hookName": HOOK_NAMES[event], "timestamp": "2026-11-27T18:09:41.093Z",
        "taskId": task, "sessionContext": {"rootSessionId": task},
        "workspaceRoots": [str(repo)], "workspaceInfo": {"rootPath": str(repo), "hint": "work"},
        "userId": "unknown", "agent_id": "agent_1", "parent_agent_id": None}  # fmt: skip
    if event == "PostToolUse":
        common.update(iteration=1, tool_result={
            "id": "call_2", "name": "run_commands", "input": {"commands": ["echo hello-from-fake"]},
            "output": [{"query": "echo hello-from-fake", "result": "hello-from-fake\n",
                        "success": True}], "durationMs": 15},
            postToolUse={"toolName": "run_commands",
                         "parameters": {"commands": "[\"echo hello-from-fake\"]"},
                         "result": "[{}]", "success": True, "executionTimeMs": 15})  # fmt: skip
    elif event == "UserPromptSubmit":
        common["userPromptSubmit"] = {"prompt": "run echo hello", "attachments": []}
    elif event == "TaskStart":
        common["taskStart"] = {"taskMetadata": {}}
    elif event == "TaskComplete":
        common.update(iteration=1, turn={"outputText": "done", "status": "completed"},
                      taskComplete={"taskMetadata": {}})  # fmt: skip
    return json.dumps(common)


def run_cline_hook(path: Path, stdin: str, env: dict[str, str], cwd: Path) -> Any:
    """The hook file as Cline runs one with a `#!/bin/sh` line: `sh FILE`, stdin piped."""
    return subprocess.run(["sh", str(path)], input=stdin, text=True, capture_output=True,
                          cwd=cwd, env=env, timeout=60)  # fmt: skip


def test_cline_project_install_writes_one_hook_per_event_and_the_launcher(
    store: Path, home: Path
) -> None:
    before = tree(store)
    planned = plan("cline", "install", "project", store, home)
    assert tree(store) == before  # a plan writes nothing
    apply(planned, store)
    folder = store / ".clinerules" / "hooks"
    assert sorted(p.name for p in folder.iterdir()) == sorted(CLINE_EVENTS)
    for event in CLINE_EVENTS:
        text = (folder / event).read_text()
        assert text.startswith("#!/bin/sh\n# lorebook hook for Cline")
        assert f"hook cline {event}" in text and (folder / event).stat().st_mode & 0o777 == 0o755
        assert sys.executable not in text and str(store) not in text  # committed: no machine path
    assert (store / LAUNCHER).is_file() and (store / RECORD).read_text().splitlines() == MACHINE
    assert plan("cline", "install", "project", store, home) == []  # idempotent
    assert not (home / ".cline").exists()  # no project MCP file: Cline keeps one per user


def test_every_installed_cline_hook_runs_for_real_without_the_venv(
    store: Path, home: Path, tmp_path: Path
) -> None:
    (store / ".lore" / "config.yaml").write_text(GENEROUS)
    apply(plan("cline", "install", "project", store, home), store)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = no_venv(tmp_path)
    for event in CLINE_EVENTS:
        path = store / ".clinerules" / "hooks" / event
        done = run_cline_hook(path, cline_payload(event, store), env, elsewhere)
        assert (done.returncode, done.stderr) == (0, ""), (event, done.stderr)
        if event in ("TaskStart", "TaskResume", "UserPromptSubmit") and done.stdout.strip():
            assert "context" in json.loads(done.stdout.strip().splitlines()[-1])
    sources = {r.get("meta", {}).get("source") for r in stored(store)}
    for normalised in set(CLINE_EVENTS.values()):
        assert f"cline:{normalised}" in sources, (normalised, sources)
    [call] = [a for a in stored_actions(store) if a["type"] == "tool_call"]
    assert call["meta"]["source"] == "cline:post-tool-use"
    assert call["context"]["command"] == "echo hello-from-fake"


def test_a_cline_hook_says_nothing_and_exits_0_when_the_launcher_is_gone(
    repo: Path, home: Path, tmp_path: Path
) -> None:
    apply(plan("cline", "install", "project", repo, home), repo)
    (repo / LAUNCHER).unlink()
    path = repo / ".clinerules" / "hooks" / "PostToolUse"
    done = run_cline_hook(path, cline_payload("PostToolUse", repo) * 1000, no_venv(tmp_path), repo)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert wire_cline.status("project", repo, home).problems == [
        f"{repo / LAUNCHER}: missing; the hook files run it: run `lore hooks install cline`"
    ]


def test_cline_user_install_runs_this_machines_lore_and_registers_the_mcp_server(
    store: Path, home: Path, tmp_path: Path
) -> None:
    settings = home / ".cline" / "data" / "settings" / "cline_mcp_settings.json"
    settings.parent.mkdir(parents=True)
    theirs = {"mcpServers": {"fs": {"command": "npx", "args": ["fs"], "disabled": True}},
              "other": 1}  # fmt: skip
    settings.write_text(json.dumps(theirs, indent=2) + "\n")
    apply(plan("cline", "install", "user", store, home), home)
    config = json.loads(settings.read_text())
    assert config["other"] == 1 and config["mcpServers"]["fs"] == theirs["mcpServers"]["fs"]
    assert config["mcpServers"]["lore"] == {
        "type": "stdio",
        "command": sys.executable,
        "args": ["-m", "lorebook", "mcp"],
        "disabled": False,
    }
    hook = home / ".cline" / "hooks" / "PostToolUse"
    assert sys.executable in hook.read_text() and not (store / ".clinerules").exists()
    done = run_cline_hook(hook, cline_payload("PostToolUse", store), no_venv(tmp_path), tmp_path)
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    [call] = stored_actions(store)  # the store found from the payload's workspace
    assert call["meta"]["source"] == "cline:post-tool-use"
    wired = wire_cline.status("user", store, home)
    assert wired.mcp and wired.hooks == list(CLINE_EVENTS) and wired.problems == []
    apply(plan("cline", "uninstall", "user", store, home), home)
    assert json.loads(settings.read_text()) == theirs and not (home / ".cline" / "hooks").exists()


def test_a_users_own_cline_hook_is_never_overwritten(repo: Path, home: Path) -> None:
    folder = repo / ".clinerules" / "hooks"
    folder.mkdir(parents=True)
    (folder / "PostToolUse").write_text('#!/bin/sh\necho \'{"context": "mine"}\'\n')
    (folder / "TaskStart.sh").write_text("#!/bin/sh\necho mine\n")  # beside ours: Cline runs both
    before = tree(repo)
    with pytest.raises(LoreError) as refused:
        plan("cline", "install", "project", repo, home)
    assert str(refused.value).startswith(f"{folder / 'PostToolUse'}: a hook of your own")
    assert "PostToolUse.sh" in str(refused.value) and "\n" not in str(refused.value)
    assert tree(repo) == before
    (folder / "PostToolUse").rename(folder / "PostToolUse.sh")
    apply(plan("cline", "install", "project", repo, home), repo)
    assert (folder / "TaskStart.sh").read_text() == "#!/bin/sh\necho mine\n"


def test_cline_uninstall_restores_the_tree_exactly(repo: Path, home: Path) -> None:
    folder = repo / ".clinerules" / "hooks"
    folder.mkdir(parents=True)
    (folder / "PostToolUse.sh").write_text("#!/bin/sh\nexit 0\n")
    (repo / ".clinerules" / "rules.md").write_text("be brief\n")
    before = tree(repo)
    apply(plan("cline", "install", "project", repo, home), repo)
    assert wire_cline.status("project", repo, home).hooks == list(CLINE_EVENTS)
    stale = folder / "TaskStart"
    stale.write_text(stale.read_text().replace("exit 0", "exit 1"))
    assert wire_cline.status("project", repo, home).problems == [
        f"{stale}: written by another lorebook version; install again"
    ]
    planned = plan("cline", "uninstall", "project", repo, home)
    assert {e.path for e in planned} >= {repo / LAUNCHER, repo / RECORD}
    apply(planned, repo)
    assert tree(repo) == before and not (repo / ".lore").exists()
    assert plan("cline", "uninstall", "project", repo, home) == []
    assert wire_cline.status("project", repo, home).hooks == []


def test_cline_uninstall_keeps_a_launcher_in_use_or_not_lorebooks(repo: Path, home: Path) -> None:
    apply(plan("cline", "install", "project", repo, home), repo)
    claude = repo / ".claude" / "settings.json"
    claude.parent.mkdir()
    claude.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command",
        "command": 'sh "$CLAUDE_PROJECT_DIR"/.lore/bin/lore hook stop'}]}]}}))  # fmt: skip
    apply(plan("cline", "uninstall", "project", repo, home), repo)
    assert (repo / LAUNCHER).is_file() and not (repo / ".clinerules").exists()
    claude.unlink()
    (repo / LAUNCHER).write_text("#!/bin/sh\n# my own lore wrapper\n")  # not lorebook's
    apply(plan("cline", "install", "project", repo, home), repo)
    (repo / LAUNCHER).write_text("#!/bin/sh\n# my own lore wrapper\n")
    apply(plan("cline", "uninstall", "project", repo, home), repo)
    assert (repo / LAUNCHER).read_text() == "#!/bin/sh\n# my own lore wrapper\n"
    assert not (repo / RECORD).exists()


def test_cline_writes_to_dot_cline_when_clinerules_is_a_rules_file(repo: Path, home: Path) -> None:
    (repo / ".clinerules").write_text("- keep answers short\n")
    apply(plan("cline", "install", "project", repo, home), repo)
    assert sorted(p.name for p in (repo / ".cline" / "hooks").iterdir()) == sorted(CLINE_EVENTS)
    assert wire_cline.status("project", repo, home).hooks == list(CLINE_EVENTS)
    apply(plan("cline", "uninstall", "project", repo, home), repo)
    assert not (repo / ".cline").exists() and (repo / ".clinerules").is_file()


@pytest.mark.parametrize(("text", "needle"), [
    ("{\n  \"mcpServers\": {\n", "cline_mcp_settings.json:3: invalid JSON"),
    ('{"mcpServers": []}', '"mcpServers" must be a JSON object'),
    ('{"mcpServers": {"lore": {"command": "node", "args": ["x.js"]}}}', "not lorebook's"),
    ("[1]", "must hold a JSON object"),
])  # fmt: skip
def test_a_broken_cline_mcp_file_is_refused_untouched(
    home: Path, repo: Path, text: str, needle: str
) -> None:
    settings = home / ".cline" / "data" / "settings" / "cline_mcp_settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(text)
    before = tree(home)
    with pytest.raises(LoreError) as refused:
        plan("cline", "install", "user", repo, home)
    assert needle in str(refused.value) and str(settings) in str(refused.value)
    assert tree(home) == before
    problems = wire_cline.status("user", repo, home).problems
    assert problems == [] if needle == "not lorebook's" else needle in problems[0]


def test_cline_never_writes_through_a_symlink(repo: Path, home: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (repo / ".clinerules").mkdir()
    (repo / ".clinerules" / "hooks").symlink_to(outside)
    with pytest.raises(LoreError, match="is a symlink"):  # every path checked, then written
        apply(plan("cline", "install", "project", repo, home), repo)
    assert list(outside.iterdir()) == [] and not (repo / ".lore").exists()
    planned = [Edit(repo / ".clinerules" / "hooks" / "TaskStart", None, "x", True)]
    with pytest.raises(LoreError, match="is a symlink"):  # apply checks again before writing
        apply(planned, repo)
    assert list(outside.iterdir()) == []


def test_the_dry_run_diff_is_the_plan(repo: Path, home: Path) -> None:
    planned = plan("cline", "install", "project", repo, home)
    shown = diff(planned, repo)
    for edit in planned:  # a diff for each file; this machine's record said in words
        assert f"+++ {edit.path}\n" in shown or f"would record {sys.executable}" in shown
    assert f"# {repo / '.clinerules' / 'hooks' / 'PostToolUse'}: mode 755" in shown
    assert '+exec sh "$launcher" hook cline PostToolUse' in shown
    assert tree(repo) == {"README.md": ((repo / "README.md").read_bytes(), 0o644)}
    apply(planned, repo)
    removal = diff(plan("cline", "uninstall", "project", repo, home), repo)
    assert f"would remove {repo / '.clinerules' / 'hooks' / 'PostToolUse'}\n" in removal


# -- OpenCode ---------------------------------------------------------------------------------
HARNESS = textwrap.dedent("""\
    // Calls the installed plugin as OpenCode 1.18 does (agent-clients.md, section 4).
    import { pathToFileURL } from "node:url";
    const [plugin, directory, steps] = process.argv.slice(2);
    const mod = await import(pathToFileURL(plugin).href);
    const exported = Object.values(mod);
    if (exported.length !== 1) throw new Error("one plugin function expected");
    const hooks = await exported[0]({ directory, worktree: directory, project: {}, client: {},
                                      $: undefined, serverUrl: new URL("http://127.0.0.1:9") });
    const seen = [];
    for (const [name, input, output] of JSON.parse(steps)) {
      if (name === "event") await hooks.event({ event: input });
      else await hooks[name](input, output);
      seen.push(output ?? null);
    }
    console.log(JSON.stringify(seen));
""")


@pytest.fixture
def node(tmp_path: Path) -> tuple[str, Path]:
    found = shutil.which("node")
    if found is None:
        pytest.skip("node is not installed")  # CI installs it (.ci/run)
    harness = tmp_path / "harness.mjs"
    harness.write_text(HARNESS)
    return found, harness


def run_plugin(
    node: tuple[str, Path], plugin: Path, directory: Path, steps: list[Any], env: dict[str, str]
) -> list[Any]:
    done = subprocess.run(
        [node[0], "--experimental-detect-module", str(node[1]), str(plugin), str(directory),
         json.dumps(steps)],
        capture_output=True, text=True, env=env, timeout=120, cwd=directory)  # fmt: skip
    assert done.returncode == 0, done.stderr
    seen: list[Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return seen


def tool_after(session: str, call: str, command: str) -> list[Any]:
    """tool.execute.after as OpenCode 1.18 calls it (payloads/19-tool.execute.after.json)."""
    return ["tool.execute.after",
            {"tool": "bash", "sessionID": session, "callID": call, "args": {"command": command}},
            {"title": command, "output": "hello-from-fake\n", "metadata":
                {"output": "hello-from-fake\n", "exit": 0, "truncated": False}}]  # fmt: skip


def created(session: str, directory: Path) -> list[Any]:
    return ["event", {"id": "evt_1", "type": "session.created",
                      "properties": {"info": {"id": session, "directory": str(directory),
                                              "title": "New session"}}}, None]  # fmt: skip


def chat(session: str, text: str) -> list[Any]:
    return ["chat.message", {"sessionID": session},
            {"message": {"id": "msg_1", "role": "user", "agent": "build",
                         "model": {"providerID": "fake", "modelID": "fake-model"}},
             "parts": [{"type": "text", "text": text}]}]  # fmt: skip


def transform(session: str) -> list[Any]:
    return ["experimental.chat.system.transform", {"sessionID": session, "model": {}},
            {"system": ["You are OpenCode."]}]  # fmt: skip


def test_opencode_project_install_merges_into_the_users_opencode_json(
    repo: Path, home: Path
) -> None:
    config = repo / "opencode.json"
    theirs = {
        "$schema": "https://opencode.ai/config.json",
        "model": "fake/fake-model",
        "mcp": {"fs": {"type": "local", "command": ["npx", "fs"], "enabled": False}},
    }
    config.write_text(json.dumps(theirs, indent=2) + "\n")
    before = tree(repo)
    planned = plan("opencode", "install", "project", repo, home)
    assert tree(repo) == before
    apply(planned, repo)
    merged = json.loads(config.read_text())
    assert merged["model"] == theirs["model"] and merged["mcp"]["fs"] == theirs["mcp"]["fs"]
    assert merged["mcp"]["lore"]["type"] == "local" and merged["mcp"]["lore"]["enabled"] is True
    plugin = repo / ".opencode" / "plugins" / "lorebook.js"
    for committed in (plugin, config):
        assert (
            sys.executable not in committed.read_text() and str(repo) not in committed.read_text()
        )
    assert plan("opencode", "install", "project", repo, home) == []
    wired = wire_opencode.status("project", repo, home)
    assert (wired.hooks, wired.mcp, wired.problems) == (list(OPENCODE_EVENTS), True, [])
    apply(plan("opencode", "uninstall", "project", repo, home), repo)
    assert tree(repo) == before


def test_the_installed_plugin_captures_and_injects_the_brief_and_lessons(
    store: Path, home: Path, tmp_path: Path, node: tuple[str, Path]
) -> None:
    (store / ".lore" / "config.yaml").write_text(GENEROUS)
    lesson = publish(Lorebook.open(store, env={}), "Supabase RLS blocks INSERT with the anon key",
                     "Use the service role key for server-side inserts under RLS.",
                     ["rls", "supabase"])  # fmt: skip
    apply(plan("opencode", "install", "project", store, home), store)
    plugin = store / ".opencode" / "plugins" / "lorebook.js"
    env = no_venv(tmp_path)
    first = [created("ses_first", store), tool_after("ses_first", "call_3", "echo hello-from-fake"),
             ["event", {"id": "evt_2", "type": "session.idle",
                        "properties": {"sessionID": "ses_first"}}, None]]  # fmt: skip
    run_plugin(node, plugin, store, first, env)
    [call] = [a for a in stored_actions(store) if a["type"] == "tool_call"]
    assert call["meta"]["source"] == "opencode:post-tool-use" and call["session"] == "ses_first"
    assert call["context"]["command"] == "echo hello-from-fake"
    # the next session: no session.created seen (the plugin asks at its first request)
    asked = "Why does the supabase insert fail with RLS?"
    seen = run_plugin(node, plugin, store, [chat("ses_next", asked), transform("ses_next")], env)
    system = seen[-1]["system"]
    assert system[0] == "You are OpenCode." and len(system) == 3
    assert "echo hello-from-fake" in system[1]  # the brief of the first session
    assert lesson in system[2] and "service role key" in system[2]
    [prompt] = [a for a in stored_actions(store) if a["type"] == "prompt"]
    assert prompt["meta"]["source"] == "opencode:user-prompt-submit"
    starts = [r for r in stored(store) if r.get("event") == "start" and r["session"] == "ses_next"]
    assert len(starts) == 1 and starts[0]["meta"]["source"] == "opencode:session-start"


def test_a_capture_through_the_plugin_lands_when_lore_detaches(
    store: Path, home: Path, tmp_path: Path, node: tuple[str, Path]
) -> None:
    """By default lore reads the payload, forks and returns: the plugin waits for that, not
    for the write, and the record still lands."""
    apply(plan("opencode", "install", "project", store, home), store)
    plugin = store / ".opencode" / "plugins" / "lorebook.js"
    env = {k: v for k, v in no_venv(tmp_path).items() if k != "LORE_HOOK_DETACH"}
    run_plugin(node, plugin, store, [tool_after("ses_d", "c1", "echo detached")], env)
    for _ in range(300):  # the detached child's write, however loaded the machine
        if stored_actions(store):
            break
        time.sleep(0.1)
    [call] = stored_actions(store)
    assert call["context"]["command"] == "echo detached" and "background_ms" in call["meta"]


def test_the_plugin_returns_at_once_and_never_throws_when_lore_is_missing(
    repo: Path, home: Path, tmp_path: Path, node: tuple[str, Path]
) -> None:
    apply(plan("opencode", "install", "project", repo, home), repo)
    (repo / LAUNCHER).unlink()
    plugin = repo / ".opencode" / "plugins" / "lorebook.js"
    steps = [
        created("ses_1", repo),
        tool_after("ses_1", "c1", "ls"),
        chat("ses_1", "hi"),
        transform("ses_1"),
        ["tool.execute.after", None, None],
        ["event", None, None],
    ]
    seen = run_plugin(node, plugin, repo, steps, no_venv(tmp_path))
    assert seen[3] == {"system": ["You are OpenCode."]}
    assert not (repo / "actionlog").exists()


def test_opencode_user_install_pins_this_machines_lore(
    store: Path, home: Path, tmp_path: Path, node: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    xdg = home / "xdg"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(xdg))
    apply(plan("opencode", "install", "user", store, home), home)
    plugin = xdg / "opencode" / "plugins" / "lorebook.js"
    assert f"const LORE = {json.dumps(MACHINE)};" in plugin.read_text()
    config = json.loads((xdg / "opencode" / "opencode.json").read_text())
    assert config["mcp"]["lore"]["command"] == [*MACHINE, "mcp"]
    assert not (store / ".opencode").exists() and not (store / LAUNCHER).exists()
    run_plugin(node, plugin, store, [tool_after("ses_u", "c9", "echo hi")], no_venv(tmp_path))
    [call] = stored_actions(store)
    assert call["meta"]["source"] == "opencode:post-tool-use"
    wired = wire_opencode.status("user", store, home)
    assert (wired.hooks, wired.mcp, wired.problems) == (list(OPENCODE_EVENTS), True, [])
    apply(plan("opencode", "uninstall", "user", store, home), home)
    assert not xdg.exists()


def test_the_project_mcp_command_reaches_lore_from_a_subfolder(
    store: Path, home: Path, tmp_path: Path
) -> None:
    """OpenCode starts a local MCP server in its own working directory: the committed
    command walks up to the launcher, which reaches this machine's lore."""
    import anyio
    from mcp import Client, StdioServerParameters

    apply(plan("opencode", "install", "project", store, home), store)
    command = json.loads((store / "opencode.json").read_text())["mcp"]["lore"]["command"]
    sub = store / "src" / "deep"
    sub.mkdir(parents=True)
    env = no_venv(tmp_path)
    params = StdioServerParameters(command=command[0], args=command[1:], env=env, cwd=str(sub))

    async def one_call() -> None:
        async with Client(params) as client:
            assert not (await client.call_tool("search_actions", {})).is_error

    anyio.run(one_call)
    assert any(a["type"] == "tool_call" for a in stored_actions(store))


@pytest.mark.parametrize(("text", "needle"), [
    ('{\n  // my model\n  "model": "x",\n}\n', "holds comments or trailing commas (JSONC)"),
    ('{"model": "x",}', "holds comments or trailing commas (JSONC)"),
    ('{"model": "x"\n"b": 1}', "opencode.json:2: invalid JSON"),
    ('{"mcp": {"lore": {"type": "remote", "url": "https://x"}}}', "not lorebook's"),
    ('{"mcp": "lore"}', '"mcp" must be a JSON object'),
])  # fmt: skip
def test_a_broken_or_commented_opencode_json_is_refused_untouched(
    repo: Path, home: Path, text: str, needle: str
) -> None:
    (repo / "opencode.json").write_text(text)
    before = tree(repo)
    with pytest.raises(LoreError) as refused:
        plan("opencode", "install", "project", repo, home)
    line = str(refused.value)
    assert needle in line and str(repo / "opencode.json") in line and "\n" not in line
    assert tree(repo) == before


def test_opencode_refuses_a_plugin_of_the_users_and_symlinks(
    repo: Path, home: Path, tmp_path: Path
) -> None:
    plugins = repo / ".opencode" / "plugins"
    plugins.mkdir(parents=True)
    (plugins / "lorebook.js").write_text("export const Mine = async () => ({})\n")
    with pytest.raises(LoreError, match="a plugin of your own"):
        plan("opencode", "install", "project", repo, home)
    shutil.rmtree(repo / ".opencode")
    outside = tmp_path / "outside"
    outside.mkdir()
    (repo / ".opencode").symlink_to(outside)
    with pytest.raises(LoreError, match="is a symlink"):
        apply(plan("opencode", "install", "project", repo, home), repo)
    (repo / ".opencode").unlink()
    (repo / "opencode.json").symlink_to(outside / "opencode.json")
    with pytest.raises(LoreError, match="is a symlink"):
        apply(plan("opencode", "install", "project", repo, home), repo)
    assert list(outside.iterdir()) == []


def test_opencode_status_flags_an_outdated_plugin(repo: Path, home: Path) -> None:
    apply(plan("opencode", "install", "project", repo, home), repo)
    plugin = repo / ".opencode" / "plugins" / "lorebook.js"
    plugin.write_text(plugin.read_text().replace("CAPTURE_MS = 10000", "CAPTURE_MS = 1"))
    [problem] = wire_opencode.status("project", repo, home).problems
    assert problem.startswith(f"{plugin}: written by another lorebook version")
    assert [e.path for e in plan("opencode", "install", "project", repo, home)] == [plugin]
    (repo / "opencode.json").write_text("{")
    assert any("invalid JSON" in p for p in wire_opencode.status("project", repo, home).problems)
