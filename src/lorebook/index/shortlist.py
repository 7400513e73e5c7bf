"""The shortlist: a corpus's best documents for one query, as `SearchResult`s, from the keyword
and dense similarities a search found. A pure function of what it is handed (the ranking
settings, the log's figures, the stale learnings), so ranking reads nothing of an index's
caches and locks; the formula itself is `rank`'s.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING, Any

from .rank import fuse, keyword_floor, recency, recommendation, score_parts
from .result import SearchResult

if TYPE_CHECKING:
    from datetime import date

    from ..settings import SearchSettings
    from .corpus import Corpus
    from .rank import Filters
    from .result import StatsProvider


def shortlist(
    corpus: Corpus,
    kw_sim: Sequence[float],
    dense: dict[str, float] | None,
    mode: str,
    *,
    limit: int,
    floor: float,
    filters: Filters,
    today: date,
    settings: SearchSettings,
    stats: StatsProvider,
    stats_snapshot: Callable[[], StatsProvider] | None = None,
    stale_snapshot: Callable[[str | None], Collection[str]] | None = None,
    full: Callable[[int], dict[str, Any]] | None = None,
) -> list[SearchResult]:
    """The best `limit` of the corpus's documents at or above the similarity `floor` (what
    ranking reads of each, looked at only above the floor; `full(i)`, when given, reads the
    whole document `i` for the results). `stats` gives the log's figures (applications,
    success rate, occurrences) of a learning; `stats_snapshot` and `stale_snapshot`, when
    given, are asked once, and only when a document is scored, for fresh figures and for the
    ids of stale learnings (down-ranked, flagged); a document's own `stale` flag counts too."""
    keys, docs, hubs, mean_hub = corpus.keys, corpus.docs, corpus.hubs, corpus.mean_hub
    if floor > 0:  # only what can reach the floor: a warm search over 10,000 learnings
        least = keyword_floor(floor, mode, settings.dense_weight, dense is not None)
        reached: Sequence[int] = corpus.reached(kw_sim, least, dense)
    else:
        reached = range(len(keys))
    if dense is not None:  # a keyword search does without it
        from .hubness import corrected
    scored = []
    for i in reached:
        key = keys[i]
        kw = float(kw_sim[i])
        sem = None
        if dense is not None:  # only a learning the dense search found is corrected
            found = dense.get(key)
            sem = 0.0 if found is None else corrected(max(found, 0.0), hubs[i], mean_hub)
        sim = fuse(kw, sem, mode, settings.dense_weight)
        if sim < floor:
            continue
        doc = docs[i]
        if not filters.admits(doc, corpus.superseded):
            continue
        scored.append((i, key, doc, kw, sem, sim))
    top = max(max((s[5] for s in scored), default=1.0), 1e-9)
    if scored and stats_snapshot:
        stats = stats_snapshot()
    stale_ids: Collection[str] = ()
    if scored and stale_snapshot:
        stale_ids = stale_snapshot(corpus.files_key)
    out = []
    for i, key, doc, kw, sem, sim in scored:
        stale = doc["id"] in stale_ids or bool(doc.get("stale"))
        applications, rate, occurrences = stats(doc["id"])
        parts = score_parts(
            kw,
            sem,
            mode,
            settings.dense_weight,
            top,
            success_rate=rate,
            recency_value=recency(doc.get("created"), today, settings.recency_half_life_days),
            occurrences=occurrences,
            stale=stale,
            settings=settings,
        )
        result = SearchResult(
            id=doc["id"],
            title=doc["title"],
            path=key,
            score=parts.score,
            parts=parts,
            similarity=sim,
            keyword_score=kw,
            semantic_score=sem,
            doc=doc,
            applications=applications,
            success_rate=rate,
            recommendation=recommendation(applications, rate, stale),
        )
        out.append((result, i))
    out.sort(key=lambda r: (-r[0].score, -r[0].similarity, r[0].id))
    shown = []
    for result, i in out[:limit]:
        doc = result.doc if full is None else full(i)
        if result.id in stale_ids:
            doc = {**doc, "stale": True}
        result.doc = doc
        shown.append(result)
    return shown
