"""A warm search (one process, searching again) looks only at what a query can reach and works
staleness out once per commit and index state: proven equal to the full scan, and proven to
read no learning file again while nothing changed."""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

import pytest

from conftest import git
from lorebook.index.corpus import Corpus
from lorebook.index.keyword import KeywordIndex, terms, words
from lorebook.index.rank import MODES, fuse, keyword_floor
from lorebook.index.synonyms import SynonymTable
from search_fixtures import LEARNINGS, anchored_rls_learning, open_book, write_learning

TOPICS = ["database", "deploy", "token", "cache", "queue", "schema", "webhook", "container"]
FAILS = ["times out", "leaks memory", "deadlocks", "returns stale data", "drops requests"]
WORDS = [
    "service",
    "request",
    "handler",
    "config",
    "limit",
    "table",
    "worker",
    "retry",
    "lock",
    "port",
    "insert",
    "policy",
    "anonymous",
    "key",
    "probe",
    "memory",
    "chunk",
    "clock",
]


def test_keyword_floor_never_drops_a_learning_that_fuse_admits() -> None:
    rng = random.Random(11)
    for _ in range(50_000):
        mode = rng.choice(MODES)
        weight = rng.choice([0.0, 0.3, 0.7, 0.99, 1.0, rng.random()])
        floor = rng.choice([0.15, 1e-6, 1.0, rng.random() or 0.5])
        dense = rng.random() < 0.7
        kw = rng.choice(
            [0.0, 1.0, floor, floor / (1 - weight) if weight < 1 else 1.0, rng.random()]
        )
        kw = min(kw, 1.0)
        if fuse(kw, 0.0 if dense else None, mode, weight) >= floor:
            assert kw >= keyword_floor(floor, mode, weight, dense), (mode, weight, floor, kw)


def test_keyword_similarity_is_the_score_over_the_ceiling_capped_at_one() -> None:
    rng = random.Random(5)
    texts = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 30))) for _ in range(300)]
    index = KeywordIndex(
        [_Doc(i) for i in range(len(texts))],  # type: ignore[misc]
        SynonymTable.from_config(()),
        lambda i, _: terms(words(texts[i])),
    )
    for _ in range(40):
        query = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 6)))
        raw, similarity = index.scores(query)
        own, _ = index.query_terms(query)
        ceiling = sum(index.idf(t) for t in dict.fromkeys(own))
        assert similarity == [min(max(s / ceiling, 0.0), 1.0) for s in raw]


class _Doc:
    def __init__(self, i: int) -> None:
        self.id = f"d{i}"


def _corpus_store(root: Path, count: int = 60) -> None:
    rng = random.Random(3)
    for i in range(count):
        topic, fail = rng.choice(TOPICS), rng.choice(FAILS)
        body = " ".join(rng.choice(WORDS) for _ in range(40))
        write_learning(
            root,
            f"gen-{i:03d}",
            title=f"The {topic} {fail} #{i}",
            category=rng.choice(["database", "deployment", "security"]),
            created=f"2026-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}",
            body=f"## Problem\n{body}\n\n## Key Takeaway\n{topic} {fail}.",
        )


def _everything(self: Corpus, kw_sim: Any, least: float, dense: Any) -> list[int]:
    return list(range(len(self.keys)))


@pytest.mark.parametrize("mode", MODES)
def test_ranking_what_a_query_reaches_equals_ranking_every_learning(
    search_store: Path, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _corpus_store(search_store)
    book = open_book(search_store)
    rng = random.Random(9)
    queries = [f"{rng.choice(TOPICS)} {rng.choice(FAILS)} {rng.choice(WORDS)}" for _ in range(12)]
    queries += ["RLS policy blocks insert", "port 8080 in use", "zzz unknown words"]
    cases = [
        (
            q,
            rng.choice([1, 5, 20, 100]),
            rng.choice([None, 0.05, 0.3, 0.6]),
            rng.choice([{}, {"category": "database"}]),
        )
        for q in queries
    ]
    book.index.search("warm up", mode=mode)  # builds the index once
    pruned = [
        [
            r.to_dict()
            for r in book.index.search(q, mode=mode, limit=n, threshold=t, refresh=False, **f)
        ]
        for q, n, t, f in cases
    ]
    monkeypatch.setattr(Corpus, "reached", _everything)
    full = [
        [
            r.to_dict()
            for r in book.index.search(q, mode=mode, limit=n, threshold=t, refresh=False, **f)
        ]
        for q, n, t, f in cases
    ]
    assert pruned == full
    assert any(len(found) > 1 for found in full)  # the comparison saw real rankings


def _count_stale_reads(book: Any) -> list[int]:
    """Counts the full staleness computations (each reads every learning)."""
    calls = [0]
    learnings = book.learnings
    original = learnings.stale

    def counted(**kwargs: Any) -> Any:
        calls[0] += 1
        return original(**kwargs)

    learnings.stale = counted
    return calls


def test_a_warm_search_works_staleness_out_once_per_commit_and_index_state(
    search_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    policies = anchored_rls_learning(search_store)
    book = open_book(search_store)
    computed = _count_stale_reads(book)
    first = book.index.search("RLS policy blocks insert")[0]
    assert (first.id, first.doc.get("stale", False), computed[0]) == ("rls-anon-insert", False, 1)

    scanned: list[str] = []
    real_scandir = os.scandir

    def watched(path: Any = ".") -> Any:
        scanned.append(str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", watched)
    for _ in range(3):
        again = book.index.search("RLS policy blocks insert", refresh=False)[0]
        assert again.to_dict() == first.to_dict()
    assert computed[0] == 1  # kept in memory
    assert not [p for p in scanned if "learnings" in p or "drafts" in p]  # no file walk
    monkeypatch.setattr(os, "scandir", real_scandir)

    other = open_book(search_store)  # another process: the cache on disk answers
    other_computed = _count_stale_reads(other)
    assert other.index.search("RLS policy blocks insert")[0].to_dict() == first.to_dict()
    assert other_computed[0] == 0

    policies.write_text("create policy anon_insert on items with check (true);\n")
    git(search_store, "commit", "-q", "-a", "-m", "change the policy")
    stale = book.index.search("RLS policy blocks insert", refresh=False)[0]
    assert (stale.id, stale.doc.get("stale"), computed[0]) == ("rls-anon-insert", True, 2)
    assert stale.score < first.score

    # an edited learning changes the index, so staleness is worked out again
    write_learning(
        search_store,
        "jwt-clock-skew",
        **{**LEARNINGS["jwt-clock-skew"], "title": "Tokens rejected: clock skew"},
    )
    book.index.search("RLS policy blocks insert")
    assert computed[0] == 3
    book.index.search("RLS policy blocks insert", refresh=False)
    assert computed[0] == 3
