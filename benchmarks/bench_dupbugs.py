"""Search quality on real duplicate bug reports (`../shared/data/dup-bugs`, CC BY 4.0).

Each of the 2,000 bug reports (Apache Hadoop Jira, Mozilla SeaMonkey Bugzilla; see the data's
README) becomes one learning file in a temporary store -- title, the project as tag and
category, the description under `## Problem` -- indexed by the real engine (the packaged MiniLM
through onnxruntime, the real Chroma, the real BM25). Every duplicate's title is searched; the
rank of the original it duplicates gives recall@1/5/10, MRR@10 and nDCG@10 per mode.

Nothing here was written by us, so it is the set ranking is tuned and judged on. To keep the
tuning honest the 103 queries are split in two halves by a hash of the duplicate's id (57 `dev`,
46 `test`). `--tune` re-ranks every learning's stored keyword and dense parts with each fusion
variant and applies the rule: among the variants with which hybrid is at least as good as its
best single mode on every metric, on the dev half (and with `--team-sets` on the two GitHub
duplicate-issue sets), the best dev-half MRR@10. The test half only reports.

    .venv/bin/python benchmarks/bench_dupbugs.py                  # engine figures, both halves
    .venv/bin/python benchmarks/bench_dupbugs.py --save s.json    # keep each query's similarities
    .venv/bin/python benchmarks/bench_dupbugs.py --load s.json --tune   # fusion grid, no index
    .venv/bin/python benchmarks/bench_dupbugs.py --load s.json --tune --team-sets  # the rule
    .venv/bin/python benchmarks/bench_dupbugs.py --load s.json --boosts  # dates: seed vs now
    .venv/bin/python benchmarks/bench_dupbugs.py --queries 30 --docs 300 --json   # a subset
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import date, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import machine  # noqa: E402

from lorebook import Lorebook  # noqa: E402
from lorebook.index.evaluate import MODES  # noqa: E402

CREATED = "2026-01-01"  # one date for every learning: recency must not decide the ranking
DEPTH = 10


def data_dir() -> Path | None:
    """`../shared/data/dup-bugs` beside this checkout or beside the main checkout of a worktree."""
    repo = HERE.parent
    common = subprocess.run(
        ["git", "rev-parse", "--path-format=absolute", "--git-common-dir"],
        cwd=repo, capture_output=True, text=True, check=False,
    ).stdout.strip()  # fmt: skip
    for root in (repo, Path(common).parent if common else repo):
        folder = root / ".." / "shared" / "data" / "dup-bugs"
        if (folder / "corpus.jsonl").is_file():
            return folder.resolve()
    return None


def load(folder: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    def jsonl(name: str) -> list[dict[str, Any]]:
        text = (folder / name).read_text(encoding="utf-8")
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    return jsonl("corpus.jsonl"), jsonl("queries.jsonl")


def half(query: dict[str, Any]) -> str:
    """`dev` or `test`: a fixed split by a hash of the duplicate's id (independent of order)."""
    key = f"{query['project']}-{query['duplicate_source_id']}".encode()
    return "dev" if hashlib.sha256(key).digest()[0] % 2 == 0 else "test"


