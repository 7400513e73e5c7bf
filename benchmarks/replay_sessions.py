"""Real Claude Code sessions replayed through lorebook's hooks: is the next session's brief right?

    .venv/bin/python benchmarks/replay_sessions.py [--data ../shared/data/claude-sessions]
                                                   [--sessions N] [--ids A,B] [--json]

The data set (`../shared/data/claude-sessions/`, relative to the repository root; see its
README.md) holds 60 real Claude Code transcripts. For each session, in a fresh git repository
with a fresh store (`lore init`), the transcript is replayed through the events that
`lore hooks install claude` wires, with the payload shapes Claude Code sends: SessionStart
(`startup`, and `compact` after a compaction), UserPromptSubmit per human prompt, Stop before
the next prompt, PreCompact at a compaction, SubagentStart/SubagentStop around a Task call, and
per tool call PostToolUse (`tool_response` = the result's structured `toolUseResult`) or
PostToolUseFailure (`error` = the result text). Calls refused at the permission prompt fire no
post-tool hook and are skipped; PreToolUse is not replayed (lorebook installs no handler for
it). The session's working directory is mapped onto the temporary repository, so its paths lie
inside the store's repository as they did in the real one.

Each session is cut after 60-80 % of its tool calls (fixed per session id) with no Stop and no
SessionEnd, as a disconnect would leave it; then a new session starts (SessionStart, a new
session id) and the brief it injects is scored against what the real session did before the cut:

* prompt   - a distinctive part of the last human prompt (redacted as the store would) is in it;
* files    - share of the last 5 distinct files edited or written (path relative to the
             repository) that it names;
* read     - share of the last 5 distinct files only read (Read, never edited) that it names;
* command  - the command of the last failed Bash call (as sent: the working directory mapped
             onto the store's repository) is named (sessions that have one);
* cap      - it is within the configured cap: `hooks.context_tokens` x 4 characters of text
             (the pointer line lorebook adds when it cuts included), plus the frame around
             it (`FRAME_CHARS`: the notice and the delimiters), as docs/claude-code.md says.

Plus: tool calls captured / replayed, the wall time of each hook per event (p50/p95),
redaction false positives (stored fields with a marker that replaced no secret: each marker is
matched back to the payload text it replaced and classified, see `_redaction_fp.py`; count
and share of all stored fields, and the markers per class under `redacted_spans`) and the
secrets `lore check` finds on disk (must be 0).

The hooks run in-process (`handlers.HANDLERS[event](Hook(...))`, the very functions
`lore hook <event>` runs, with the same store opened afresh per call) so 60 sessions take a
few minutes on 2 cores; latencies therefore exclude interpreter start-up (bench_hooks.py
measures that). `lore init` and `lore check` run as subprocesses.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from _common import PYTHON, REPO, clean_env, machine, pct
from _redaction_fp import FALSE, Sources
from _redaction_fp import spans as redacted_spans

sys.path.insert(0, str(REPO / "src"))
from lorebook import Lorebook
from lorebook.hooks.failopen import Hook
from lorebook.hooks.handlers import HANDLERS
from lorebook.hooks.importer.claude import events, remap, replayable, results, tool_uses
from lorebook.hooks.importer.events import Event
from lorebook.render.framing import FRAME_CHARS

DATA = Path("../shared/data/claude-sessions")  # relative to the repository root
LAST_FILES = 5
EMIT_MAX = 9_500  # failopen.emit's cut of additionalContext
EDITS = ("Edit", "Write", "MultiEdit", "NotebookEdit")
HIGH = "[REDACTED:high_entropy"


# -- reading a transcript --------------------------------------------------------------------
def load(folder: Path) -> list[dict[str, Any]]:
    with gzip.open(folder / "full.jsonl.gz", "rt", encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def cut_fraction(session_id: str) -> float:
    return 0.6 + 0.2 * int(hashlib.sha256(session_id.encode()).hexdigest()[:8], 16) / 2**32


# -- running the hooks -----------------------------------------------------------------------
class Replayer:
    def __init__(self, root: Path, session: str, cwd: str, latency: dict[str, list[float]]):
        self.root, self.session, self.cwd = root, session, cwd
        self.latency = latency
        self.sources = Sources()  # every payload string sent (for the false positives)
        self.common = {
            "session_id": session,
            "cwd": str(root),
            "permission_mode": "default",
            "transcript_path": str(root / ".claude" / f"{session}.jsonl"),
        }

    def fire(self, event: str, name: str, **fields: Any) -> str | None:
        payload = {
            **self.common,
            "hook_event_name": name,
            **remap(fields, self.cwd, str(self.root)),
        }
        payload = json.loads(json.dumps(payload))  # as it arrives on stdin
        self.sources.add(payload)
        started = time.perf_counter()
        hook = Hook(event, payload, self.root, started)
        answer = HANDLERS[event](hook)
        self.latency.setdefault(name, []).append(time.perf_counter() - started)
        return answer


def replay(
    folder: Path, meta: dict[str, Any], root: Path, latency: dict[str, list[float]]
) -> dict[str, Any]:
    """Replay one session into the store at `root` up to its cut; what happened before it.
    The events are the importer's (`lorebook.hooks.importer.claude.events`), fired live."""
    lines = load(folder)
    found = results(lines)
    total = sum(1 for b in tool_uses(lines) if replayable(found.get(b.get("id"))))
    cut = max(1, round(total * cut_fraction(meta["id"])))
    rp = Replayer(root, meta["id"], meta.get("cwd") or "", latency)
    seen: dict[str, Any] = {
        "replayed": 0, "prompt": None, "edited": [], "read": [], "failed_bash": None
    }  # fmt: skip
    for event in events(lines, final_stop=False):
        fields = event.fields
        if event.event == "session-start" and fields.get("source") == "startup":
            fields = {**fields, "model": "claude-opus-4-5"}
        rp.fire(event.event, event.name, **fields)
        if event.event == "user-prompt-submit":
            seen["prompt"] = fields["prompt"]
        if event.call is None:
            continue
        track(rp, event, seen)
        if seen["replayed"] >= cut:
            break
    return {**seen, "total": total, "cut": cut, "sources": rp.sources}


