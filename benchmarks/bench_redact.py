"""Redaction of hostile text against plain text of the same size: linear time, paired ratios.

    python benchmarks/bench_redact.py [--sizes 16,64,256,1024] [--rounds 3] [--budget 30]
                                      [--quick] [--cpu] [--src PATH] [--json] [case ...]

A committed learning is redacted on every read, so one file of repetitive text that makes a
rule backtrack or restart at every offset would freeze every teammate's `lore show`, search
and hooks.  Each case repeats one unit ("sk-", "password=", "eyJ", "a@", digits, ...) to
16 KB .. 1 MB and runs ``Sanitizer.redact_text`` on it; the reference is a realistic learning
body of the same size (Markdown with prose, SQL, a command line, paths, a URL, times,
versions and hashes: every rule family's triage lets it through, as it does real learnings).

Each round times the plain text and every case once, interleaved (the machine's speed drifts
with its load; the ratio of neighbours stays put).  Reported per case and size: the median ms
and the median of the per-round ratios to the plain text [goal: <= 2x], and how the time grows
from one size to the next (x4 input: ~x4 time when linear, ~x16 when quadratic).  A case whose
run exceeds --budget seconds is not run at larger sizes (the code before the fix took minutes).
`--src` times another checkout's ``src/`` (the "before" figures); default: this repository's.
`--quick`: 16 KB and 256 KB only (a few seconds; the ratios hardly move with the size).
`--cpu`: time with the process's CPU clock instead of the wall clock (steadier on a machine
shared with other work: a run that waits for a CPU is not charged for the wait).
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

UNITS: dict[str, str] = {
    # provider prefixes and their glued forms (token candidates, inner keys)
    "sk-": "sk-",
    "-sk-": "-sk-",
    "sk-a": "sk-a",
    "ghp_": "ghp_",
    "glpat-": "glpat-",
    "xoxb-": "xoxb-",
    "sk_live_": "sk_live_",
    "npm_": "npm_",
    "hf_": "hf_",
    "AIza": "AIza",
    "AKIA": "AKIA",
    "x-AKIA": "x-AKIA",
    # high-entropy candidates
    "base64": "aZ9+",
    "base64=": "aZ9=",
    # keyed assignments and flags
    "password=": "password=",
    "password: ": "password: ",
    'password="': 'password="',
    "token=": "token=",
    "Authorization: ": "Authorization: ",
    "--token ": "--token ",
    "a=:": "a=:",
    # private keys, URLs, emails
    "-----BEGIN ": "-----BEGIN ",
    "BEGIN PRIVATE KEY": "-----BEGIN RSA PRIVATE KEY-----",
    "://a:b@": "://a:b@",
    "a@": "a@",
    "a.b@": "a.b@",
    # PII digits
    "digits": "4",
    "digit groups": "4 ",
    "1-": "1-",
    "(": "(",
    "+1 ": "+1 ",
    # JWTs, bearer tokens, webhooks
    "eyJ": "eyJ",
    "eyJabcde.": "eyJabcde.",
    "Bearer ": "Bearer ",
    "SG.": "SG.",
    "slack webhook": "hooks.slack.com/services/",
}


def plain_block(i: int) -> str:
    """One block of a realistic learning body (no secret); numbers differ with `i`."""
    return (
        "## Problem\nThe RLS policy on `public.orders` blocked INSERT with the anon key "
        f"(run {i}); CI job #{1000 + i} failed at 2026-11-22T10:{i % 60:02d}:00Z in "
        f"src/app/orders/handler_{i}.py:{i % 300}.\n\n## Root Cause\nSupabase evaluates "
        "`auth.uid()` as NULL for the anon role, so the policy `USING (owner_id = auth.uid())` "
        "rejects every row. See https://supabase.com/docs/guides/auth/row-level-security.\n\n"
        '```sql\ncreate policy "orders_insert" on public.orders for insert with check '
        "(owner_id = auth.uid());\n```\n\n## Solution\nUse the service-role client for admin "
        "mutations: `createClient(url, serviceRoleKey)`; timeout: 30, retries: 3, version "
        f"2.{i % 40}.1, commit {i * 2654435761 % 16**7:07x}.\nRun `pytest -q "
        "tests/test_orders.py -k insert --maxfail=1` before pushing.\n\n"
    )


def plain_text(size: int) -> str:
    parts: list[str] = []
    total = i = 0
    while total < size:
        block = plain_block(i)
        parts.append(block)
        total += len(block)
        i += 1
    return "".join(parts)[:size]


def fill(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def run(
    src: Path, names: list[str], sizes: list[int], rounds: int, budget: float, cpu: bool = False
) -> Any:
    sys.path.insert(0, str(src))
    from lorebook.redact.sanitize import Sanitizer

    sanitizer = Sanitizer()
    redact = sanitizer.redact_text
    redact(plain_text(20_000))  # compile the patterns
    clock = time.process_time if cpu else time.perf_counter
    results: dict[str, dict[int, dict[str, float]]] = {name: {} for name in names}
    plain: dict[int, float] = {}
    alive = set(names)  # cases still within the budget
    for size in sizes:
        texts = {name: fill(UNITS[name], size) for name in names}
        reference = plain_text(size)
        times: dict[str, list[float]] = {name: [] for name in names}
        ratios: dict[str, list[float]] = {name: [] for name in names}
        ref: list[float] = []
        over: set[str] = set()
        for r in range(rounds):
            order = [n for n in names if n in alive and n not in over]
            if r % 2:
                order.reverse()
            for name in order:  # each case next to a fresh plain run
                t0 = clock()
                redact(reference)
                t1 = clock()
                redact(texts[name])
                t2 = clock()
                ref.append(t1 - t0)
                times[name].append(t2 - t1)
                ratios[name].append((t2 - t1) / (t1 - t0))
                if t2 - t1 > budget:
                    over.add(name)
        plain[size] = statistics.median(ref) if ref else float("nan")
        for name in names:
            if times[name]:
                results[name][size] = {
                    "ms": statistics.median(times[name]) * 1e3,
                    "ratio": statistics.median(ratios[name]),
                }
        alive -= over
    return plain, results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="16,64,256,1024", help="KB, comma-separated")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--budget", type=float, default=30.0, help="seconds per run")
    parser.add_argument("--src", type=Path, default=Path(__file__).resolve().parents[1] / "src")
    parser.add_argument("--quick", action="store_true", help="sizes 16,256 KB")
    parser.add_argument("--cpu", action="store_true", help="time with the process's CPU clock")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("cases", nargs="*", help="some of the units (default: all)")
    args = parser.parse_args(argv)
    if unknown := set(args.cases) - set(UNITS):
        parser.error(f"unknown case(s): {', '.join(sorted(unknown))}")
    names = args.cases or list(UNITS)
    sizes = [int(float(s) * 1024) for s in ("16,256" if args.quick else args.sizes).split(",")]
    plain, results = run(args.src, names, sizes, max(args.rounds, 1), args.budget, args.cpu)
    if args.json:
        print(json.dumps({"plain_ms": {s: v * 1e3 for s, v in plain.items()}, "cases": results}))
        return 0
    head = "".join(f"{s // 1024:>7} KB ms  ratio" for s in sizes)
    print(f"{'case':20}{head}   growth x4")
    print(f"{'(plain body)':20}" + "".join(f"{plain[s] * 1e3:15.1f}       " for s in sizes))
    worst = 0.0
    for name in names:
        row = results[name]
        cells = []
        for s in sizes:
            got = row.get(s)
            skipped = f"{'skipped':>15}       "
            cells.append(f"{got['ms']:15.1f} {got['ratio']:5.1f}x" if got else skipped)
            if got:
                worst = max(worst, got["ratio"])
        ms = [row[s]["ms"] for s in sizes if s in row]
        growth = " ".join(f"{b / a:4.1f}" for a, b in itertools.pairwise(ms) if a > 0)
        print(f"{name:20}{''.join(cells)}   {growth}")
    print(f"worst ratio to the plain body: {worst:.1f}x (goal <= 2x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
