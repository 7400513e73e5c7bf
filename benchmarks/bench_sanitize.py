"""Micro-benchmark of the sanitizer on the append path: µs per ~1 KB context and per short one.

    python benchmarks/bench_sanitize.py [--seconds 2] [--json]

The budget is <= 25 µs per ~1 KB context (the whole append must reach >= 20k actions/s).
Every context is freshly generated: commit hashes, messages, timestamps and outputs vary, while
key names, paths and a few commands repeat, as they do in real logs (the sanitizer remembers
strings it found harmless, so only a generator's repeats can help it).  Standalone: puts the
repository's src/ on sys.path itself.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from lorebook.log.sanitize import Sanitizer

WORDS = [
    *("shard", "writer", "lock", "race", "fsync", "rename", "append", "agent", "session"),
    *("resume", "query", "index", "cache", "config", "parser", "token", "budget", "retry"),
    *("flaky", "test", "fixture", "migrate", "schema", "render"),
]
FILES = (
    "src/lorebook/log/writer.py",
    "src/lorebook/log/sanitize.py",
    "tests/test_writer.py",
    "src/lorebook/cli/commands/log_cmd.py",
    "docs/DESIGN.md",
    "pyproject.toml",
)


def context(rng: random.Random, i: int) -> dict[str, Any]:
    """A realistic ~1 KB action context: paths, a commit, a command line, short strings, numbers."""
    words = " ".join(rng.choice(WORDS) for _ in range(12))
    sha = "".join(rng.choice("0123456789abcdef") for _ in range(40))
    return {
        "files": rng.sample(FILES, 3),
        "commit": {
            "sha": sha,
            "short": sha[:7],
            "message": f"Fix {words}\n\nThe lock was released before fsync; hold it until the "
            f"rename completes (see #{rng.randint(100, 9999)}).",
            "author": f"agent-{i % 7}",
        },
        "command": f"pytest -q tests/test_writer.py -k 'lock and not slow' --maxfail={i % 5 + 1}",
        "cwd": "/work/main",
        "exit_code": i % 2,
        "duration_ms": rng.random() * 5000,
        "stdout_tail": f"....... {rng.randint(1, 300)} passed, 2 skipped in {rng.random():.2f}s",
        "tool": "bash",
        "status": "ok",
        "retries": rng.randint(0, 3),
        "env": {"PYTHONPATH": "src", "CI": "false", "LORE_AGENT": f"agent-{i % 7}"},
        "notes": ["flaky on macOS", f"see issue {rng.randint(1, 999)}", "needs a follow-up"],
        "branch": f"fix/shard-lock-{i % 97}",
        "timestamp": f"2024-11-{i % 28 + 1:02d}T07:{i % 60:02d}:00Z",
        "tokens": {"prompt_tokens": rng.randint(100, 9000), "completion_tokens": 512},
        "plan": f"then run the {rng.choice(WORDS)} suite and update the {rng.choice(WORDS)} docs",
    }


def short(rng: random.Random, i: int) -> dict[str, Any]:
    return {"cmd": f"pytest -q -x tests/test_{rng.choice(WORDS)}.py", "exit_code": i % 2}


def measure(make: Any, seconds: float) -> tuple[float, float]:
    """Best mean µs per call of sanitize() and, interleaved, of json.dumps() on the same
    inputs (a reference for how fast this machine is right now).

    Every batch is freshly generated, so a string is only ever seen again when the generator
    repeats it (as real logs repeat commands and paths), never because the benchmark loops.
    Small batches and the best one kept: the noise of a shared machine (descheduling,
    neighbours) only ever makes a batch slower.  Compare with the json.dumps figure: this
    machine's speed drifts by 1.5x with its load, and the ratio stays put."""
    rng = random.Random(7)
    sanitizer = Sanitizer()
    for i in range(200):
        sanitizer.sanitize(make(rng, i))  # warm the per-instance caches, as a running writer
    best = {sanitizer.sanitize: float("inf"), json.dumps: float("inf")}
    batch = 50
    deadline = time.perf_counter() + seconds
    i = 0
    while time.perf_counter() < deadline or i < 40 * batch:
        chunk = [make(rng, i + j) for j in range(batch)]
        for call in best:
            start = time.perf_counter()
            for value in chunk:
                call(value)
            best[call] = min(best[call], (time.perf_counter() - start) / batch)
        i += batch
    return best[sanitizer.sanitize] * 1e6, best[json.dumps] * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    size = len(json.dumps(context(random.Random(1), 1)).encode())
    sanitize_us, json_us = measure(context, args.seconds)
    short_us, _ = measure(short, args.seconds / 2)
    result = {
        "context_bytes": size,
        "us_per_1kb_context": round(sanitize_us, 2),
        "us_per_short_context": round(short_us, 2),
        "us_json_dumps_same_context": round(json_us, 2),
        "budget_us": 25.0,
    }
    if args.json:
        print(json.dumps(result))
    else:
        print(
            f"sanitize ~{size} B context: {result['us_per_1kb_context']:.1f} µs "
            f"(budget {result['budget_us']:.0f} µs)"
        )
        print(f"sanitize short context:   {result['us_per_short_context']:.1f} µs")
        print(
            f"(machine reference: json.dumps of the same context "
            f"{result['us_json_dumps_same_context']:.1f} µs)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
