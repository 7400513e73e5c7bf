"""`lore tui`: time to first paint, cold, on the `lore demo` store (or any `--store`).

    .venv/bin/python benchmarks/bench_tui.py [--store DIR] [--runs 7] [--json-out F]

Each run is a fresh `python` process that imports the TUI, opens the store, builds the app with
`make_app` and runs it headless at 80x24 until the first screen is composed, mounted and
painted (the sessions table filled); the figure is the wall time from spawning the process to
that moment, so it includes the interpreter, the imports of textual and lorebook and the first
queries. Target: under 1.5 s.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import fmt_ms, machine, median, pct, verdict, write_results  # noqa: E402

TARGET = 1.5

CHILD = """
import asyncio, sys
from lorebook import Lorebook
from lorebook.tui.app import make_app

async def main():
    app = make_app(Lorebook.open(sys.argv[1]), load_model=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        print("painted", app.query_one("#sessions-table").row_count, flush=True)

asyncio.run(main())
"""


def first_paint(store: Path) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(store)], capture_output=True, text=True, check=True,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert done.stdout.startswith("painted"), done.stderr
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--store", type=Path, help="an existing store (default: a fresh demo)")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json-out")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = args.store
        if store is None:
            store = Path(tmp) / "demo"
            subprocess.run([sys.executable, "-m", "lorebook", "demo", str(store)], check=True,
                           capture_output=True)
        first_paint(store)  # warm the OS file cache and bytecode once
        times = [first_paint(store) for _ in range(args.runs)]
    results = {"store": str(args.store or "lore demo"), "runs": args.runs,
               "first_paint_p50_s": median(times), "first_paint_p95_s": pct(times, 0.95)}
    print(f"machine: {machine()}")
    print(f"first paint p50 {fmt_ms(median(times))}, p95 {fmt_ms(pct(times, 0.95))} "
          f"({args.runs} runs) {verdict(median(times), TARGET)}")
    write_results(args.json_out, "tui", results)


if __name__ == "__main__":
    main()
