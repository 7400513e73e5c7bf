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

    .venv/bin/python benchmarks/bench_mcp.py --fresh-clone [--actions 200000] [--learnings 1800]

A fresh clone instead: `--actions` generated actions (generate_store) and `--learnings`
learnings (one of them a pattern), no `.lore/cache` (no index, no catalog). The server is
started and every tool's first answer is timed, with whether the index build and the catalog
build (both in the background) had finished by then, and whether the answer said it was
partial; then `get_recent_actions` (`--calls` times, while the builds run and again after
them) against `Lorebook.resume()` in-process on a long-lived book, medians and ratio (target:
ratio <= 2).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
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
PATTERN = """---
id: bench-port-pattern
title: Port already in use on deploy
kind: pattern
category: deployment
severity: medium
status: published
created: 2026-11-01
solutions:
  - id: s1
    text: Stop the old process first
---
## Problem
The deploy fails: the port is already in use.
"""
TARGET_RESUME_RATIO = 2.0


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


def first_calls(query: str, learning: str, pattern: str) -> list[tuple[str, dict[str, Any]]]:
    """One call of every tool (the writing ones on the generated learnings)."""
    return [
        ("log_action", {"action_type": "plan", "context": {"bench": "fresh clone"}}),
        ("get_recent_actions", {}),
        ("search_learnings", {"query": query}),
        ("preflight", {"task": query}),
        ("search_actions", {"limit": 20}),
        ("get_subagent_status", {}),
        ("get_activity_report", {"days": 7}),
        ("get_learning_stats", {}),
        ("track_learning_application", {"learning_id": learning, "outcome": "success"}),
        ("record_occurrence", {"pattern_id": pattern, "solution": "s1", "success": True}),
        ("draft_learning", {"title": "Fresh clone answers at once"}),
        ("get_expertise", {}),
        ("index_learning", {}),
        ("export_training_data", {"path": "bench-fresh.jsonl", "since": "7d"}),
    ]


def catalog_built(root: Path) -> bool:
    """The catalog's marker of a finished build (its file exists from the build's start)."""
    import sqlite3
    from contextlib import closing

    path = root / ".lore" / "cache" / "catalog.sqlite"
    try:
        with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=0)) as conn:
            return conn.execute("SELECT 1 FROM meta WHERE key = 'built'").fetchone() is not None
    except sqlite3.Error:
        return False


async def fresh_over_protocol(
    root: Path, project: str, calls: list[tuple[str, dict[str, Any]]], repeat: int
) -> dict[str, Any]:
    """Each tool's first answer from a server started on a fresh clone, then repeated
    `get_recent_actions` (while the index build may still run: it must not matter)."""
    from mcp import Client, StdioServerParameters

    keep = ("PATH", "HOME", "LORE_MODEL_CACHE", "PYTHONPATH")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env.update(LORE_ROOT=str(root), LORE_PROJECT=project)
    manifest = root / ".lore" / "cache" / "index" / "manifest.json"
    query = dict(calls)["search_learnings"]["query"]
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "lorebook", "mcp"], env=env, cwd=str(root)
    )
    started = time.perf_counter()
    first: dict[str, dict[str, Any]] = {}
    async with Client(params) as client:
        ready = time.perf_counter() - started
        for name, args in calls:
            begin = time.perf_counter()
            result = await client.call_tool(name, args)
            took = time.perf_counter() - begin
            shown = result.structured_content or {}
            first[name] = {
                "s": round(took, 3),
                "index_built": manifest.exists(),
                "catalog_built": catalog_built(root),
                "error": result.content[0].text if result.is_error else None,
                "mode": shown.get("mode"),
                "degraded": shown.get("degraded"),
                "partial": shown.get("partial"),
            }
            print(
                f"  ({name} answered in {took:.3f} s; index built: {manifest.exists()}, "
                f"catalog built: {first[name]['catalog_built']})",
                flush=True,
            )
        recent = []
        for _ in range(repeat):
            begin = time.perf_counter()
            result = await client.call_tool("get_recent_actions", {})
            recent.append(time.perf_counter() - begin)
            if result.is_error or not (result.structured_content or {}).get("found"):
                raise SystemExit(f"get_recent_actions found nothing: {result.content}")
        built_during = manifest.exists()
        waited = time.perf_counter()
        catalog_s = None
        while not manifest.exists() and time.perf_counter() - waited < 3600:
            if catalog_s is None and catalog_built(root):
                catalog_s = time.perf_counter() - started
            await anyio.sleep(1)
        build_s = time.perf_counter() - started
        after = time.perf_counter()
        result = await client.call_tool("search_learnings", {"query": query})
        after_s = time.perf_counter() - after
        mode_after = (result.structured_content or {}).get("mode")
        recent_after = []
        for _ in range(repeat):
            begin = time.perf_counter()
            await client.call_tool("get_recent_actions", {})
            recent_after.append(time.perf_counter() - begin)
    return {
        "ready_s": ready,
        "first": first,
        "recent_s": recent,
        "recent_after_s": recent_after,
        "index_built_during_recent_calls": built_during,
        "index_built_after_s": build_s,
        "catalog_built_after_s": catalog_s,
        "search_after_build_s": after_s,
        "search_mode_after_build": mode_after,
    }


def resume_in_process(root: Path, project: str, calls: int) -> list[float]:
    """`Lorebook.resume()` on one long-lived book (as the server's is), after a first call."""
    book = Lorebook.open(root, env={})
    book.resume(project=project)
    out = []
    for _ in range(calls):
        begin = time.perf_counter()
        book.resume(project=project)
        out.append(time.perf_counter() - begin)
    return out


