"""Fusion variants on the duplicate-issue benchmarks, from one real index per data set.

Indexes a benchmark once with the real engine (as bench_quality.py does), asks every query in
hybrid mode with threshold 0 so each learning comes back with its keyword and dense similarity,
then re-ranks those pairs offline with each fusion variant. The default variant and the single
modes reproduce bench_quality.py's figures; the others answer "would this fusion rank better?"
without re-indexing. Variants that need the whole result list (per-query normalisation, rank
fusion) are here too, although `index/rank.py` fuses one learning at a time.

    .venv/bin/python benchmarks/bench_fusion.py                       # hard set
    .venv/bin/python benchmarks/bench_fusion.py --data benchmarks/data/dev-duplicates.jsonl
    .venv/bin/python benchmarks/bench_fusion.py --markdown
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_quality import DATA, build_store, load  # noqa: E402

from lorebook.index.evaluate import Metrics  # noqa: E402

Pairs = dict[str, tuple[float, float]]  # learning id -> (keyword similarity, dense similarity)
Fusion = Callable[[Pairs, str], dict[str, float]]


def weighted(dense: float) -> Fusion:
    return lambda pairs, _q: {i: dense * s + (1 - dense) * k for i, (k, s) in pairs.items()}


def by_length(short: float, long: float, words: int = 5) -> Fusion:
    def fuse(pairs: Pairs, query: str) -> dict[str, float]:
        w = short if len(query.split()) <= words else long
        return {i: w * s + (1 - w) * k for i, (k, s) in pairs.items()}

    return fuse


def relative(dense: float, minmax: bool = False) -> Fusion:
    """Each similarity over the query's best (or min-max scaled), then the weighted sum."""

    def fuse(pairs: Pairs, _q: str) -> dict[str, float]:
        ks = [k for k, _ in pairs.values()]
        ss = [s for _, s in pairs.values()]
        lk, ls = (min(ks), min(ss)) if minmax else (0.0, 0.0)
        hk, hs = max(ks) - lk or 1.0, max(ss) - ls or 1.0
        return {
            i: dense * (s - ls) / hs + (1 - dense) * (k - lk) / hk for i, (k, s) in pairs.items()
        }

    return fuse


def zscores(dense: float) -> Fusion:
    def fuse(pairs: Pairs, _q: str) -> dict[str, float]:
        ks = [k for k, _ in pairs.values()]
        ss = [s for _, s in pairs.values()]
        mk, sk = statistics.mean(ks), statistics.pstdev(ks) or 1.0
        ms, sd = statistics.mean(ss), statistics.pstdev(ss) or 1.0
        return {
            i: dense * (s - ms) / sd + (1 - dense) * (k - mk) / sk for i, (k, s) in pairs.items()
        }

    return fuse


def rrf(k: int = 60) -> Fusion:
    def fuse(pairs: Pairs, _q: str) -> dict[str, float]:
        def ranks(col: int) -> dict[str, int]:
            order = sorted(pairs, key=lambda i: (-pairs[i][col], i))
            return {i: r for r, i in enumerate(order, 1)}

        kr, sr = ranks(0), ranks(1)
        return {i: 0.5 / (k + sr[i]) + 0.5 / (k + kr[i]) for i in pairs}

    return fuse


VARIANTS: dict[str, Fusion] = {
    "weighted sum, dense 0.7 (default)": weighted(0.7),
    "weighted sum, dense 0.6": weighted(0.6),
    "weighted sum, dense 0.5": weighted(0.5),
    "weighted sum, dense 0.8": weighted(0.8),
    "query-length-aware (dense 0.8 up to 5 words, else 0.6)": by_length(0.8, 0.6),
    "each similarity divided by the query's best, dense 0.7": relative(0.7),
    "min-max normalised per query, dense 0.7": relative(0.7, minmax=True),
    "z-scores per query, dense 0.6": zscores(0.6),
    "reciprocal rank fusion, k = 60": rrf(60),
    "keyword alone": lambda pairs, _q: {i: k for i, (k, _) in pairs.items()},
    "semantic alone": lambda pairs, _q: {i: s for i, (_, s) in pairs.items()},
}


def similarities(path: Path) -> list[tuple[str, str, Pairs]]:
    """(query, expected id, every learning's similarities) per query, from one real index."""
    docs, queries = load(path)
    with tempfile.TemporaryDirectory(prefix="lore-fusion-") as tmp:
        book = build_store(Path(tmp), docs)
        index = book.index
        index.update(rebuild=True)
        out = []
        for q in queries:
            hits = index.search(
                q["title"], mode="hybrid", limit=len(docs), refresh=False, threshold=0.0
            )
            pairs = {h.id: (h.keyword_score, h.semantic_score or 0.0) for h in hits}
            out.append((q["title"], q["expected"], pairs))
        index.close()
    return out


def rank_of(expected: str, scores: dict[str, float]) -> int | None:
    order = sorted(scores, key=lambda i: (-scores[i], i))
    return order.index(expected) + 1 if expected in scores else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help="benchmark file (default: hard)")
    parser.add_argument("--markdown", action="store_true", help="print a markdown table")
    args = parser.parse_args(argv)
    rows = similarities(args.data)
    print(f"{len(rows)} queries ({args.data.name}); recall@5 / MRR@10 (recall@1)")
    if args.markdown:
        print("| fusion | recall@1 | recall@5 | MRR@10 |\n|---|---:|---:|---:|")
    for name, fuse in VARIANTS.items():
        m = Metrics.of([rank_of(expected, fuse(pairs, q)) for q, expected, pairs in rows])
        if args.markdown:
            print(f"| {name} | {m.recall_at_1:.2f} | {m.recall_at_5:.2f} | {m.mrr_at_10:.2f} |")
        else:
            print(f"{name:<56} {m.recall_at_5:.2f} / {m.mrr_at_10:.2f} ({m.recall_at_1:.2f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
