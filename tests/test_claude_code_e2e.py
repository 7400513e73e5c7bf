"""The real Claude Code CLI, headless and offline against a scripted model on 127.0.0.1, with
lorebook's hooks installed by `lore hooks install claude`: what lorebook logs, and what the
hooks put in front of the model."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import re
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import (
    clean_env,
    git,
    lore,
    require_real,
    rls_lesson,
    stored,
    stored_actions,
    wait_for,
)
from lorebook import Lorebook
from scripted_model import Model, scripted_model, tool_results

VERSION = "2.1.328"
SECRET = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"


def claude_bin() -> Path:
    folder = Path(os.environ.get("LORE_CLAUDE_DIR") or
                  Path.home() / ".cache" / "lorebook-test" / "claude")  # fmt: skip
    found = folder / "node_modules" / ".bin" / "claude"
    if not found.exists():
        require_real(
            f"Claude Code CLI not installed: npm install --prefix {folder} "
            f"@anthropic-ai/claude-code@{VERSION}"
        )
    return found


@pytest.fixture
def claude() -> Path:
    return claude_bin()


def claude_env(repo: Path, model: Model) -> dict[str, str]:
    """Offline, against the scripted model, with a home of its own."""
    home = repo.parent / "home"
    home.mkdir(exist_ok=True)
    return clean_env(HOME=str(home), ANTHROPIC_BASE_URL=model.url, ANTHROPIC_API_KEY="sk-test",
                     DISABLE_TELEMETRY="1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
                     ENABLE_TOOL_SEARCH="false")  # fmt: skip


def run_claude(claude: Path, repo: Path, model: Model, prompt: str, *extra: str) -> dict[str, Any]:
    env = claude_env(repo, model)
    done = subprocess.run(
        [str(claude), "-p", prompt, "--output-format", "json", "--allowedTools", "Bash", *extra],
        cwd=repo, env=env, capture_output=True, text=True, timeout=240)  # fmt: skip
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-2000:])
    result: dict[str, Any] = json.loads(done.stdout)
    assert result["is_error"] is False, result
    return result


def test_claude_code_sessions_are_logged_and_briefed(claude: Path, repo: Path) -> None:
    installed = lore("hooks", "install", "claude", cwd=repo, env=clean_env())
    assert installed.code == 0, installed.err
    # a loaded CI machine may take longer than the 1 s default to import the search stack;
    # the budget itself is tested in test_hooks.py
    (repo / ".lore" / "config.yaml").write_text("hooks:\n  budget_seconds: 60\n")
    book = Lorebook.open(repo, env={})
    lesson = rls_lesson(book)
    book.learnings.new(
        title="Docker builds miss the cache",
        tags=["docker"],
        publish=True,
        body="## Key Takeaway\nCopy the lock file before the sources.\n",
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "lorebook")
    mcp = importlib.util.find_spec("lorebook.mcp") is not None

    with scripted_model() as model:
        model.script = [("Bash", {"command": f"echo 'deploy key: {SECRET}'",
                                  "description": "Print the deploy key"})]  # fmt: skip
        extra: list[str] = []
        if mcp:
            model.script.append(("mcp__lore__search_learnings", {"query": "supabase rls"}))
            extra = ["mcp__lore__search_learnings", "--mcp-config", str(repo / ".mcp.json"),
                     "--strict-mcp-config"]  # fmt: skip
        first = run_claude(claude, repo, model, "Show me the deploy key", *extra)
        sid = first["session_id"]

        def tool_calls() -> list[dict[str, Any]]:
            return [a for a in stored_actions(repo)
                    if a["type"] == "tool_call" and a["session"] == sid]  # fmt: skip

        calls = wait_for(lambda: len(tool_calls()) >= len(model.script) and tool_calls())
        bash = [a for a in calls if a["context"]["tool"] == "Bash"]
        assert len(bash) == 1, calls
        assert "[REDACTED" in json.dumps(bash[0]["context"]["response"])
        assert bash[0]["context"]["tool_use_id"].startswith("toolu_")
        assert bash[0]["duration_s"] is not None and bash[0]["meta"]["overhead_ms"] >= 0
        if mcp:
            assert any(a["context"]["tool"] == "mcp__lore__search_learnings" for a in calls)
        records = [r for r in stored(repo) if r["session"] == sid]
        assert any(r.get("event") == "start" and r["session_type"] == "hook" for r in records)
        ends = wait_for(lambda: [r for r in stored(repo)
                                 if r["session"] == sid and r.get("event") == "end"])  # fmt: skip
        assert ends, records
        everything = "\n".join(p.read_text(errors="replace") for p in repo.rglob("*")
                               if p.is_file() and ".git" not in p.parts)  # fmt: skip
        assert SECRET not in everything and SECRET[:12] not in everything

        asked = len(model.requests)
        model.script = []
        model.final = "Use the service role key."
        run_claude(claude, repo, model, "Why does the supabase insert fail with RLS?")
        later = [r for r in model.requests[asked:] if r.get("tools")]
        assert later, "the second session made no model request"
        sent = json.dumps(later[0])
        assert f"Resume: session {sid}" in sent  # the last session's brief, at the start
        assert lesson in sent and "service role key" in sent  # the lesson, with the prompt
        assert SECRET not in json.dumps(model.requests[asked:])  # nothing injected leaks it
    if not mcp:  # checked last: every other step ran and passed
        require_real(
            "lorebook.mcp (`lore mcp`) is not in this tree: the step calling an "
            "mcp__lore__ tool was left out"
        )


DEPLOY = "./deploy-staging.sh --region eu-west-3"
ASKED = "Roll the checkout service out to staging in eu-west-3"


def failing_deploy(repo: Path) -> None:
    """A deploy script that fails the way a real one does: a message on stderr, exit 1."""
    script = repo / "deploy-staging.sh"
    script.write_text("#!/bin/sh\necho 'error: staging cluster kube-stg-7 unreachable' >&2\n"
                      "exit 1\n")  # fmt: skip
    script.chmod(0o755)
    # a call that runs until the session is cut: a script, since the CLI may refuse a bare
    # long `sleep` at once and end the session before the test can cut it; it notes its pid,
    # since the Bash tool starts it outside the process group the test kills
    waiting = repo / "watch-rollout.sh"
    waiting.write_text(f"#!/bin/sh\necho $$ > '{waiting_pid(repo)}'\nexec sleep 600\n")
    waiting.chmod(0o755)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "deploy script")


def waiting_pid(repo: Path) -> Path:
    """Where the waiting script notes its pid (outside the repository)."""
    return repo.parent / "watch-rollout.pid"


def cut_claude(claude: Path, repo: Path, model: Model, prompt: str) -> None:
    """Run `claude -p` and kill it (and all it started) while its second tool call runs: a
    disconnect, with no SessionEnd; the first call's capture is waited for first."""
    env = claude_env(repo, model)
    running = subprocess.Popen(
        [str(claude), "-p", prompt, "--output-format", "json", "--allowedTools", "Bash"],
        cwd=repo, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True)  # fmt: skip
    try:
        hanging = wait_for(lambda: any(
            tool_results(r) == 1 for r in model.main_requests()), 120)  # fmt: skip
        assert hanging, "the scripted model never got the first tool's result"
        assert wait_for(lambda: [a for a in stored_actions(repo) if a["outcome"] == "failure"])
        assert running.poll() is None, "claude ended before it could be cut"
    finally:
        os.killpg(running.pid, signal.SIGKILL)
        running.wait(timeout=30)
        if wait_for(waiting_pid(repo).is_file, 10):  # the cut call, left running by the kill
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(waiting_pid(repo).read_text().strip()), signal.SIGKILL)