def subset(
    docs: list[dict[str, Any]], queries: list[dict[str, Any]], n_queries: int, n_docs: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The first `n_queries` queries of each half in turn, their originals, and the corpus's
    first other documents up to `n_docs` (the corpus order is already shuffled)."""
    by_half: dict[str, list[dict[str, Any]]] = {"dev": [], "test": []}
    for q in queries:
        by_half[half(q)].append(q)
    dev, test = by_half["dev"], by_half["test"]
    picked = [q for pair in zip(dev, test, strict=False) for q in pair]
    shorter = min(len(dev), len(test))
    picked = (picked + dev[shorter:] + test[shorter:])[:n_queries]
    wanted = {r for q in picked for r in q["relevant"]}
    kept = [d for d in docs if d["id"] in wanted]
    for d in docs:
        if len(kept) >= n_docs:
            break
        if d["id"] not in wanted:
            kept.append(d)
    return kept, picked


def learning_text(doc: dict[str, Any]) -> str:
    """A Learning file (DESIGN.md) holding the report: title, project, description."""
    project = doc["project"].lower()
    body = doc.get("body", "").strip()
    return (
        "---\n"
        f"id: {doc['id']}\n"
        f"title: {json.dumps(doc['title'], ensure_ascii=False)}\n"
        "kind: lesson\n"
        f"category: {project}\n"
        "severity: medium\n"
        f"tags: [{project}]\n"
        "status: published\n"
        f"created: {CREATED}\n"
        "---\n"
        f"## Problem\n{body}\n"
    )


def ranks_from(ids: Sequence[str], relevant: Sequence[str]) -> int | None:
    return next((r for r, i in enumerate(ids, 1) if i in relevant), None)


def metrics(ranks: Sequence[int | None]) -> dict[str, float]:
    n = max(len(ranks), 1)
    top = [r for r in ranks if r is not None and r <= DEPTH]
    return {
        "recall@1": round(sum(r <= 1 for r in top) / n, 3),
        "recall@5": round(sum(r <= 5 for r in top) / n, 3),
        "recall@10": round(len(top) / n, 3),
        "mrr@10": round(sum(1 / r for r in top) / n, 3),
        "ndcg@10": round(sum(1 / math.log2(r + 1) for r in top) / n, 3),
        "queries": len(ranks),
    }


def run_engine(
    docs: list[dict[str, Any]], queries: list[dict[str, Any]], pairs: bool
) -> dict[str, Any]:
    """Index `docs` with the real engine; per query, the original's rank in each mode (the
    `lore search` defaults, threshold included) and, with `pairs`, every learning's keyword
    and dense part from a threshold-0 hybrid search (for re-ranking offline)."""
    with tempfile.TemporaryDirectory(prefix="lore-dupbugs-") as tmp:
        book = Lorebook.init(Path(tmp), env={})
        folder = book.layout.learnings
        folder.mkdir(parents=True, exist_ok=True)
        for doc in docs:
            (folder / f"{doc['id']}.md").write_text(learning_text(doc), encoding="utf-8")
        index = book.index
        started = time.perf_counter()
        built = index.update(rebuild=True)
        index_s = time.perf_counter() - started
        per_query = []
        timings: dict[str, list[float]] = {mode: [] for mode in MODES}
        for q in queries:
            row: dict[str, Any] = {"query": q["query"], "relevant": q["relevant"], "half": half(q)}
            for mode in MODES:
                t0 = time.perf_counter()
                hits = index.search(q["query"], mode=mode, limit=DEPTH, refresh=False)
                timings[mode].append(time.perf_counter() - t0)
                row[mode] = ranks_from([h.id for h in hits], q["relevant"])
            if pairs:
                hits = index.search(
                    q["query"], mode="hybrid", limit=len(docs), refresh=False, threshold=0.0
                )
                row["parts"] = {h.id: [h.keyword_score, h.semantic_score or 0.0] for h in hits}
            per_query.append(row)
        warnings = list(index.warnings)
        index.close()
    return {
        "documents": len(docs),
        "indexed": len(built.added),
        "index_seconds": round(index_s, 1),
        "query_ms_median": {
            mode: round(1000 * sorted(t)[len(t) // 2], 1) for mode, t in timings.items() if t
        },
        "per_query": per_query,
        "warnings": warnings,
    }


def report(per_query: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, float]]]:
    """Metrics per half (`dev`, `test`, `all`) per mode."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for part in ("dev", "test", "all"):
        rows = [r for r in per_query if part == "all" or r["half"] == part]
        out[part] = {mode: metrics([r[mode] for r in rows]) for mode in MODES}
    return out


# -- offline re-ranking of the stored parts (fusion variants) ---------------------------------
Parts = dict[str, list[float]]  # learning id -> [keyword similarity, dense similarity]
Fusion = Callable[[Parts], dict[str, float]]


def linear(dense: float) -> Fusion:
    return lambda parts: {i: dense * s + (1 - dense) * k for i, (k, s) in parts.items()}


def scaled(dense: float) -> Fusion:
    """Each part over its best for this query, then the weighted sum (engine: `fuse_scaled`)."""

    def fuse(parts: Parts) -> dict[str, float]:
        hk = max((k for k, _ in parts.values()), default=0.0) or 1.0
        hs = max((s for _, s in parts.values()), default=0.0) or 1.0
        return {i: dense * s / hs + (1 - dense) * k / hk for i, (k, s) in parts.items()}

    return fuse


def rrf(k: int, dense: float = 0.5) -> Fusion:
    def fuse(parts: Parts) -> dict[str, float]:
        kw = sorted(parts, key=lambda i: (-parts[i][0], i))
        de = sorted(parts, key=lambda i: (-parts[i][1], i))
        kr = {i: r for r, i in enumerate(kw, 1)}
        dr = {i: r for r, i in enumerate(de, 1)}
        return {i: dense / (k + dr[i]) + (1 - dense) / (k + kr[i]) for i in parts}

    return fuse


