"""Hubness correction for the dense similarity: a learning close to many others loses some of it.

In a store of many same-topic learnings, a few of them ("hubs") sit near the middle of their
topic and come out close to every query about it, burying the one learning that is about the
query's actual problem. Each learning's hubness — the mean similarity of its title to its
`NEIGHBOURS` nearest other learnings — is measured when it is indexed, and a search subtracts
`WEIGHT` times how far it is above the store's average (CSLS, Conneau et al. 2018, on the
document side only). Measured on the duplicate-issue benchmarks (docs/eval.md): recall@5 0.59 ->
0.66 on the hard set, MRR@10 0.56 -> 0.58, no loss on the other sets; pure functions, so the
policy is tested alone.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

from collections.abc import Iterable

NEIGHBOURS = 3  # nearest other learnings a hubness is the mean similarity to
WEIGHT = 0.45  # share of a learning's hubness above the store's mean taken off its similarity
MAX_GAIN = 1.25  # a learning less central than average gains at most a quarter of its similarity
PASSAGES_ASKED = 16  # nearest passages asked per title: enough for NEIGHBOURS distinct others


def nearest_others(hits: Iterable[tuple[str, float]], own_key: str) -> list[float]:
    """The best similarity of each other learning among `hits` ((file key, similarity) of
    passages), best first; the learning's own passages are left out."""
    best: dict[str, float] = {}
    for key, sim in hits:
        if key != own_key and sim > best.get(key, -1.0):
            best[key] = sim
    return sorted(best.values(), reverse=True)


def hubness(neighbour_sims: list[float], k: int = NEIGHBOURS) -> float:
    """Mean similarity to the `k` nearest other learnings (fewer when the store is smaller;
    0.0 for a learning alone)."""
    top = sorted(neighbour_sims, reverse=True)[:k]
    return sum(top) / len(top) if top else 0.0


def corrected(similarity: float, hub: float, mean_hub: float, weight: float = WEIGHT) -> float:
    """The dense similarity less `weight` times the learning's hubness above the store's mean,
    kept in [0, 1]. A learning less central than average gains, by at most `MAX_GAIN` times
    its own similarity: an outlier unrelated to the query must not rise above the threshold."""
    moved = min(similarity - weight * (hub - mean_hub), MAX_GAIN * similarity)
    return min(max(moved, 0.0), 1.0)