@pytest.mark.parametrize("ending", ["ended", "cut"])
def test_the_next_sessions_first_request_names_the_failed_command_and_the_last_ask(
    claude: Path, repo: Path, ending: str
) -> None:
    """What the next session's model is first sent (the SessionStart hook's brief) names the
    previous session's failing command, its error, and what the user last asked -- whether
    that session ended or was cut mid-call."""
    installed = lore("hooks", "install", "claude", cwd=repo, env=clean_env())
    assert installed.code == 0, installed.err
    (repo / ".lore" / "config.yaml").write_text("hooks:\n  budget_seconds: 60\n")
    failing_deploy(repo)
    with scripted_model() as model:
        model.script = [("Bash", {"command": DEPLOY, "description": "Deploy to staging"})]
        if ending == "cut":
            model.script.append(("Bash", {"command": "./watch-rollout.sh", "description": "Wait"}))
            cut_claude(claude, repo, model, ASKED)
        else:
            model.final = "The staging deploy failed: the cluster is unreachable."
            sid = run_claude(claude, repo, model, ASKED)["session_id"]
            assert wait_for(
                lambda: [r for r in stored(repo) if r["session"] == sid and r.get("event") == "end"]
            )
        failed = [a for a in stored_actions(repo) if a["outcome"] == "failure"]
        assert failed and failed[0]["context"]["command"] == DEPLOY, failed

        asked = len(model.requests)
        model.script, model.final = [], "Noted."
        run_claude(claude, repo, model, "Where were we?")
        later = [r for r in model.requests[asked:] if r.get("tools")]
        assert later, "the second session made no model request"
        first_request = later[0]  # the brief is already in it, before any tool call
    assert not tool_results(first_request)
    brief = injected(first_request)
    assert DEPLOY in brief, brief
    assert "kube-stg-7 unreachable" in brief and "fail" in brief.lower()
    assert ASKED in brief
    assert "Where were we?" in json.dumps(first_request)


