"""Search performance on a generated corpus of learnings (default 10,000).

    .venv/bin/python benchmarks/bench_search.py [--learnings 10000] [--cycles 50] [--json-out F]
    .venv/bin/python benchmarks/bench_search.py --store DIR   # the warm queries alone

Figures, all in one process so ratios compare like with like on a noisy machine:
* rebuild throughput (passages/s) next to raw `model.encode` on the same passages (target >= 0.8x);
* re-index after one file changed (target <= 1 s, model loaded);
* save -> searchable through the watcher with the default 2 s debounce (target <= 3 s);
* warm hybrid query p50/p95 including the query embedding (target p50 <= 50 ms);
* peak resident memory;
* index size on disk after `--cycles` rebuilds over the size after one (target <= 1.5x), on a
  `--cycle-learnings` subset (rebuilding 10,000 learnings 50 times would take hours here).
With `--store DIR` (a store this benchmark generated and indexed earlier: `WORKDIR/store`), only
the warm queries, on that store (its caches are written as any search writes them).
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import machine  # noqa: E402

from lorebook import Lorebook  # noqa: E402
from lorebook.index.chunks import passages  # noqa: E402
from lorebook.index.documents import Document  # noqa: E402
from lorebook.index.indexer import disk_size  # noqa: E402

AREAS = ["database", "deployment", "security", "testing", "performance", "build", "api", "ui"]
THINGS = [
    "migration",
    "connection pool",
    "container",
    "token",
    "cache",
    "webhook",
    "index",
    "queue consumer",
    "feature flag",
    "load balancer",
    "cron job",
    "schema",
    "session",
    "rate limiter",
    "bundle",
    "lockfile",
    "replica",
    "health check",
    "retry loop",
    "upload",
]
FAILS = [
    "times out",
    "leaks memory",
    "deadlocks",
    "returns stale data",
    "drops requests",
    "fails silently",
    "blocks inserts",
    "crashes on start",
    "double-writes",
    "hangs",
]
WHEN = [
    "under load",
    "after a deploy",
    "on cold start",
    "with the anon key",
    "in CI only",
    "when the disk is full",
    "across time zones",
    "behind the proxy",
    "on retry",
    "during a rebalance",
    "with large payloads",
    "after a schema change",
]
WORDS = [
    "the",
    "a",
    "service",
    "request",
    "handler",
    "config",
    "value",
    "limit",
    "table",
    "row",
    "user",
    "job",
    "worker",
    "batch",
    "log",
    "metric",
    "alert",
    "timeout",
    "error",
    "state",
    "version",
    "release",
    "branch",
    "commit",
    "env",
    "secret",
    "key",
    "port",
    "host",
    "client",
    "server",
    "call",
    "path",
    "file",
    "lock",
    "write",
    "read",
    "update",
    "delete",
    "insert",
    "select",
]


def learning(i: int, rng: random.Random) -> tuple[str, str]:
    title = f"{rng.choice(THINGS).capitalize()} {rng.choice(FAILS)} {rng.choice(WHEN)} #{i}"
    sentences = [
        " ".join(rng.choice(WORDS) for _ in range(12)).capitalize() + "."
        for _ in range(rng.randint(4, 9))
    ]
    body = (
        f"## Problem\n{' '.join(sentences[:3])}\n\n## Solution\n{' '.join(sentences[3:])}\n\n"
        f"## Key Takeaway\n{sentences[-1]}\n"
    )
    front = (
        f"---\nid: gen-{i:05d}\ntitle: {json.dumps(title)}\nkind: lesson\n"
        f"category: {rng.choice(AREAS)}\nseverity: {rng.choice(['high', 'medium', 'low'])}\n"
        f"status: published\ncreated: 2026-{rng.randint(1, 11):02d}-{rng.randint(1, 28):02d}\n"
        "---\n"
    )
    return f"gen-{i:05d}", front + body


def build(root: Path, count: int, seed: int) -> Lorebook:
    root.mkdir(parents=True, exist_ok=True)
    book = Lorebook.init(root, env={})
    rng = random.Random(seed)
    for i in range(count):
        name, text = learning(i, rng)
        (book.layout.learnings / f"{name}.md").write_text(text, encoding="utf-8")
    return book


def all_passages(book: Lorebook) -> list[str]:
    from lorebook.index.documents import iter_documents

    out: list[str] = []
    for _, _, doc in iter_documents(book.layout, lambda p: None):
        assert isinstance(doc, Document)
        out.extend(passages(doc))
    return out


def watch_latency(book: Lorebook, tries: int = 3) -> list[float]:
    from lorebook.index.watch import Watcher

    index = book.index
    stop = threading.Event()
    ready = threading.Event()
    watcher = Watcher(
        index,
        [book.layout.learnings, book.layout.drafts],
        echo=lambda line: None,
        warn=lambda line: None,
    )
    thread = threading.Thread(target=watcher.run, args=(stop, ready.set), daemon=True)
    thread.start()
    ready.wait(600)
    out = []
    for n in range(tries):
        marker = f"zebracorn{n}"
        path = book.layout.learnings / f"watched-{n}.md"
        started = time.perf_counter()
        path.write_text(
            f"---\nid: watched-{n}\ntitle: The {marker} outage\nstatus: published\n"
            "---\n## Key Takeaway\nWatch it.\n",
            encoding="utf-8",
        )
        while True:
            hits = index.search(f"{marker} outage", limit=1, refresh=False, mode="keyword")
            if hits and hits[0].id == f"watched-{n}":
                break
            if time.perf_counter() - started > 60:
                raise SystemExit("the watcher did not index the saved file within 60 s")
            time.sleep(0.02)
        out.append(time.perf_counter() - started)
    stop.set()
    thread.join(30)
    return out


def size_growth(workdir: Path, count: int, cycles: int, seed: int) -> dict[str, Any]:
    book = build(workdir / "cycles", count, seed)
    folder = book.layout.cache / "index"
    book.index.update(rebuild=True)
    first = disk_size(folder)
    for _ in range(cycles - 1):
        book.index.update(rebuild=True)
    last = disk_size(folder)
    return {
        "learnings": count,
        "cycles": cycles,
        "bytes_after_one": first,
        "bytes_after_all": last,
        "ratio": round(last / first, 3),
    }


def query_latency(book: Lorebook, count: int, seed: int) -> dict[str, float]:
    """Warm hybrid queries in this process, after five untimed ones: without and with the
    incremental refresh (a stat of every file)."""
    rng = random.Random(seed + 1)
    queries = [
        f"{rng.choice(THINGS)} {rng.choice(FAILS)} {rng.choice(WHEN)}" for _ in range(count + 5)
    ]
    for q in queries[:5]:
        book.index.search(q, refresh=False)
    lat = []
    for q in queries[5:]:
        t0 = time.perf_counter()
        book.index.search(q, refresh=False)
        lat.append(time.perf_counter() - t0)
    lat.sort()
    refresh = []
    for q in queries[5:15]:
        t0 = time.perf_counter()
        book.index.search(q)
        refresh.append(time.perf_counter() - t0)
    return {
        "query_ms_p50": round(1000 * lat[len(lat) // 2], 1),
        "query_ms_p95": round(1000 * lat[int(len(lat) * 0.95)], 1),
        "query_with_refresh_ms_p50": round(1000 * sorted(refresh)[len(refresh) // 2], 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learnings", type=int, default=10_000)
    parser.add_argument("--cycles", type=int, default=50)
    parser.add_argument("--cycle-learnings", type=int, default=200)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--json-out", type=Path, default=None)
    parser.add_argument("--store", type=Path, default=None, metavar="DIR")
    args = parser.parse_args(argv)
    if args.store:
        book = Lorebook.open(args.store, env={})
        count = len(list(book.layout.learnings.glob("*.md")))
        found = {
            "machine": machine(),
            "learnings": count,
            "store": str(args.store),
            **query_latency(book, args.queries, args.seed),
        }
        book.index.close()
        print(json.dumps(found, indent=2))
        return 0
    work = args.workdir or Path(tempfile.mkdtemp(prefix="lore-bench-search-"))
    result: dict[str, Any] = {"machine": machine(), "learnings": args.learnings}

    book = build(work / "store", args.learnings, args.seed)
    t0 = time.perf_counter()
    embedder = book.index.embedder()
    result["model_load_s"] = round(time.perf_counter() - t0, 2)
    assert embedder is not None, "the packaged model must load for this benchmark"
    texts = all_passages(book)
    embedder.encode(texts[:64])  # warm-up
    t0 = time.perf_counter()
    embedder.encode(texts)
    raw_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    report = book.index.update(rebuild=True)
    rebuild_s = time.perf_counter() - t0
    assert len(report.added) == args.learnings
    result["passages"] = len(texts)
    result["raw_encode_per_s"] = round(len(texts) / raw_s, 1)
    result["rebuild_per_s"] = round(len(texts) / rebuild_s, 1)
    result["rebuild_vs_raw"] = round(raw_s / rebuild_s, 3)
    result["rebuild_s"] = round(rebuild_s, 1)

    changed = book.layout.learnings / "gen-00042.md"
    timings = []
    for n in range(5):
        changed.write_text(
            changed.read_text().replace("## Key Takeaway\n", f"## Key Takeaway\nEdit {n}. ")
        )
        t0 = time.perf_counter()
        again = book.index.update()
        timings.append(time.perf_counter() - t0)
        assert again.updated == ["learnings/gen-00042.md"], again.to_dict()
    result["reindex_one_s_median"] = round(statistics.median(timings), 3)

    result.update(query_latency(book, args.queries, args.seed))
    result["watch_save_to_searchable_s"] = [round(x, 2) for x in watch_latency(book)]
    result["index_bytes"] = disk_size(book.layout.cache / "index")
    book.index.close()
    result["size_growth"] = size_growth(work, args.cycle_learnings, args.cycles, args.seed)
    result["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)

    print(json.dumps(result, indent=2))
    if args.json_out:
        args.json_out.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
