"""`lore mcp` over the protocol: warm `search_learnings` latency on a generated store.

    .venv/bin/python benchmarks/bench_mcp.py [--learnings 2000] [--calls 60] [--json-out F]

A real `mcp` Client talks stdio to `python -m lorebook mcp` in a store of `--learnings`
generated learnings (bench_search's generator), indexed once first. Figures:
* server start to initialized (the client's handshake), and the first search after it;
* warm `search_learnings` p50/p95 as the client sees it -- JSON-RPC over pipes, argument
  validation, the search, the applications lookup, output validation, the `tool_call` append
  (target p50 <= 100 ms at 2,000 learnings);
* the same search in-process through `Lorebook.index.search` (what the protocol adds is the gap);
* `search_actions` with limit 1: the floor of one logged tool call.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import fmt_ms, machine, pct, verdict, write_results  # noqa: E402
from bench_search import FAILS, THINGS, WHEN, build  # noqa: E402

from lorebook import Lorebook  # noqa: E402

TARGET_P50 = 0.100


def queries(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [f"{rng.choice(THINGS)} {rng.choice(FAILS)} {rng.choice(WHEN)}" for _ in range(count)]


async def over_protocol(root: Path, texts: list[str]) -> dict[str, Any]:
    from mcp import Client, StdioServerParameters

    keep = ("PATH", "HOME", "LORE_MODEL_CACHE", "PYTHONPATH")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env["LORE_ROOT"] = str(root)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "lorebook", "mcp"], env=env, cwd=str(root)
    )
    started = time.perf_counter()
    async with Client(params) as client:
        ready = time.perf_counter() - started

        async def timed(name: str, args: dict[str, Any]) -> float:
            begin = time.perf_counter()
            result = await client.call_tool(name, args)
            took = time.perf_counter() - begin
            if result.is_error:
                raise SystemExit(f"{name} failed: {result.content[0].text}")
            return took

        first = await timed("search_learnings", {"query": texts[0]})
        warm = [await timed("search_learnings", {"query": q}) for q in texts[1:]]
        floor = [await timed("search_actions", {"limit": 1}) for _ in range(20)]
    return {"ready_s": ready, "first_s": first, "warm_s": warm, "floor_s": floor}


def in_process(root: Path, texts: list[str]) -> list[float]:
    index = Lorebook.open(root, env={}).index
    index.search(texts[0], limit=5)
    out = []
    for text in texts[1:]:
        begin = time.perf_counter()
        index.search(text, limit=5)
        out.append(time.perf_counter() - begin)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learnings", type=int, default=2000)
    parser.add_argument("--calls", type=int, default=60, help="warm searches to time")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--store", type=Path, help="build the store here and keep it; "
                        "reused (index and all) when it already holds learnings")
    parser.add_argument("--json-out")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="lore-bench-mcp-") as tmp:
        root = args.store or Path(tmp) / "store"
        if (root / "learnings").is_dir() and any((root / "learnings").glob("*.md")):
            book = Lorebook.open(root, env={})
        else:
            book = build(root, args.learnings, args.seed)
        began = time.perf_counter()
        book.index.update()
        indexed = time.perf_counter() - began
        texts = queries(args.calls + 1, args.seed)
        local = in_process(root, texts)
        served = anyio.run(over_protocol, root, texts)
    warm = served["warm_s"]
    results = {
        "learnings": args.learnings,
        "calls": len(warm),
        "index_build_s": round(indexed, 1),
        "server_ready_s": round(served["ready_s"], 3),
        "first_search_s": round(served["first_s"], 3),
        "mcp_search_p50_ms": round(statistics.median(warm) * 1000, 1),
        "mcp_search_p95_ms": round(pct(warm, 0.95) * 1000, 1),
        "inprocess_search_p50_ms": round(statistics.median(local) * 1000, 1),
        "logged_call_floor_p50_ms": round(statistics.median(served["floor_s"]) * 1000, 1),
        "target_p50_ms": TARGET_P50 * 1000,
        "verdict": verdict(statistics.median(warm), TARGET_P50),
    }
    print(f"machine: {machine()}")
    print(f"{args.learnings} learnings, index built (or brought up to date) in {indexed:.0f} s")
    print(f"server ready (initialize done) {fmt_ms(served['ready_s'])}; "
          f"first search {fmt_ms(served['first_s'])}")
    print(f"warm search_learnings over MCP: p50 {results['mcp_search_p50_ms']} ms, "
          f"p95 {results['mcp_search_p95_ms']} ms ({len(warm)} calls) "
          f"-> {results['verdict']} (target p50 <= {TARGET_P50 * 1000:.0f} ms)")
    print(f"same search in-process: p50 {results['inprocess_search_p50_ms']} ms; "
          f"a logged search_actions(limit=1): p50 {results['logged_call_floor_p50_ms']} ms")
    write_results(args.json_out, "mcp", results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