def injected(request: dict[str, Any]) -> str:
    """The lorebook data block the hooks put into a model request (system or messages)."""
    texts: list[str] = []
    for part in [request.get("system"), *(m.get("content") for m in request["messages"])]:
        blocks = [{"text": part}] if isinstance(part, str) else part or []
        texts += [
            b["text"] for b in blocks if isinstance(b, dict) and isinstance(b.get("text"), str)
        ]
    found = [t.split("<lorebook-data>", 1)[1].split("</lorebook-data>", 1)[0]
             for t in texts if "<lorebook-data>" in t]  # fmt: skip
    assert found, "no lorebook data in the request"
    return "\n".join(found)


SUBAGENT = "SUBAGENT-Q7 check the build"  # the subagent's prompt: the model answers it apart


def subtree(tree: Any, row: Any) -> list[tuple[int, str, str]]:
    """`row` and every row under it: (depth below it, type, what)."""
    start = tree.rows.index(row)
    return [(r.depth - row.depth, r.type, r.what) for r in tree.rows[start : row.last + 1]]


def test_a_subagents_tool_call_sits_under_it_in_the_timeline(
    claude: Path, repo: Path, tmp_path: Path
) -> None:
    """The real CLI runs an Agent (Task) subagent that runs Bash: the call's hook input carries
    the subagent's `agent_id` (2.1.328 sends it), lorebook records it, and `Lorebook.timeline`
    puts the call (and the Agent call) under the subagent's spawn. `lore import` of the same
    session's transcripts into another repository nests it the same way."""
    installed = lore("hooks", "install", "claude", cwd=repo, env=clean_env())
    assert installed.code == 0, installed.err
    (repo / ".lore" / "config.yaml").write_text("hooks:\n  budget_seconds: 60\n")
    command = "echo built-by-the-subagent"
    with scripted_model() as model:
        model.script = [("Agent", {"description": "Check the build", "prompt": SUBAGENT,
                                   "subagent_type": "general-purpose"})]  # fmt: skip
        model.subagents[SUBAGENT] = [("Bash", {"command": command, "description": "Build"})]
        sid = run_claude(claude, repo, model, "Check the build", "Agent")["session_id"]

        def closed() -> list[dict[str, Any]]:
            return [a for a in stored_actions(repo)
                    if a["type"] == "spawn" and a["outcome"] != "in_progress"]  # fmt: skip

        assert wait_for(lambda: closed() and [r for r in stored(repo) if r.get("event") == "end"])
    (call,) = [a for a in stored_actions(repo) if a["context"].get("command") == command]
    (stop,) = closed()
    agent = stop["context"]["agent_id"]
    assert agent and call["context"]["agent_id"] == agent
    tree = Lorebook.open(repo, env={}).timeline(sid)
    (spawn,) = [r for r in tree.rows if r.type == "spawn"]
    assert spawn.outcome == "success" and spawn.depth == 0
    assert sorted(subtree(tree, spawn)) == [
        (0, "spawn", "spawn general-purpose"),
        (1, "tool_call", "Agent Check the build"),
        (1, "tool_call", f"Bash {command}"),
    ]

    # the same session imported from Claude Code's own transcripts, elsewhere
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q", "-b", "main")
    Lorebook.init(other, env={})
    home = repo.parent / "home" / ".claude" / "projects"
    (folder,) = [f for f in home.iterdir() if f.is_dir()]
    config = tmp_path / "imported"
    for path in folder.rglob("*.jsonl"):
        moved = config / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(other.resolve()))
        target = moved / path.relative_to(folder)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(path.read_text().replace(str(repo), str(other.resolve())))
    done = lore("import", "claude", "--json", cwd=other,
                env=clean_env(other, CLAUDE_CONFIG_DIR=str(config)))  # fmt: skip
    assert done.code == 0, done.err
    again = Lorebook.open(other, env={}).timeline(sid)
    (imported,) = [r for r in again.rows if r.type == "spawn"]
    assert sorted(subtree(again, imported)) == sorted(subtree(tree, spawn))
    (inside,) = [r for r in again.rows if r.what == f"Bash {command}"]
    assert inside.records[0]["context"]["agent_id"] == agent
