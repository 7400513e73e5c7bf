"""Micro-benchmark of the sanitizer on the append path: µs per call and ratio to json.dumps.

    python benchmarks/bench_sanitize.py [--seconds 2] [--json]

Cases (goals in brackets; the whole append must reach >= 20k actions/s):

* ``context``  a realistic ~900 B context without secrets (file list, commit, message,
  command, params, notes)                                                         [<= 15 µs]
* ``secrets``  the same with 4 secrets: a bearer token in the command, a postgres URL with
  a password, an ``api_key`` key and an email                                     [<= 60 µs]
* ``short``    ``{"agent_id": "abc123"}``                                         [<= 2 µs]
* ``curl``     one string: a curl command line with a GitHub token in a bearer header

Every call gets DISTINCT strings (index-dependent hashes, file names, messages, tokens), so
the sanitizer's harmless-string cache only helps with what repeats in real logs too (key
names, a branch name, a fixed note).  Each batch of freshly made values is run through
``Sanitizer.sanitize(value, "context")`` and, interleaved, through ``json.dumps`` (the
machine's speed drifts with its load; the ratio stays put).  Reported: the median over
batches of µs per call, and the median of the per-batch ratios.  Standalone: puts the
repository's src/ on sys.path itself.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from lorebook.redact.sanitize import Sanitizer

TOKEN_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def context(i: int) -> dict[str, Any]:
    """A realistic ~900 B context without secrets; its strings differ with `i`."""
    return {
        "files": [f"src/app/module_{j}/handler_{i}_{j}.py" for j in range(12)],
        "commit_hash": f"{i:07x}",
        "branch": "feature/auth",
        "message": f"Fix token refresh race in the auth client (#{i})\n\nThe refresh and the "
        "retry could both rotate the token; serialise them behind a lock and add a regression "
        "test.",
        "command": f"pytest -q tests/test_auth.py -k refresh_{i} --maxfail=1 --durations=5",
        "params": {"retries": 3, "timeout_s": 120, "labels": ["bench", "auth"], "dry_run": False},
        "notes": "Reviewer asked to keep the public API unchanged; rollout after the freeze "
        "window.",
    }


def _token(i: int, n: int = 36) -> str:
    r = random.Random(i)
    return "".join(r.choice(TOKEN_CHARS) for _ in range(n))


def curl(i: int) -> str:
    return (
        f"curl -sS -H 'Authorization: Bearer ghp_{_token(i)}' "
        f"https://api.github.com/repos/example/app/pulls/{i}"
    )


def secrets(i: int) -> dict[str, Any]:
    """The realistic context with 4 secrets (each differs with `i`)."""
    ctx = context(i)
    ctx["command"] = curl(i)
    ctx["database_url"] = f"postgres://app:pw{i}@db/app"
    ctx["api_key"] = f"k{i}-{_token(i + 1, 24)}"
    ctx["notes"] = f"Reviewer jane.doe{i}@example.com asked to keep the public API unchanged."
    return ctx


def short(i: int) -> dict[str, Any]:
    return {"agent_id": f"a{i:05x}"}


CASES: dict[str, tuple[Callable[[int], Any], float | None]] = {
    "context": (context, 15.0),
    "secrets": (secrets, 60.0),
    "short": (short, 2.0),
    "curl": (curl, None),
}


def measure(make: Callable[[int], Any], seconds: float, batch: int = 50) -> dict[str, float]:
    """Median µs per call of sanitize() and of json.dumps() over batches of fresh values,
    interleaved (each goes first in turn), and the median per-batch ratio.  Values are made
    before timing and never reused, so no string is seen twice unless `make` repeats it."""
    sanitizer = Sanitizer()
    sanitize = sanitizer.sanitize
    dumps = json.dumps
    base = 1_000_000  # warm-up values use other indices than the measured ones
    for i in range(200):
        sanitize(make(base + i), "context")
    san: list[float] = []
    ref: list[float] = []
    ratios: list[float] = []
    clock = time.perf_counter
    deadline = clock() + seconds
    i = 0
    while clock() < deadline or len(san) < 40:
        chunk = [make(i + j) for j in range(batch)]
        i += batch
        for turn in (0, 1) if len(san) % 2 else (1, 0):  # alternate which goes first
            t0 = clock()
            if turn:
                for value in chunk:
                    sanitize(value, "context")
            else:
                for value in chunk:
                    dumps(value)
            (san if turn else ref).append((clock() - t0) / batch * 1e6)
        ratios.append(san[-1] / ref[-1])
    return {
        "us": statistics.median(san),
        "us_best": min(san),
        "json_us": statistics.median(ref),
        "ratio": statistics.median(ratios),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="per case")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("cases", nargs="*", help=f"some of {', '.join(CASES)} (default: all)")
    args = parser.parse_args(argv)
    if unknown := set(args.cases) - set(CASES):
        parser.error(f"unknown case(s): {', '.join(sorted(unknown))}")
    results: dict[str, dict[str, Any]] = {}
    for name in args.cases or CASES:
        make, goal = CASES[name]
        r = measure(make, args.seconds)
        r["bytes"] = len(json.dumps(make(0)).encode())
        r["goal_us"] = goal
        results[name] = {k: round(v, 3) if isinstance(v, float) else v for k, v in r.items()}
    if args.json:
        print(json.dumps(results))
        return 0
    for name, r in results.items():
        goal = f"goal <= {r['goal_us']:.0f} µs" if r["goal_us"] else ""
        print(
            f"{name:8} {r['bytes']:5} B  sanitize {r['us']:7.2f} µs (best {r['us_best']:.2f})"
            f"  json.dumps {r['json_us']:6.2f} µs  ratio {r['ratio']:5.2f}x  {goal}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