def track(rp: Replayer, event: Event, seen: dict[str, Any]) -> None:
    """What a scorer wants of one replayed call: the files edited and read, the last failed
    command (as sent: the working directory mapped onto the store's repository)."""
    name, tool_input = event.fields["tool_name"], event.fields["tool_input"]
    if not isinstance(tool_input, dict):
        tool_input = {}
    if event.event == "post-tool-use-failure":
        if name == "Bash" and isinstance(tool_input.get("command"), str):
            seen["failed_bash"] = remap(tool_input["command"], rp.cwd, str(rp.root))
    else:
        path = tool_input.get("file_path") or tool_input.get("notebook_path")
        if name in EDITS and isinstance(path, str):
            seen["edited"] = [p for p in seen["edited"] if p != path] + [path]
        if name == "Read" and isinstance(path, str):
            seen["read"] = [p for p in seen["read"] if p != path] + [path]
    seen["replayed"] += 1


# -- scoring ---------------------------------------------------------------------------------
def squash(text: str) -> str:
    return " ".join(text.split())


def distinctive(text: str, book: Lorebook) -> str:
    """The part of a prompt a brief should carry: its first 60 characters after redaction."""
    return squash(book.sanitizer.redact_text(text)[0])[:60]


def relative(path: str, cwd: str) -> str:
    return path[len(cwd) + 1 :] if cwd and path.startswith(cwd + "/") else path


def score(brief: str, seen: dict[str, Any], meta: dict[str, Any], book: Lorebook) -> dict[str, Any]:
    flat = squash(brief)
    limit = book.config.hooks.context_tokens * 4
    out: dict[str, Any] = {"cap": len(brief) <= limit + FRAME_CHARS, "brief_chars": len(brief)}
    out["prompt"] = distinctive(seen["prompt"], book) in flat if seen["prompt"] else None
    files = [relative(p, meta.get("cwd") or "") for p in seen["edited"][-LAST_FILES:]]
    out["files"] = sum(f in flat for f in files) / len(files) if files else None
    only_read = [p for p in seen["read"] if p not in seen["edited"]][-LAST_FILES:]
    read = [relative(p, meta.get("cwd") or "") for p in only_read]
    out["read"] = sum(f in flat for f in read) / len(read) if read else None
    if seen["failed_bash"]:
        command = squash(book.sanitizer.redact_text(seen["failed_bash"])[0])[:40]
        out["command"] = command in flat
    else:
        out["command"] = None
    return out