def variants() -> dict[str, Fusion]:
    grid: dict[str, Fusion] = {
        "keyword alone": lambda p: {i: k for i, (k, _) in p.items()},
        "dense alone": lambda p: {i: s for i, (_, s) in p.items()},
    }
    for w in (0.5, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9):
        grid[f"linear, dense {w}"] = linear(w)
    for w in (0.5, 0.6, 0.7, 0.8, 0.85, 0.9):
        grid[f"scaled to the best, dense {w}"] = scaled(w)
    for k in (10, 30, 60):
        for w in (0.5, 0.6, 0.7):
            grid[f"rrf k={k}, dense {w}"] = rrf(k, w)
    return grid


def rank_of(relevant: Sequence[str], scores: dict[str, float]) -> int | None:
    order = sorted(scores, key=lambda i: (-scores[i], i))
    return ranks_from(order, relevant)


Rows = list[tuple[Sequence[str], Parts]]  # (relevant ids, every learning's parts) per query
METRICS = ("recall@1", "recall@5", "recall@10", "mrr@10", "ndcg@10")


def team_sets() -> dict[str, Rows]:
    """The parts of every learning for each query of the two GitHub duplicate-issue sets
    (benchmarks/data, bench_fusion.py): the rule's other sets. Indexes both (a few minutes)."""
    from bench_fusion import similarities
    from bench_quality import DATA, EASY_DATA

    return {
        path.name: [([expected], {i: list(v) for i, v in pairs.items()})
                    for _, expected, pairs in similarities(path)]
        for path in (DATA, EASY_DATA)
    }  # fmt: skip


def holds(fuse: Fusion, rows: Rows, singles: dict[str, dict[str, float]]) -> bool:
    """Hybrid `fuse` is at least as good as the better single mode on every metric."""
    got = metrics([rank_of(rel, fuse(parts)) for rel, parts in rows])
    return all(got[m] >= max(one[m] for one in singles.values()) for m in METRICS)


def tune(per_query: list[dict[str, Any]], markdown: bool, others: dict[str, Rows]) -> list[str]:
    """Every variant on each half. The rule: among the variants with which hybrid is at least
    as good as its best single mode on every metric -- on the dev half and on `others` -- the
    best dev MRR@10 (then nDCG@10). The test half plays no part in the choice."""
    lines = [
        "| fusion | dev MRR@10 | dev nDCG@10 | rule holds | test R@1 | test R@5 | test MRR@10 "
        "| test nDCG@10 |",
        "|---|---:|---:|---|---:|---:|---:|---:|",
    ]
    grid = variants()
    dev: Rows = [(r["relevant"], r["parts"]) for r in per_query if r["half"] == "dev"]
    test: Rows = [(r["relevant"], r["parts"]) for r in per_query if r["half"] == "test"]
    checked = {"dev": dev, **others}
    singles = {
        name: {mode: metrics([rank_of(rel, grid[mode](p)) for rel, p in rows])
               for mode in ("keyword alone", "dense alone")}
        for name, rows in checked.items()
    }  # fmt: skip
    best: tuple[float, float, str] | None = None
    for name, fuse in grid.items():
        d = metrics([rank_of(rel, fuse(p)) for rel, p in dev])
        t = metrics([rank_of(rel, fuse(p)) for rel, p in test])
        ok = "alone" not in name and all(holds(fuse, checked[s], singles[s]) for s in checked)
        lines.append(
            f"| {name} | {d['mrr@10']:.3f} | {d['ndcg@10']:.3f} | {'yes' if ok else 'no'} | "
            f"{t['recall@1']:.3f} | {t['recall@5']:.3f} | {t['mrr@10']:.3f} | {t['ndcg@10']:.3f} |"
        )
        if ok and (best is None or (d["mrr@10"], d["ndcg@10"]) > best[:2]):
            best = (d["mrr@10"], d["ndcg@10"], name)
    sets = ", ".join(["the dev half", *others])
    chosen = best[2] if best else "none (no variant holds the rule)"
    lines.append(f"\nrule checked on {sets}; chosen: {chosen}")
    return lines if markdown else [line.replace(" | ", "  ").strip("| ") for line in lines]


# -- boosts: the ranking score with creation dates that differ (the data has none) ------------
TODAY = date(2025, 6, 1)


def created_dates(ids: Sequence[str], originals: set[str], older: bool) -> dict[str, date]:
    """Creation dates spread over the data's five years (seed 1729); with `older`, the originals
    among the first two years (an original is filed before its duplicates)."""
    rng = random.Random(1729)
    start = date(2020, 1, 1)
    return {
        i: start + timedelta(days=rng.randrange(730 if older and i in originals else 1857))
        for i in ids
    }


