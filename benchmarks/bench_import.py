"""`lore import claude` on the real Claude Code sessions: how long, how much, and a rerun.

    .venv/bin/python benchmarks/bench_import.py [--data ../shared/data/claude-sessions]
                                                [--sessions N] [--copies K] [--json]

Every session of the data set (or the first N) is placed where Claude Code keeps it, in a
temporary CLAUDE_CONFIG_DIR, its working directory remapped onto a fresh git repository with a
store (`lore init`); `--copies K` places each K times under new session and tool-use ids (60 x
17 = 1,020 sessions). Then the real `lore import claude --json` runs twice as a subprocess:

* first run  - wall time, sessions, records written, tool calls among them; records per second;
* rerun      - wall time and records written (must be 0: everything is a duplicate);
* check      - `lore check --json`: the secrets found on disk (must be 0).
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from _common import PYTHON, REPO, clean_env, machine
from replay_sessions import DATA, find_data


def lore(root: Path, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    env = clean_env(PYTHONPATH=str(REPO / "src"), LORE_ROOT=str(root), **extra)
    return subprocess.run([PYTHON, "-m", "lorebook", *args], cwd=root, env=env,
                          capture_output=True, text=True, check=False)  # fmt: skip


B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
TOOL_ID = re.compile(r"toolu_01([1-9A-HJ-NP-Za-km-z]{22})")


def renamed(text: str, copy: int) -> str:
    """The tool-use ids of a copy: still ids as Anthropic's API hands them out (the log keeps
    those unredacted), each letter shifted `copy` places in base58."""
    shift = str.maketrans(B58, B58[copy:] + B58[:copy])
    return TOOL_ID.sub(lambda m: "toolu_01" + m.group(1).translate(shift), text)


def place(data: Path, sessions: list[dict[str, Any]], copies: int, repo: Path, config: Path) -> int:
    """The sessions written where Claude Code keeps those of `repo`; how many files."""
    folder = config / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(repo.resolve()))
    folder.mkdir(parents=True)
    placed = 0
    for meta in sessions:
        with gzip.open(data / meta["dir"] / "full.jsonl.gz", "rt", encoding="utf-8") as f:
            text = f.read().replace(meta["cwd"], str(repo.resolve()))
        for copy in range(copies):
            sid = meta["id"]
            if copy:
                sid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{sid}/{copy}"))
            body = renamed(text.replace(meta["id"], sid), copy) if copy else text
            (folder / f"{sid}.jsonl").write_text(body, encoding="utf-8")
            placed += 1
    return placed


def run(data: Path, sessions: list[dict[str, Any]], copies: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-import-") as tmp:
        repo, config = Path(tmp) / "repo", Path(tmp) / "claude"
        repo.mkdir()
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        assert lore(repo, "init").returncode == 0
        files = place(data, sessions, copies, repo, config)
        env = {"CLAUDE_CONFIG_DIR": str(config), "HOME": tmp}
        started = time.perf_counter()
        first = lore(repo, "import", "claude", "--json", **env)
        first_s = time.perf_counter() - started
        assert first.returncode == 0, first.stderr
        started = time.perf_counter()
        again = lore(repo, "import", "claude", "--json", **env)
        again_s = time.perf_counter() - started
        assert again.returncode == 0, again.stderr
        records = [json.loads(line) for path in (repo / "actionlog").rglob("*.jsonl")
                   for line in path.read_text(encoding="utf-8").splitlines()]  # fmt: skip
        check = json.loads(lore(repo, "check", "--json").stdout or "{}")
        done, rerun = json.loads(first.stdout), json.loads(again.stdout)
        return {
            "files": files,
            "sessions_imported": done["sessions_imported"],
            "records": done["actions_written"],
            "records_on_disk": len(records),
            "tool_calls": sum(1 for r in records if r.get("type") == "tool_call"),
            "first_run_s": round(first_s, 2),
            "records_per_s": round(done["actions_written"] / first_s),
            "rerun_s": round(again_s, 2),
            "rerun_records": rerun["actions_written"],
            "rerun_duplicates": rerun["duplicates_skipped"],
            "findings": len(check.get("findings") or []),
            "secrets_on_disk": sum("secret" in json.dumps(f) for f in check.get("findings") or []),
            "problems": done["problems"][:5],
        }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--sessions", type=int, default=None)
    parser.add_argument("--copies", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    data = find_data(args.data)
    sessions = json.loads((data / "index.json").read_text(encoding="utf-8"))["sessions"]
    sessions = sessions[: args.sessions] if args.sessions else sessions
    result = {"machine": machine(), **run(data, sessions, max(1, args.copies))}
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for key, value in result.items():
            if key != "machine":
                print(f"{key:18} {value}")
    return 0 if result["rerun_records"] == 0 and result["secrets_on_disk"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