def stored(
    root: Path, session: str, sources: Sources, classes: dict[str, int]
) -> tuple[int, int, int, int]:
    """(tool calls captured, stored fields, high-entropy marker fields, fields with a false
    positive) in the session's records; `classes` counts the markers per class."""
    captured = fields = marked = false = 0

    def walk(value: Any, key: str) -> None:
        nonlocal fields, marked, false
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, k)
        elif isinstance(value, list):
            for v in value:
                walk(v, key)
        elif isinstance(value, str):
            fields += 1
            marked += HIGH in value
            if "[REDACTED" in value:
                found = redacted_spans(value, key, sources)
                for name in found:
                    classes[name] = classes.get(name, 0) + 1
                false += any(name in FALSE for name in found)

    for shard in sorted((root / "actionlog").rglob("*.jsonl")):
        for line in shard.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if record.get("session") != session or record.get("kind") != "action":
                continue
            captured += record.get("type") == "tool_call"
            walk({k: v for k, v in record.items() if k in ("context", "error")}, "")
    return captured, fields, marked, false


def lore(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = clean_env(PYTHONPATH=str(REPO / "src"))
    return subprocess.run(
        [PYTHON, "-m", "lorebook", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def one(data: Path, meta: dict[str, Any], latency: dict[str, list[float]]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="lore-replay-") as tmp:
        root = Path(tmp).resolve()
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        done = lore(root, "init")
        if done.returncode != 0:
            raise SystemExit(f"lore init failed: {done.stderr}")
        seen = replay(data / meta["dir"], meta, root, latency)
        new = str(uuid.uuid5(uuid.NAMESPACE_URL, meta["id"] + "/next"))
        hook = Hook(
            "session-start",
            {
                "session_id": new,
                "cwd": str(root),
                "source": "startup",
                "hook_event_name": "SessionStart",
            },
            root,
            time.perf_counter(),
        )
        brief = (HANDLERS["session-start"](hook) or "")[:EMIT_MAX]
        book = Lorebook.open(root)
        result = score(brief, seen, meta, book)
        classes: dict[str, int] = {}
        captured, fields, marked, false = stored(root, meta["id"], seen["sources"], classes)
        check = json.loads(lore(root, "check", "--json").stdout or "{}")
        secrets = sum("secret" in json.dumps(f) for f in check.get("findings", []))
        errors = root / ".lore" / "cache" / "hooks.log"
        failures = len(errors.read_text().splitlines()) if errors.exists() else 0
    return {
        "id": meta["id"],
        "stratum": meta["stratum"],
        **result,
        "replayed": seen["replayed"],
        "captured": captured,
        "fields": fields,
        "high_entropy_fields": marked,
        "false_positives": false,
        "redacted_spans": classes,
        "secrets": secrets,
        "hook_errors": failures,
        "brief": brief,
    }


def pick(sessions: list[dict[str, Any]], count: int | None) -> list[dict[str, Any]]:
    """`count` sessions spread evenly over the list (it is ordered by tool-call count)."""
    if not count or count >= len(sessions):
        return sessions
    return [sessions[i * len(sessions) // count] for i in range(count)]


def mean(values: list[Any]) -> float | None:
    kept = [float(v) for v in values if v is not None]
    return round(sum(kept) / len(kept), 3) if kept else None


def summary(
    rows: list[dict[str, Any]], latency: dict[str, list[float]], seconds: float
) -> dict[str, Any]:
    fields = sum(r["fields"] for r in rows)
    false = sum(r["false_positives"] for r in rows)
    return {
        "sessions": len(rows),
        "scores": {
            key: {
                "score": mean([r[key] for r in rows]),
                "of": sum(r[key] is not None for r in rows),
            }
            for key in ("prompt", "files", "read", "command", "cap")
        },
        "capture": {
            "replayed": sum(r["replayed"] for r in rows),
            "captured": sum(r["captured"] for r in rows),
        },
        "latency_ms": {
            name: {
                "n": len(v),
                "p50": round(pct(v, 0.5) * 1000, 1),
                "p95": round(pct(v, 0.95) * 1000, 1),
            }
            for name, v in sorted(latency.items())
        },
        "redaction": {
            "fields": fields,
            "high_entropy_fields": sum(r["high_entropy_fields"] for r in rows),
            "false_positives": false,
            "share": round(false / fields, 4) if fields else 0.0,
        },
        "redacted_spans": {
            name: sum(r["redacted_spans"].get(name, 0) for r in rows)
            for name in sorted({n for r in rows for n in r["redacted_spans"]})
        },
        "secrets_on_disk": sum(r["secrets"] for r in rows),
        "hook_errors": sum(r["hook_errors"] for r in rows),
        "seconds": round(seconds, 1),
        "machine": machine(),
        "per_session": [{k: v for k, v in r.items() if k != "brief"} for r in rows],
    }


def report(out: dict[str, Any]) -> None:
    m = out["machine"]
    print(
        f"replayed {out['sessions']} real Claude Code sessions in {out['seconds']} s "
        f"({m.get('nproc')} cores, {m.get('cpu', '?')})"
    )
    print("brief scores (share of sessions where it applies):")
    for key, value in out["scores"].items():
        print(f"  {key:<8} {value['score']}  (of {value['of']})")
    cap = out["capture"]
    print(f"capture: {cap['captured']} of {cap['replayed']} tool calls")
    print("hook latency in-process (ms):")
    for name, value in out["latency_ms"].items():
        print(f"  {name:<20} n={value['n']:<5} p50={value['p50']:<7} p95={value['p95']}")
    red = out["redaction"]
    print(
        f"redaction false positives: {red['false_positives']} of {red['fields']} fields "
        f"({red['share']:.2%}); high_entropy markers in {red['high_entropy_fields']} fields"
    )
    print(
        "redacted spans by class: "
        + ", ".join(f"{k} {v}" for k, v in out["redacted_spans"].items())
    )
    print(
        f"secrets on disk (lore check): {out['secrets_on_disk']}; hook errors: {out['hook_errors']}"
    )


def find_data(path: Path) -> Path:
    """`path`, a relative one from the repository root, or from the main checkout's root when
    this is a git worktree (its `../shared` is the main checkout's neighbour)."""
    roots = [REPO]
    common = subprocess.run(
        ["git", "rev-parse", "--path-format=absolute", "--git-common-dir"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    if common:
        roots.append(Path(common).parent)
    for root in roots:
        data = (root / path).resolve()
        if (data / "index.json").is_file():
            return data
    raise SystemExit(f"{path}/index.json not found (from {REPO}): pass --data")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data",
        type=Path,
        default=DATA,
        help="the claude-sessions folder (relative paths: from the repository)",
    )
    parser.add_argument("--sessions", type=int, help="replay only N sessions (spread evenly)")
    parser.add_argument("--ids", help="replay only these sessions (comma-separated id prefixes)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--briefs", type=Path, help="write each session's brief to this folder")
    args = parser.parse_args(argv)
    for key in [k for k in os.environ if k.startswith("LORE_")]:
        del os.environ[key]
    data = find_data(args.data)
    sessions = pick(json.loads((data / "index.json").read_text())["sessions"], args.sessions)
    if args.ids:
        wanted = tuple(args.ids.split(","))
        sessions = [meta for meta in sessions if meta["id"].startswith(wanted)]
    latency: dict[str, list[float]] = {}
    started = time.perf_counter()
    rows = [one(data, meta, latency) for meta in sessions]
    out = summary(rows, latency, time.perf_counter() - started)
    if args.briefs:
        args.briefs.mkdir(parents=True, exist_ok=True)
        for row in rows:
            (args.briefs / f"{row['id']}.md").write_text(row["brief"], encoding="utf-8")
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        report(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
