"""Real Claude Code sessions replayed, then resumed where identity matters: is it the right session?

    .venv/bin/python benchmarks/replay_identity.py [--data ../shared/data/claude-sessions]
                                                   [--sessions N] [--json]

Each of the real sessions is replayed through the hooks and cut as `replay_sessions.py` does
(same payloads, same cut), in a repository named `app` whose `origin` is
`https://example.invalid/org/app.git`, and the log is committed. Then a new Claude Code session
starts (SessionStart, `startup`) in three places, and its brief is scored:

* worktree - in a git worktree of the repository, in a folder of its own (`app-wt`), as
             Claude Code makes them;
* clone    - in a clone of the repository under another folder name (`elsewhere`);
* empty    - in the repository, after a session that only asked a question (SessionStart,
             UserPromptSubmit, Stop, SessionEnd): it must not hide the replayed session.

Scores, per place: `session` (the brief resumes the replayed session: its id is named),
`prompt` and `command` as `replay_sessions.py` scores them (the last prompt, the last failing
Bash command, where the session had one).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from _common import machine
from replay_sessions import (
    DATA,
    EMIT_MAX,
    HANDLERS,
    Hook,
    Lorebook,
    find_data,
    lore,
    mean,
    pick,
    replay,
    score,
)

PLACES = ("worktree", "clone", "empty")
REMOTE = "https://example.invalid/org/app.git"


def git(cwd: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "r", "GIT_AUTHOR_EMAIL": "r@example.invalid",
           "GIT_COMMITTER_NAME": "r", "GIT_COMMITTER_EMAIL": "r@example.invalid"}  # fmt: skip
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


NAMES = {"session-start": "SessionStart", "user-prompt-submit": "UserPromptSubmit",
         "stop": "Stop", "session-end": "SessionEnd"}  # fmt: skip


def fire(root: Path, event: str, session: str, **fields: Any) -> str:
    """One hook as `lore hook <event>` runs it, in-process, with Claude Code's payload."""
    payload = {"session_id": session, "cwd": str(root), "hook_event_name": NAMES[event], **fields}
    return HANDLERS[event](Hook(event, payload, root, time.perf_counter())) or ""


def brief(root: Path, meta: dict[str, Any], place: str) -> str:
    new = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{meta['id']}/{place}"))
    return fire(root, "session-start", new, source="startup")[:EMIT_MAX]


def one(data: Path, meta: dict[str, Any]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="lore-identity-") as tmp:
        root = Path(tmp).resolve() / "app"
        root.mkdir()
        git(root, "init", "-q", "-b", "main")
        git(root, "remote", "add", "origin", REMOTE)
        if lore(root, "init").returncode != 0:
            raise SystemExit("lore init failed")
        seen = replay(data / meta["dir"], meta, root, {})
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "the session's log")
        places = {
            "worktree": root.parent / "app-wt",
            "clone": root.parent / "elsewhere",
            "empty": root,
        }
        git(root, "worktree", "add", "-q", str(places["worktree"]), "-b", "wt")
        git(root.parent, "clone", "-q", str(root), str(places["clone"]))
        empty = str(uuid.uuid5(uuid.NAMESPACE_URL, meta["id"] + "/empty-session"))
        fire(root, "session-start", empty, source="startup")
        fire(root, "user-prompt-submit", empty, prompt="what does this repository do?")
        fire(root, "stop", empty, stop_hook_active=False)
        fire(root, "session-end", empty, reason="prompt_input_exit")
        book = Lorebook.open(root)
        row: dict[str, Any] = {"id": meta["id"]}
        for place in PLACES:
            text = brief(places[place], meta, place)
            got = score(text, seen, meta, book)
            row[place] = {
                "session": f"session {meta['id']}" in text,
                "prompt": got["prompt"],
                "command": got["command"],
            }
    return row


def summary(rows: list[dict[str, Any]], seconds: float) -> dict[str, Any]:
    return {
        "sessions": len(rows),
        "scores": {
            place: {
                key: {
                    "score": mean([r[place][key] for r in rows]),
                    "of": sum(r[place][key] is not None for r in rows),
                }
                for key in ("session", "prompt", "command")
            }
            for place in PLACES
        },
        "seconds": round(seconds, 1),
        "machine": machine(),
        "per_session": rows,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA, help="the claude-sessions folder")
    parser.add_argument("--sessions", type=int, help="replay only N sessions (spread evenly)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args(argv)
    for key in [k for k in os.environ if k.startswith("LORE_")]:
        del os.environ[key]
    data = find_data(args.data)
    sessions = pick(json.loads((data / "index.json").read_text())["sessions"], args.sessions)
    started = time.perf_counter()
    out = summary([one(data, meta) for meta in sessions], time.perf_counter() - started)
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"{out['sessions']} real sessions replayed in {out['seconds']} s; brief scores:")
    for place, scores in out["scores"].items():
        shown = ", ".join(f"{k} {v['score']} (of {v['of']})" for k, v in scores.items())
        print(f"  {place:<9} {shown}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