def boosted(per_query: list[dict[str, Any]]) -> list[str]:
    """Each mode ranked by the full score (relevance and boosts, `index/rank.py`) with the dates
    above, against the seed's score (0.4 x relevance + the boosts, added), threshold included."""
    from lorebook.index.rank import fuse, recency, score_parts
    from lorebook.settings import SearchSettings

    settings = SearchSettings()
    w = settings.weights
    ids = sorted({i for r in per_query for i in r["parts"]})
    originals = {i for r in per_query for i in r["relevant"]}
    lines = ["| dates | mode | seed (added) R@5 / MRR@10 | now (scaled) R@5 / MRR@10 |",
             "|---|---|---:|---:|"]  # fmt: skip
    for label, older in (("random", False), ("originals older", True)):
        dates = created_dates(ids, originals, older)
        rec = {i: recency(d.isoformat(), TODAY, settings.recency_half_life_days)
               for i, d in dates.items()}  # fmt: skip
        for mode in MODES:
            seed, now = [], []
            for r in per_query:
                sims = {i: fuse(k, s, mode, settings.dense_weight) for i, (k, s) in
                        r["parts"].items()}  # fmt: skip
                kept = {i: v for i, v in sims.items() if v >= settings.threshold}
                top = max(kept.values(), default=1.0)
                boost = {i: w.success * settings.unknown_success + w.recency * rec[i]
                         + w.specificity for i in kept}  # fmt: skip
                added = {i: w.similarity * v / top + boost[i] for i, v in kept.items()}
                seed.append(rank_of(r["relevant"], added))
                scored = {}
                for i in kept:
                    k, s = r["parts"][i]
                    parts = score_parts(k, s, mode, settings.dense_weight, top,
                                        success_rate=None, recency_value=rec[i], occurrences=1,
                                        stale=False, settings=settings)  # fmt: skip
                    scored[i] = parts.score
                now.append(rank_of(r["relevant"], scored))
            a, b = metrics(seed), metrics(now)
            lines.append(f"| {label} | {mode} | {a['recall@5']:.3f} / {a['mrr@10']:.3f} | "
                         f"{b['recall@5']:.3f} / {b['mrr@10']:.3f} |")  # fmt: skip
    return lines


def table(figures: dict[str, dict[str, dict[str, float]]]) -> list[str]:
    lines = [
        "| half | mode | R@1 | R@5 | R@10 | MRR@10 | nDCG@10 |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for part, modes in figures.items():
        for mode, m in modes.items():
            lines.append(
                f"| {part} ({m['queries']}) | {mode} | {m['recall@1']:.3f} | {m['recall@5']:.3f}"
                f" | {m['recall@10']:.3f} | {m['mrr@10']:.3f} | {m['ndcg@10']:.3f} |"
            )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=None, help="the dup-bugs folder")
    parser.add_argument("--queries", type=int, default=0, help="only this many queries")
    parser.add_argument("--docs", type=int, default=0, help="only this many documents")
    parser.add_argument("--save", type=Path, help="write the per-query results (with parts)")
    parser.add_argument("--load", type=Path, help="read them instead of indexing")
    parser.add_argument("--tune", action="store_true", help="re-rank the parts: fusion grid")
    parser.add_argument(
        "--boosts",
        action="store_true",
        help="re-rank the parts with spread creation dates: the boosts, seed against now",
    )
    parser.add_argument(
        "--team-sets",
        action="store_true",
        help="with --tune: also hold the rule on the two GitHub duplicate-issue sets",
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)
    if args.load:
        result = json.loads(args.load.read_text(encoding="utf-8"))
    else:
        folder = args.data or data_dir()
        if folder is None or not (folder / "corpus.jsonl").is_file():
            print("error: ../shared/data/dup-bugs not found; pass --data DIR", file=sys.stderr)
            return 1
        docs, queries = load(folder)
        if args.queries or args.docs:
            docs, queries = subset(docs, queries, args.queries or len(queries),
                                   args.docs or len(docs))  # fmt: skip
        result = run_engine(docs, queries, pairs=bool(args.save or args.tune or args.boosts))
        result["machine"] = machine()
        if args.save:
            args.save.write_text(json.dumps(result), encoding="utf-8")
    result["metrics"] = report(result["per_query"])
    if args.json:
        shown = {k: v for k, v in result.items() if k != "per_query"}
        shown["per_query"] = [{k: v for k, v in r.items() if k != "parts"}
                              for r in result["per_query"]]  # fmt: skip
        print(json.dumps(shown, indent=1))
        return 0
    print(
        f"{len(result['per_query'])} queries against {result['documents']} reports; "
        f"indexed in {result['index_seconds']} s; median query ms {result['query_ms_median']}"
    )
    print("\n".join(table(result["metrics"])))
    if args.tune:
        print()
        others = team_sets() if args.team_sets else {}
        print("\n".join(tune(result["per_query"], markdown=True, others=others)))
    if args.boosts:
        print()
        print("\n".join(boosted(result["per_query"])))
    for warning in result.get("warnings", []):
        print(f"warning: {warning}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
