"""`lore resume --json` on one session whose shard grew huge, against the same tail on its own.

    .venv/bin/python benchmarks/bench_resume_huge.py [--workdir /tmp/lore-bench-huge] [--mb 2000]

A store with one session (start event, an old action, an open spawn, a failed validation and 26
edits) is made and committed; a copy gets `--mb` MB of old successful actions inserted after the
start event, written as bytes. `lore resume --json` then runs in a fresh helper process on each
store, so `RUSAGE_CHILDREN` gives the resume process's own peak RSS. The two answers must agree
(except the action count, the git block and `history`, which says what was left unread).

Target: peak RSS independent of the shard size (resume reads `resume.tail_bytes` from the end).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from _common import PYTHON, clean_env, write_results

T0 = datetime(2026, 3, 4, 12, 0, tzinfo=UTC)
_HELPER = (
    "import resource, subprocess, sys, time\n"
    "t = time.perf_counter()\n"
    "done = subprocess.run(sys.argv[1:], capture_output=True)\n"
    "took = time.perf_counter() - t\n"
    "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024\n"
    "sys.stdout.buffer.write(done.stdout)\n"
    "print(f'\\n@@{took} {peak} {done.returncode}')\n"
)


def git(root: Path, *args: str) -> None:
    env = clean_env(
        GIT_AUTHOR_NAME="bench",
        GIT_AUTHOR_EMAIL="bench@example.invalid",
        GIT_COMMITTER_NAME="bench",
        GIT_COMMITTER_EMAIL="bench@example.invalid",
    )
    subprocess.run(["git", "-C", str(root), *args], check=True, env=env, capture_output=True)


def make_store(root: Path) -> None:
    from lorebook import Lorebook

    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    Lorebook.init(root, env={})
    book = Lorebook.open(root, env={})

    def at(minutes: int) -> datetime:
        return T0 + timedelta(minutes=minutes)

    s = book.start_session(session_id="s-huge", agent="PS", project="p", now=at(0))
    s.log("tool_call", outcome="success", now=at(1), context={"tool_name": "grep"})
    s.log("spawn", outcome="in_progress", now=at(2), context={"agent_id": "impl-1"})
    s.log("validate", outcome="failure", now=at(3), epic="e-9", context={"failures": ["t"]})
    for minute in range(4, 30):
        s.log("edit", outcome="success", now=at(minute), context={"task": f"step {minute}"})
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "store")


def _ulid(n: int) -> bytes:
    alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
    digits = []
    for _ in range(16):
        n, r = divmod(n, 32)
        digits.append(alphabet[r])
    return ("01JNK0000A" + "".join(reversed(digits))).encode()


def inflate(root: Path, megabytes: int) -> Path:
    """Insert `megabytes` MB of distinct old actions after the start event; the shard's path."""
    (shard,) = (root / "actionlog").rglob("s-huge.jsonl")
    start, old, *rest = shard.read_bytes().splitlines(keepends=True)
    pre, _, post = json.dumps(dict(json.loads(old), id="@"), separators=(",", ":")).partition("@")
    line = len(pre) + 26 + len(post) + 1
    count = (megabytes << 20) // line
    with open(shard, "wb") as handle:
        handle.write(start)
        step = 100_000
        for first in range(0, count, step):
            handle.write(
                b"".join(
                    pre.encode() + _ulid(i) + post.encode() + b"\n"
                    for i in range(first, min(count, first + step))
                )
            )
        handle.write(old + b"".join(rest))
    return shard


def resume(root: Path) -> tuple[dict[str, Any], float, float]:
    done = subprocess.run(
        [PYTHON, "-c", _HELPER, PYTHON, "-m", "lorebook", "resume", "--json"],
        env=clean_env(LORE_ROOT=str(root)),
        capture_output=True,
        text=True,
        check=True,
    )
    out, _, figures = done.stdout.rpartition("\n@@")
    took, peak, code = figures.split()
    if code != "0":
        sys.exit(f"lore resume failed in {root}")
    return json.loads(out), float(took), float(peak)


def comparable(state: dict[str, Any]) -> dict[str, Any]:
    session = {k: v for k, v in state["session"].items() if k != "action_count"}
    return {k: v for k, v in state.items() if k not in ("git", "history")} | {"session": session}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/lore-bench-huge"))
    parser.add_argument("--mb", type=int, default=2000, help="size of the old actions, in MB")
    parser.add_argument("--json-out", help="also write the figures to this file")
    args = parser.parse_args()
    shutil.rmtree(args.workdir, ignore_errors=True)
    small, huge = args.workdir / "small", args.workdir / "huge"
    make_store(small)
    shutil.copytree(small, huge, symlinks=True)
    shard = inflate(huge, args.mb)
    size_mb = shard.stat().st_size / (1 << 20)
    small_state, small_s, small_mb = resume(small)
    huge_state, huge_s, huge_mb = resume(huge)
    same = comparable(small_state) == comparable(huge_state)
    print(f"resume, small shard:          {small_s:6.2f} s, peak RSS {small_mb:6.0f} MB")
    print(f"resume, {size_mb:7.0f} MB shard:   {huge_s:6.2f} s, peak RSS {huge_mb:6.0f} MB")
    skipped = (huge_state.get("history") or {}).get("skipped_bytes", 0)  # absent in older versions
    print(f"skipped bytes reported: {skipped:,}; answers agree: {same}")
    write_results(
        args.json_out,
        "resume_huge",
        {
            "shard_mb": size_mb,
            "small_s": small_s,
            "small_peak_mb": small_mb,
            "huge_s": huge_s,
            "huge_peak_mb": huge_mb,
            "answers_agree": same,
        },
    )
    shutil.rmtree(args.workdir, ignore_errors=True)
    if not same:
        sys.exit("the answers differ")


if __name__ == "__main__":
    main()
