"""Search quality on real duplicate GitHub issues (benchmarks/data/dev-duplicates*.jsonl).

Every issue becomes one learning file in a temporary store (title + short description excerpt,
the Learning file format of DESIGN.md); the store is indexed with the real engine, each duplicate's
title is searched, and the rank of the original it duplicates gives recall@1, recall@5 and MRR@10
for hybrid, keyword and semantic search next to the plain word-overlap baseline. A second table
covers only the queries whose original has a description excerpt (a title-only original is an
easy target for word overlap, so that subset is the harder, more representative one).

    .venv/bin/python benchmarks/bench_quality.py              # hard set (default)
    .venv/bin/python benchmarks/bench_quality.py --both       # hard set and the original set
    .venv/bin/python benchmarks/bench_quality.py --data benchmarks/data/dev-duplicates.jsonl
    .venv/bin/python benchmarks/bench_quality.py --markdown   # for docs/benchmarks.md
    .venv/bin/python benchmarks/bench_quality.py --json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import machine  # noqa: E402

from lorebook import Lorebook  # noqa: E402
from lorebook.index.evaluate import (  # noqa: E402
    MODES,
    GoldenQuery,
    GoldenSet,
    Metrics,
    WordOverlap,
    run_eval,
)

DATA = HERE / "data" / "dev-duplicates-hard.jsonl"  # same-topic distractors from the same repos
EASY_DATA = HERE / "data" / "dev-duplicates.jsonl"
CREATED = "2026-01-01"  # one date for every learning: recency must not decide the ranking


def load(path: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    docs = [r for r in records if r["type"] == "doc"]
    queries = [r for r in records if r["type"] == "query"]
    return docs, queries


def learning_text(doc: dict[str, Any]) -> str:
    """A Learning file (DESIGN.md) whose text is the issue title and its excerpt."""
    excerpt = doc["excerpt"].strip()
    body = f"## Problem\n{excerpt}\n" if excerpt else ""
    return (
        "---\n"
        f"id: {doc['id']}\n"
        f"title: {json.dumps(doc['title'], ensure_ascii=False)}\n"
        "kind: lesson\n"
        "severity: medium\n"
        "status: published\n"
        f"created: {CREATED}\n"
        f"source: {{epic: null, issue: {json.dumps(doc['url'])}, session: null}}\n"
        "---\n"
        f"{body}"
    )


def build_store(root: Path, docs: list[dict[str, Any]]) -> Lorebook:
    book = Lorebook.init(root, env={})
    folder = book.layout.learnings
    folder.mkdir(parents=True, exist_ok=True)
    for doc in docs:
        (folder / f"{doc['id']}.md").write_text(learning_text(doc), encoding="utf-8")
    return book


def evaluate(
    path: Path, docs: list[dict[str, Any]], queries: list[dict[str, Any]], threshold: float | None
) -> dict[str, Any]:
    golden = GoldenSet(
        path,
        [GoldenQuery(q["title"], (q["expected"],), q["number"]) for q in queries],
    )
    texts = {d["id"]: f"{d['title']}\n{d['excerpt']}" for d in docs}
    with tempfile.TemporaryDirectory(prefix="lore-quality-") as tmp:
        book = build_store(Path(tmp), docs)
        index = book.index
        started = time.perf_counter()
        built = index.update(rebuild=True)
        index_s = time.perf_counter() - started
        timings: dict[str, list[float]] = {mode: [] for mode in MODES}

        def search_fn(query: str, mode: str, limit: int) -> list[str]:
            t0 = time.perf_counter()
            hits = index.search(query, mode=mode, limit=limit, refresh=False, threshold=threshold)
            timings[mode].append(time.perf_counter() - t0)
            return [hit.id for hit in hits]

        report = run_eval(golden, search_fn, baseline=WordOverlap(texts))
        warnings = list(index.warnings)
        index.close()
    described = {d["id"] for d in docs if d["excerpt"].strip()}
    keep = [i for i, q in enumerate(queries) if q["expected"] in described]
    return {
        "data": path.name,
        "documents": len(docs),
        "queries": len(queries),
        "indexed": built.added,
        "index_seconds": round(index_s, 2),
        "query_ms_median": {
            mode: round(1000 * sorted(t)[len(t) // 2], 1) for mode, t in timings.items() if t
        },
        "metrics": {mode: m.to_dict() for mode, m in report.metrics().items()},
        "metrics_described_originals": {
            mode: Metrics.of([ranks[i] for i in keep]).to_dict()
            for mode, ranks in report.ranks.items()
        },
        "misses_hybrid_top5": [q.query for q in report.misses("hybrid")],
        "per_query": report.to_dict()["per_query"],
        "warnings": warnings,
    }


def table(metrics: dict[str, dict[str, Any]], markdown: bool) -> str:
    rows = [
        (mode, Metrics(m["recall@1"], m["recall@5"], m["mrr@10"], m["queries"]))
        for mode, m in metrics.items()
    ]
    if markdown:
        lines = ["| mode | recall@1 | recall@5 | MRR@10 |", "|---|---:|---:|---:|"]
        lines += [
            f"| {mode} | {m.recall_at_1:.2f} | {m.recall_at_5:.2f} | {m.mrr_at_10:.2f} |"
            for mode, m in rows
        ]
    else:
        lines = [f"{'mode':<10} {'recall@1':>9} {'recall@5':>9} {'MRR@10':>8}"]
        lines += [
            f"{mode:<10} {m.recall_at_1:>9.2f} {m.recall_at_5:>9.2f} {m.mrr_at_10:>8.2f}"
            for mode, m in rows
        ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data", type=Path, default=DATA, help="benchmark file (default: the hard set)"
    )
    parser.add_argument(
        "--both",
        action="store_true",
        help="run the hard set and the original set, one after the other",
    )
    parser.add_argument(
        "--threshold",
        type=float,
        default=None,
        help="minimum-similarity threshold (default: the configured default)",
    )
    parser.add_argument("--markdown", action="store_true", help="print a markdown table")
    parser.add_argument("--json", action="store_true", help="print the full result as JSON")
    args = parser.parse_args(argv)
    paths = [DATA, EASY_DATA] if args.both else [args.data]
    results = []
    for path in paths:
        docs, queries = load(path)
        result = evaluate(path, docs, queries, args.threshold)
        result["machine"] = machine()
        results.append(result)
    if args.json:
        print(json.dumps(results if args.both else results[0], indent=2))
        return 0
    for result in results:
        subset = result["metrics_described_originals"]
        some = next(iter(subset.values()))["queries"] if subset else 0
        print(
            f"{result['queries']} duplicate-issue queries against {result['documents']} issues "
            f"({result['data']}); indexed in {result['index_seconds']} s; "
            f"median query ms {result['query_ms_median']}"
        )
        print(table(result["metrics"], args.markdown))
        print(f"\nonly the {some} queries whose original has a description excerpt:")
        print(table(subset, args.markdown))
        print()
        for warning in result["warnings"]:
            print(f"warning: {warning}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
