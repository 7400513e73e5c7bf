"""What the once-per-call rule costs a hook: one claim in the delivery ledger, against the
append of the record it guards, side by side in one run (ratios, not absolute times, count on
a noisy machine).

    .venv/bin/python benchmarks/bench_deliveries.py [--calls N] [--json]

A fresh store; one session's ledger grows to N claimed calls (a long session has a few
thousand tool calls). Timed, interleaved: `claim` of a new id, `claim` of a repeat (the
second delivery), and `Lorebook.log` of one tool_call record. The claims' cost is then given
at the ledger's size at the end (the slowest: a claim reads the session's whole ledger).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import REPO, machine

sys.path.insert(0, str(REPO / "src"))

from lorebook import Lorebook
from lorebook.log.deliveries import claim


def run(calls: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        book = Lorebook.init(root)
        cache = book.layout.cache
        times: dict[str, list[float]] = {"claim_new": [], "claim_repeat": [], "log": []}
        for n in range(calls):
            call = f"call_{n:024d}"
            started = time.perf_counter()
            first = claim(cache, "codex", "s-1", call)
            times["claim_new"].append(time.perf_counter() - started)
            started = time.perf_counter()
            again = claim(cache, "codex", "s-1", call)
            times["claim_repeat"].append(time.perf_counter() - started)
            assert first and not again
            started = time.perf_counter()
            book.log("tool_call", session="s-1", context={"tool": "Bash", "tool_use_id": call})
            times["log"].append(time.perf_counter() - started)
    tail = max(1, calls // 10)  # the last tenth: the ledger at its largest
    out: dict[str, Any] = {"calls": calls, "machine": machine()}
    for name, values in times.items():
        out[f"{name}_p50_us"] = round(statistics.median(values) * 1e6, 1)
        out[f"{name}_last_tenth_p50_us"] = round(statistics.median(values[-tail:]) * 1e6, 1)
    out["claim_share_of_log"] = round(
        out["claim_new_last_tenth_p50_us"] / out["log_last_tenth_p50_us"], 3
    )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    out = run(args.calls)
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"delivery ledger, one session of {out['calls']} tool calls ({out['machine']})")
    for name in ("claim_new", "claim_repeat", "log"):
        print(f"  {name:13} p50 {out[f'{name}_p50_us']:8.1f} us   "
              f"at the end {out[f'{name}_last_tenth_p50_us']:8.1f} us")  # fmt: skip
    print(
        f"  a claim costs {out['claim_share_of_log']:.1%} of the append it guards "
        "(at the ledger's largest)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
