"""Dense-scoring variants on the duplicate-issue benchmarks, re-ranked offline (docs/eval.md).

Embeds every issue's passages once with the packaged model (the title, the title with the
excerpt, the excerpt alone), scores them against each query by exact cosine next to the real
BM25 index, then ranks with each variant: how title and body combine, and the hubness
correction (`index/hubness.py`) with its parameters. The first and last rows reproduce the engine
before and after the correction (the engine asks Chroma for the 200 nearest passages; here every
passage is scored, which changes nothing in the top 10 on these sets).

    .venv/bin/python benchmarks/bench_dense.py                      # hard set
    .venv/bin/python benchmarks/bench_dense.py --data benchmarks/data/dev-duplicates.jsonl
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_quality import DATA, learning_text, load  # noqa: E402

from lorebook.config import Config  # noqa: E402
from lorebook.index.chunks import passages  # noqa: E402
from lorebook.index.documents import parse_learning  # noqa: E402
from lorebook.index.embed import load_embedder  # noqa: E402
from lorebook.index.evaluate import Metrics  # noqa: E402
from lorebook.index.hubness import MAX_GAIN, NEIGHBOURS, WEIGHT  # noqa: E402
from lorebook.index.keyword import KeywordIndex  # noqa: E402
from lorebook.index.synonyms import SynonymTable  # noqa: E402

DENSE_WEIGHT = 0.7
THRESHOLD = 0.15

Sims = dict[str, Any]  # name -> (queries x documents) array


def similarities(path: Path) -> tuple[list[str], list[str], Sims]:
    docs, queries = load(path)
    parsed = [parse_learning(learning_text(d), f"learnings/{d['id']}.md") for d in docs]
    embed = load_embedder().encode
    split = [passages(d) for d in parsed]  # [title] or [title, title + excerpt]
    title = embed([p[0] for p in split])
    full = embed([p[-1] for p in split])
    body = embed([d["excerpt"].strip() or d["title"] for d in docs])
    q = embed([x["title"] for x in queries])
    keyword = KeywordIndex(parsed, SynonymTable.from_config(Config().search.synonyms))
    sims: Sims = {
        "title": np.clip(q @ title.T, 0, None),
        "full": np.clip(q @ full.T, 0, None),
        "body": np.clip(q @ body.T, 0, None),
        "keyword": np.array([keyword.scores(x["title"])[1] for x in queries]),
    }
    between = np.maximum(title @ title.T, title @ full.T)  # title to each other learning
    np.fill_diagonal(between, -1.0)
    sims["neighbours"] = -np.sort(-between, axis=1)
    return [d["id"] for d in docs], [x["expected"] for x in queries], sims


def hub_corrected(k: int, weight: float, cap: float | None) -> Callable[[Sims], Any]:
    def dense(s: Sims) -> Any:
        raw = np.maximum(s["title"], s["full"])
        hub = s["neighbours"][:, :k].mean(axis=1)
        moved = raw - weight * (hub - hub.mean())
        if cap is not None:
            moved = np.minimum(moved, cap * raw)
        return np.clip(moved, 0.0, 1.0)

    return dense


VARIANTS: dict[str, Callable[[Sims], Any]] = {
    "max(title, title+body) - before": lambda s: np.maximum(s["title"], s["full"]),
    "title+body only": lambda s: s["full"],
    "title only": lambda s: s["title"],
    "max(title, body)": lambda s: np.maximum(s["title"], s["body"]),
    "mean(title, title+body)": lambda s: (s["title"] + s["full"]) / 2,
    "0.3 title + 0.7 title+body": lambda s: 0.3 * s["title"] + 0.7 * s["full"],
    "hubness 3 neighbours, 0.35": hub_corrected(3, 0.35, None),
    "hubness 5 neighbours, 0.35": hub_corrected(5, 0.35, None),
    "hubness 3 neighbours, 0.45, no cap": hub_corrected(3, 0.45, None),
    "hubness 3 neighbours, 0.55": hub_corrected(3, 0.55, None),
    "hubness as the engine (index/hubness.py)": hub_corrected(NEIGHBOURS, WEIGHT, MAX_GAIN),
}


def rank(ids: list[str], expected: str, scores: Any) -> int | None:
    e = ids.index(expected)
    if scores[e] < THRESHOLD:
        return None
    ahead = sum(
        1 for i, s in enumerate(scores) if s > scores[e] or (s == scores[e] and ids[i] < expected)
    )
    return ahead + 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help="benchmark file (default: hard)")
    args = parser.parse_args(argv)
    ids, expected, sims = similarities(args.data)
    print(f"{len(expected)} queries ({args.data.name}); recall@1 / recall@5 / MRR@10")
    print(f"{'variant':<44} {'semantic':>18}   {'hybrid':>18}")
    for name, dense_of in VARIANTS.items():
        dense = dense_of(sims)
        hybrid = DENSE_WEIGHT * dense + (1 - DENSE_WEIGHT) * sims["keyword"]
        out = []
        for scores in (dense, hybrid):
            m = Metrics.of([rank(ids, e, scores[i]) for i, e in enumerate(expected)])
            out.append(f"{m.recall_at_1:.2f} / {m.recall_at_5:.2f} / {m.mrr_at_10:.2f}")
        print(f"{name:<44} {out[0]:>18}   {out[1]:>18}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
