"""Session identity: one lorebook session per client session (MCP calls included), the previous
*meaningful* session resumed (never the current one), and the project known by its repository,
not its folder, so worktrees and clones share one history.

Everything runs for real: `lore hook <event>` subprocesses with Claude Code's payload shapes, a
real `lore mcp` over stdio, real git clones and worktrees.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from anyio.from_thread import start_blocking_portal

from conftest import clean_env, git, lore, stored, stored_actions
from lorebook import Lorebook
from test_mcp import GIT_ID, SRC, Served

WORK = "1b2c3d4e-0000-4c2d-8e3f-00000000000a"  # a session that did real work, then dropped
EMPTY = "1b2c3d4e-0000-4c2d-8e3f-00000000000b"  # one that only asked a question
NOW = "1b2c3d4e-0000-4c2d-8e3f-00000000000c"  # the session being started
DEPLOY = "./scripts/deploy.sh --env prod"


def hook(event: str, cwd: Path, session: str, **fields: Any) -> str:
    """One real `lore hook` run as Claude Code makes it (store found from the payload's cwd),
    in the foreground so its record is there when it returns; its stdout."""
    payload = {"session_id": session, "cwd": str(cwd), "hook_event_name": event, **fields}
    env = clean_env(LORE_HOOK_DETACH="0", **GIT_ID)
    done = lore("hook", event, cwd=cwd, env=env, stdin=json.dumps(payload))
    assert (done.code, done.err) == (0, ""), done.err
    return done.out


def brief_of(out: str) -> str:
    return str(json.loads(out)["hookSpecificOutput"]["additionalContext"]) if out else ""


def failed_deploy(cwd: Path, session: str = WORK) -> None:
    hook("session-start", cwd, session, source="startup")
    hook("user-prompt-submit", cwd, session, prompt="deploy the api to prod")
    hook(
        "post-tool-use-failure",
        cwd,
        session,
        tool_name="Bash",
        tool_input={"command": DEPLOY},
        tool_use_id="toolu_01AbCdEfGhJkLmNoPqRsTuVw",
        error="Exit code 1: port 8080 already in use",
    )


def empty_session(cwd: Path, session: str = EMPTY) -> None:
    hook("session-start", cwd, session, source="startup")
    hook("user-prompt-submit", cwd, session, prompt="what does this repo do?")
    hook("stop", cwd, session, stop_hook_active=False)
    hook("session-end", cwd, session, reason="prompt_input_exit")


def resumed(cwd: Path, *args: str, **env: str) -> dict[str, Any]:
    done = lore("resume", "--json", *args, cwd=cwd, env=clean_env(**env))
    assert done.code == 0, done.err
    return dict(json.loads(done.out))


# -- the previous meaningful session -----------------------------------------------------------
def test_a_session_with_only_a_prompt_does_not_hide_the_failed_deploy_before_it(
    store: Path,
) -> None:
    failed_deploy(store)
    empty_session(store)
    assert resumed(store)["session"]["id"] == WORK  # read from the shards' tails
    assert lore("sessions", "--json", cwd=store, env=clean_env()).code == 0  # builds the catalog
    assert (store / ".lore" / "cache").is_dir()
    assert resumed(store)["session"]["id"] == WORK  # read from the catalog
    brief = brief_of(hook("session-start", store, NOW, source="startup"))
    assert DEPLOY in brief and "port 8080" in brief


def test_a_session_with_only_lorebook_records_is_not_the_last_session(store: Path) -> None:
    failed_deploy(store)
    book = Lorebook.open(store, env={})
    quiet = book.start_session(session_id="only-searches", session_type="hook")
    quiet.log("search", context={"query": "deploy"})
    quiet.log("prompt", context={"prompt": "hello"})
    assert resumed(store)["session"]["id"] == WORK


def test_resume_never_picks_the_callers_own_session(store: Path) -> None:
    failed_deploy(store)
    hook("session-start", store, NOW, source="startup")
    hook(
        "post-tool-use",
        store,
        NOW,
        tool_name="Read",
        tool_input={"file_path": "README.md"},
        tool_response={"content": "# sample"},
    )
    # the agent's own shell has LORE_SESSION (the session-start hook exports it): not itself
    assert resumed(store, LORE_SESSION=NOW)["session"]["id"] == WORK
    assert resumed(store)["session"]["id"] == NOW  # anyone else: the newest, as before


def test_the_session_start_hook_exports_the_session_to_the_agents_shell(store: Path) -> None:
    env_file = store.parent / "claude-env.sh"
    env_file.write_text("")
    payload = {"session_id": NOW, "cwd": str(store), "source": "startup"}
    env = clean_env(LORE_HOOK_DETACH="0", CLAUDE_ENV_FILE=str(env_file))
    done = lore("hook", "session-start", cwd=store, env=env, stdin=json.dumps(payload))
    assert done.code == 0
    assert f"export LORE_SESSION={NOW}" in env_file.read_text().splitlines()
    # so the agent's own `lore log` lands in its Claude session, not an automatic one
    logged = lore("log", "commit", cwd=store, env=clean_env(LORE_SESSION=NOW))
    assert logged.code == 0, logged.err
    assert {r["session"] for r in stored_actions(store)} == {NOW}


# -- MCP in the client's session ---------------------------------------------------------------
def mcp_env() -> dict[str, str]:
    """What Claude Code passes its MCP server: no LORE_* variable, no session id."""
    env = {k: os.environ[k] for k in ("PATH", "HOME", "LORE_MODEL_CACHE") if k in os.environ}
    env.update(GIT_ID, PYTHONPATH=str(SRC))
    return env


@contextmanager
def mcp_server(root: Path) -> Iterator[Served]:
    """`lore mcp` started by this process, as Claude Code starts it beside its hooks."""
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "lorebook", "mcp"], env=mcp_env(), cwd=str(root)
    )
    with (
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(Client(params)) as client,
    ):
        yield Served(portal, client, root, {})


def test_mcp_calls_land_once_in_the_client_session_which_ends(store: Path) -> None:
    failed_deploy(store)
    empty_session(store)
    with mcp_server(store) as served:
        hook("session-start", store, NOW, source="startup")
        logged = served.ok("log_action", {"action_type": "commit", "context": {"sha": "abc123"}})
        assert logged["session"] == NOW
        # Claude Code's own PostToolUse for the same MCP call
        hook(
            "post-tool-use",
            store,
            NOW,
            tool_name="mcp__lore__log_action",
            tool_input={"action_type": "commit", "context": {"sha": "abc123"}},
            tool_response=[{"type": "text", "text": json.dumps(logged)}],
        )
        brief = served.ok("get_recent_actions", {})
        assert brief["found"] and brief["session"]["id"] == WORK  # not NOW, not the empty one
        hook("session-end", store, NOW, reason="prompt_input_exit")
    records = stored(store)
    assert {r["session"] for r in records} == {WORK, EMPTY, NOW}  # no session of its own
    calls = [
        r
        for r in records
        if r["kind"] == "action"
        and r["type"] == "tool_call"
        and r["session"] == NOW
        and "log_action" in json.dumps(r["context"])
    ]
    assert len(calls) == 1, calls  # logged once, not by the hook and the server both
    [commit] = [r for r in records if r.get("type") == "commit"]
    assert commit["session"] == NOW
    sessions = {s["id"]: s for s in json.loads(lore("sessions", "--json", cwd=store).out)}
    assert sessions[NOW]["status"] == "ended"
    later = brief_of(
        hook("session-start", store, "1b2c3d4e-0000-4c2d-8e3f-00000000000d", source="startup")
    )
    assert "commit" in later  # the agent's own log_action is in the next brief


def test_an_mcp_server_without_a_client_session_ends_its_own_on_sigterm(store: Path) -> None:
    import signal
    import subprocess

    server = subprocess.Popen(
        [sys.executable, "-m", "lorebook", "mcp"],
        cwd=store,
        env=mcp_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert server.stdin is not None and server.stdout is not None
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "log_action", "arguments": {"action_type": "plan"}},
        },
    ]
    for message in messages:
        server.stdin.write((json.dumps(message) + "\n").encode())
        server.stdin.flush()
    answered = [json.loads(server.stdout.readline()) for _ in range(2)]
    assert answered[1]["id"] == 2 and not answered[1]["result"].get("isError"), answered
    server.send_signal(signal.SIGTERM)  # how a client stops a server it no longer needs
    server.wait(timeout=30)
    server.stdin.close()
    server.stdout.close()
    assert server.stderr is not None
    server.stderr.close()
    sessions = json.loads(lore("sessions", "--json", cwd=store).out)
    assert [s["status"] for s in sessions] == ["ended"], sessions


# -- the project is the repository -------------------------------------------------------------
def team(tmp_path: Path) -> tuple[Path, Path]:
    """A remote with a store, and a clone of it under the usual name, with one commit."""
    seed = tmp_path / "seed"
    seed.mkdir()
    git(seed, "init", "-q", "-b", "main")
    (seed / "README.md").write_text("# app\n")
    Lorebook.init(seed, env={})
    git(seed, "add", "-A")
    git(seed, "commit", "-q", "-m", "initial")
    remote = tmp_path / "remotes" / "app.git"
    remote.parent.mkdir()
    git(tmp_path, "clone", "-q", "--bare", str(seed), str(remote))
    main = tmp_path / "app"
    git(tmp_path, "clone", "-q", str(remote), str(main))
    return remote, main


def commit_log(cwd: Path) -> None:
    git(cwd, "add", "-A")
    git(cwd, "commit", "-q", "-m", "work")


def test_a_git_worktree_shows_the_history_of_its_repository(tmp_path: Path) -> None:
    _, main = team(tmp_path)
    failed_deploy(main)
    commit_log(main)
    worktree = tmp_path / "app-feature-x"  # as `claude --worktree` makes them
    git(main, "worktree", "add", "-q", str(worktree), "-b", "feature-x")
    brief = brief_of(hook("session-start", worktree, NOW, source="startup"))
    assert DEPLOY in brief
    assert resumed(worktree, "--project", "app")["session"]["id"] == WORK


def test_a_clone_under_another_name_shows_the_same_history(tmp_path: Path) -> None:
    remote, main = team(tmp_path)
    failed_deploy(main)
    commit_log(main)
    git(main, "push", "-q", "origin", "main")
    other = tmp_path / "elsewhere"
    git(tmp_path, "clone", "-q", str(remote), str(other))
    assert DEPLOY in brief_of(hook("session-start", other, NOW, source="startup"))
    projects = {r["project"] for r in stored(other) if r["session"] == WORK}
    assert projects == {"app"}  # the repository's name, shown as before


def test_without_a_remote_a_worktree_shows_its_history(store: Path, tmp_path: Path) -> None:
    failed_deploy(store)
    commit_log(store)
    worktree = tmp_path / "side"
    git(store, "worktree", "add", "-q", str(worktree), "-b", "side")
    assert DEPLOY in brief_of(hook("session-start", worktree, NOW, source="startup"))
    # both sessions name the repository by its first commit, and by the main checkout's folder
    first = git(store, "rev-list", "--max-parents=0", "HEAD").strip()
    starts = [r for r in stored(worktree) if r.get("event") == "start"]
    assert {(r["meta"]["repo"], r["project"]) for r in starts} == {(f"root:{first}", store.name)}


def test_old_records_named_by_folder_are_still_found(tmp_path: Path) -> None:
    _, main = team(tmp_path)
    old = Lorebook.open(main, env={}).start_session(
        session_id="old-session", project="app-checkout", session_type="hook"
    )
    old.log("deploy", outcome="failure", error="old deploy broke")
    commit_log(main)
    moved = tmp_path / "app-checkout"  # the folder the old records were named after
    main.rename(moved)
    assert "old deploy broke" in brief_of(hook("session-start", moved, NOW, source="startup"))


def test_the_remote_is_recorded_without_its_credentials(tmp_path: Path) -> None:
    _, main = team(tmp_path)
    git(
        main,
        "remote",
        "set-url",
        "origin",
        "https://ci-bot:ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8@github.com/Org/App.git",
    )
    failed_deploy(main)
    starts = [r for r in stored(main) if r["kind"] == "session" and r["event"] == "start"]
    assert starts[0]["project"] == "App"
    assert starts[0]["meta"]["repo"] == "github.com/Org/App"
    assert "ghp_" not in json.dumps(stored(main)) and "ci-bot" not in json.dumps(stored(main))


@pytest.mark.parametrize(
    ("url", "key"),
    [
        ("https://ci-bot:ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8@GitHub.com/Org/App.git",
         "github.com/Org/App"),
        ("git@github.com:Org/App.git", "github.com/Org/App"),
        ("ssh://git@github.com:22/Org/App", "github.com/Org/App"),
        ("https://github.com/Org/App/?token=abc#x", "github.com/Org/App"),
        ("/srv/git/app.git", "/srv/git/app"),
        ("file:///srv/git/app.git", "/srv/git/app"),
        ("https://example.com", None),
    ],
)  # fmt: skip
def test_a_remote_is_one_key_however_it_is_written(url: str, key: str | None) -> None:
    from lorebook.repoid import normalise_remote

    assert normalise_remote(url) == key


def test_real_sessions_are_resumed_from_a_worktree_a_clone_and_past_an_empty_session() -> None:
    """`benchmarks/replay_identity.py` on real Claude Code sessions: every brief resumes them."""
    import subprocess

    from conftest import real_sessions_root, require_real

    if real_sessions_root() is None:  # beside every checkout and CI's clone: else a bad set-up
        require_real("../shared/data/claude-sessions is not beside the repository")
    script = SRC.parent / "benchmarks" / "replay_identity.py"
    done = subprocess.run(
        [sys.executable, str(script), "--sessions", "3", "--json"],
        cwd=SRC.parent, env=clean_env(), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    scores = json.loads(done.stdout)["scores"]
    assert set(scores) == {"worktree", "clone", "empty"}
    for place in scores.values():
        assert place["session"] == {"score": 1.0, "of": 3}, scores
        assert place["prompt"]["score"] == 1.0, scores


# -- the real Claude Code CLI ------------------------------------------------------------------
def test_real_claude_code_logs_its_mcp_calls_once_in_its_own_session(repo: Path) -> None:
    """Claude Code runs the hooks and starts `lore mcp` itself: the agent's own `log_action`
    lands in Claude's session, once, and the server opens no session of its own."""
    from scripted_model import scripted_model
    from test_claude_code_e2e import claude_bin, run_claude

    claude = claude_bin()
    assert lore("hooks", "install", "claude", cwd=repo, env=clean_env()).code == 0
    (repo / ".lore" / "config.yaml").write_text("hooks:\n  budget_seconds: 60\n")
    tool = "mcp__lore__log_action"
    with scripted_model() as model:
        model.script = [(tool, {"action_type": "deploy", "outcome": "failure",
                                "error": "helm upgrade timed out"})]  # fmt: skip
        extra = [tool, "--mcp-config", str(repo / ".mcp.json"), "--strict-mcp-config"]
        sid = run_claude(claude, repo, model, "Deploy and log it", *extra)["session_id"]

        def logged() -> list[dict[str, Any]]:
            records = stored(repo)
            ended = any(r["session"] == sid and r.get("event") == "end" for r in records)
            return records if ended and any(r.get("type") == "deploy" for r in records) else []

        records = wait_until(logged)
    assert records, "the session or its log_action never arrived"
    [deploy] = [r for r in records if r.get("type") == "deploy"]
    assert deploy["session"] == sid
    calls = [r for r in records if r.get("type") == "tool_call"]
    assert [c["context"].get("tool") for c in calls] == [tool], calls  # once: the hook's
    starts = [r for r in records if r.get("event") == "start"]
    assert {r["session"] for r in starts} == {sid}, starts  # no `mcp` session of its own


def wait_until(probe: Any, seconds: float = 60) -> Any:
    import time

    deadline = time.monotonic() + seconds
    while not (found := probe()) and time.monotonic() < deadline:
        time.sleep(0.5)
    return found