def fresh_clone(args: argparse.Namespace, tmp: str) -> int:
    from generate_store import generate, parse_end

    root = args.store or Path(tmp) / "fresh"
    if not (root / "actionlog").is_dir():
        generate(root, args.actions, args.days, args.seed, parse_end(None), 1)
        build(root, args.learnings, args.seed)
    pattern = root / "learnings" / "bench-port-pattern.md"
    pattern.write_text(PATTERN, encoding="utf-8")
    shutil.rmtree(root / ".lore" / "cache", ignore_errors=True)  # a clone has no cache
    for draft in (root / "learnings" / "drafts").glob("*fresh-clone-answers*"):
        draft.unlink()  # an earlier run's
    project = Lorebook.open(root, env={}).resume()["session"]["project"]
    query = queries(1, args.seed)[0]
    learning = sorted(p.stem for p in (root / "learnings").glob("*.md"))[0]
    calls = first_calls(query, learning, pattern.stem)
    served = anyio.run(fresh_over_protocol, root, project, calls, args.calls)
    local = resume_in_process(root, project, args.calls)
    during_ms = statistics.median(served["recent_s"]) * 1000
    recent_ms = statistics.median(served["recent_after_s"]) * 1000  # the index built: quiet
    resume_ms = statistics.median(local) * 1000
    ratio = recent_ms / resume_ms if resume_ms else float("inf")
    results = {
        "actions": args.actions,
        "learnings": args.learnings,
        "server_ready_s": round(served["ready_s"], 3),
        "first_answer": served["first"],
        "get_recent_actions_p50_ms": round(recent_ms, 1),
        "get_recent_actions_during_build_p50_ms": round(during_ms, 1),
        "resume_in_process_p50_ms": round(resume_ms, 1),
        "ratio": round(ratio, 2),
        "target_ratio": TARGET_RESUME_RATIO,
        "verdict": verdict(ratio, TARGET_RESUME_RATIO),
        "index_built_during_recent_calls": served["index_built_during_recent_calls"],
        "index_built_after_s": round(served["index_built_after_s"], 1),
        "catalog_built_after_s": served["catalog_built_after_s"]
        and round(served["catalog_built_after_s"], 1),
        "search_after_build_s": round(served["search_after_build_s"], 3),
        "search_mode_after_build": served["search_mode_after_build"],
    }
    print(f"machine: {machine()}")
    print(
        f"fresh clone: {args.actions:,} actions, {args.learnings:,} learnings, no cache; "
        f"server ready {fmt_ms(served['ready_s'])}"
    )
    for name, first in served["first"].items():
        state = "index built" if first["index_built"] else "index still building"
        state += ", catalog " + ("built" if first["catalog_built"] else "still building")
        extra = f" mode={first['mode']}" if first["mode"] else ""
        extra += " partial" if first["partial"] else ""
        extra += " (error: " + first["error"][:60] + "…)" if first["error"] else ""
        print(f"  first {name}: {fmt_ms(first['s'])} [{state}]{extra}")
    print(
        f"get_recent_actions while the index builds: p50 {during_ms:.1f} ms "
        f"(index built by then: {served['index_built_during_recent_calls']})"
    )
    print(
        f"get_recent_actions p50 {recent_ms:.1f} ms vs Lorebook.resume() in-process p50 "
        f"{resume_ms:.1f} ms: ratio {ratio:.2f} -> {results['verdict']} "
        f"(target <= {TARGET_RESUME_RATIO:g})"
    )
    print(
        f"catalog built {results['catalog_built_after_s']} s after start (None: before "
        "the first calls ended)"
    )
    print(
        f"index built {served['index_built_after_s']:.0f} s after start; the next search "
        f"{fmt_ms(served['search_after_build_s'])} ({served['search_mode_after_build']})"
    )
    write_results(args.json_out, "mcp_fresh_clone", results)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learnings", type=int, default=2000)
    parser.add_argument("--calls", type=int, default=60, help="warm searches to time")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--store",
        type=Path,
        help="build the store here and keep it; "
        "reused (index and all) when it already holds learnings",
    )
    parser.add_argument("--json-out")
    parser.add_argument(
        "--fresh-clone",
        action="store_true",
        help="time each tool's first answer on a fresh clone, and "
        "get_recent_actions against Lorebook.resume()",
    )
    parser.add_argument("--actions", type=int, default=200_000, help="with --fresh-clone")
    parser.add_argument("--days", type=int, default=120, help="with --fresh-clone")
    args = parser.parse_args(argv)
    if args.fresh_clone:
        with tempfile.TemporaryDirectory(prefix="lore-bench-mcp-") as tmp:
            return fresh_clone(args, tmp)
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
    print(
        f"server ready (initialize done) {fmt_ms(served['ready_s'])}; "
        f"first search {fmt_ms(served['first_s'])}"
    )
    print(
        f"warm search_learnings over MCP: p50 {results['mcp_search_p50_ms']} ms, "
        f"p95 {results['mcp_search_p95_ms']} ms ({len(warm)} calls) "
        f"-> {results['verdict']} (target p50 <= {TARGET_P50 * 1000:.0f} ms)"
    )
    print(
        f"same search in-process: p50 {results['inprocess_search_p50_ms']} ms; "
        f"a logged search_actions(limit=1): p50 {results['logged_call_floor_p50_ms']} ms"
    )
    write_results(args.json_out, "mcp", results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
