"""A real Claude Code session with lorebook's hooks installed vs without: the wall time they add.

    .venv/bin/python benchmarks/bench_claude_session.py [--rounds 6] [--calls 10] [--learnings 200]

The pinned Claude Code CLI (`.ci/run` installs it in $HOME/.cache/lorebook-test/claude, or
LORE_CLAUDE_DIR) runs headless (`claude -p`) against the scripted Messages API of
tests/scripted_model.py on 127.0.0.1 — the same script for both arms, so the model costs the
same. Two identical repositories with a store of `--learnings` learnings: one after
`lore hooks install claude`, one without. MCP servers are left out of both (`--strict-mcp-config`):
this measures the hooks.

Each round runs four sessions, interleaved (order rotated): with and without hooks, each with
`--calls` Bash tool calls and with none. Then, per round,

* added per session   = with(0 calls) - without(0 calls): session-start, user-prompt-submit,
                        stop and session-end together;
* added per tool call = ((with(N) - without(N)) - (with(0) - without(0))) / N: post-tool-use.

Reported as medians (and min-max) over the rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import clean_env, idle_note, lore_script, machine, median, wait_for_idle, write_results

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
from scripted_model import Model, scripted_model  # noqa: E402

VERSION = "2.1.328"


def claude_bin() -> Path:
    folder = Path(os.environ.get("LORE_CLAUDE_DIR") or
                  Path.home() / ".cache" / "lorebook-test" / "claude")  # fmt: skip
    found = folder / "node_modules" / ".bin" / "claude"
    if not found.exists():
        raise SystemExit(f"Claude Code CLI not installed: npm install --prefix {folder} "
                         f"@anthropic-ai/claude-code@{VERSION}")  # fmt: skip
    return found


def make_repo(root: Path, learnings: int, hooks: bool) -> None:
    sys.path.insert(0, str(HERE))
    from bench_learnings import generate

    root.mkdir(parents=True)
    env = clean_env()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "README.md").write_text("# sample\n")
    generate(root, learnings)  # runs `Lorebook.init` first
    if hooks:
        subprocess.run([str(lore_script()), "hooks", "install", "claude"], cwd=root, env=env,
                       check=True, capture_output=True)  # fmt: skip
        (root / ".mcp.json").unlink()  # the hooks only: MCP is not part of this comparison
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "-c", "user.name=b", "-c", "user.email=b@example.invalid", "commit",
                    "-q", "-m", "store"], cwd=root, check=True)  # fmt: skip


def session(claude: Path, repo: Path, home: Path, model: Model, calls: int) -> float:
    """One headless session making `calls` Bash tool calls; its wall time in seconds."""
    model.script = [("Bash", {"command": f"echo step {i}", "description": f"Step {i}"})
                    for i in range(calls)]  # fmt: skip
    env = clean_env(HOME=str(home), ANTHROPIC_BASE_URL=model.url, ANTHROPIC_API_KEY="sk-test",
                    DISABLE_TELEMETRY="1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
                    ENABLE_TOOL_SEARCH="false", DISABLE_AUTOUPDATER="1")  # fmt: skip
    cmd = [str(claude), "-p", "Run the deploy checks step by step", "--output-format", "json",
           "--allowedTools", "Bash", "--strict-mcp-config"]  # fmt: skip
    started = time.perf_counter()
    done = subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True, timeout=300)
    elapsed = time.perf_counter() - started
    if done.returncode != 0 or json.loads(done.stdout or "{}").get("is_error") is not False:
        raise SystemExit(f"claude failed ({done.returncode}): {done.stdout[-1000:]} "
                         f"{done.stderr[-1000:]}")  # fmt: skip
    return elapsed


def measure(rounds: int, calls: int, learnings: int, workdir: Path | None) -> dict[str, Any]:
    claude = claude_bin()
    base = Path(tempfile.mkdtemp(prefix="lore-claude-", dir=workdir))
    try:
        repos = {"with": base / "with", "without": base / "without"}
        for name, repo in repos.items():
            make_repo(repo, learnings, hooks=name == "with")
        home = base / "home"
        home.mkdir()
        arms = [(name, n) for name in repos for n in (0, calls)]
        times: dict[tuple[str, int], list[float]] = {arm: [] for arm in arms}
        with scripted_model() as model:
            for name, n in arms:  # warm-up: node's and Python's caches, the first hook run
                session(claude, repos[name], home, model, n)
            for r in range(rounds):
                wait_for_idle(timeout=10)
                shift = r % len(arms)
                for name, n in arms[shift:] + arms[:shift]:
                    times[(name, n)].append(session(claude, repos[name], home, model, n))
        logged = sum(1 for p in repos["with"].glob("actionlog/**/*.jsonl")
                     for line in p.open() if '"tool_call"' in line)  # fmt: skip
    finally:
        shutil.rmtree(base, ignore_errors=True)
    per_session = [w - o for w, o in zip(times[("with", 0)], times[("without", 0)], strict=True)]
    per_call = [
        ((w - o) - s) / calls
        for w, o, s in zip(times[("with", calls)], times[("without", calls)], per_session,
                           strict=True)
    ]  # fmt: skip
    return {
        "rounds": rounds,
        "calls": calls,
        "learnings": learnings,
        "sessions_s": {
            f"{name}, {n} calls": {"median": median(t), "min": min(t), "max": max(t)}
            for (name, n), t in times.items()
        },
        "added_per_session_s": {
            "median": median(per_session),
            "min": min(per_session),
            "max": max(per_session),
        },
        "added_per_call_s": {
            "median": median(per_call),
            "min": min(per_call),
            "max": max(per_call),
        },
        "tool_calls_logged": logged,
        "tool_calls_made_with_hooks": (rounds + 1) * calls,
    }


def report(res: dict[str, Any]) -> None:
    print(
        f"Claude Code {VERSION}, scripted model, {res['rounds']} rounds, {res['calls']} Bash "
        f"calls per session, store with {res['learnings']} learnings"
    )
    for name, t in res["sessions_s"].items():
        print(f"  {name:<22} median {t['median']:6.2f} s  (min {t['min']:.2f}, max {t['max']:.2f})")
    for label, key in (("added per session", "added_per_session_s"),
                       ("added per tool call", "added_per_call_s")):  # fmt: skip
        t = res[key]
        print(
            f"  {label:<22} median {t['median'] * 1000:7.0f} ms  "
            f"(min {t['min'] * 1000:.0f}, max {t['max'] * 1000:.0f})"
        )
    print(
        f"  tool calls logged by the hooks: {res['tool_calls_logged']} of "
        f"{res['tool_calls_made_with_hooks']}"
    )
    print(f"  {idle_note()}")
    print(f"  machine: {machine()}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--learnings", type=int, default=200)
    parser.add_argument("--workdir", type=Path)
    parser.add_argument("--json-out")
    args = parser.parse_args(argv)
    res = measure(args.rounds, args.calls, args.learnings, args.workdir)
    report(res)
    write_results(args.json_out, "claude_session", res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
