"""Ranking policy as pure functions: fusion, LEO weighting, recency, recommendation, filters,
synonym expansion."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lorebook.errors import UsageError
from lorebook.index.rank import (
    Filters,
    ScoreParts,
    fuse,
    leo_score,
    recency,
    recommendation,
    score_parts,
)
from lorebook.index.synonyms import SynonymTable, terms, words
from lorebook.settings import SearchSettings, WeightSettings


def test_fuse_modes() -> None:
    assert fuse(0.2, 0.8, "hybrid", 0.7) == pytest.approx(0.62)
    assert fuse(0.2, 0.8, "keyword", 0.7) == 0.2
    assert fuse(0.2, 0.8, "semantic", 0.7) == 0.8
    assert fuse(0.2, None, "hybrid", 0.7) == 0.2  # no vectors: keywords only


def test_leo_weighting_is_the_seeds_for_the_best_match() -> None:
    # the seed's weights: similarity .4, success .3, recency .2, specificity .1
    settings = SearchSettings()
    seed = 1.0 * 0.4 + 0.85 * 0.2 + 0.916 * 0.3 + (1 / 12) * 0.1
    best = leo_score(
        1.0, success_rate=0.916, recency_value=0.85, occurrences=12, stale=False, settings=settings
    )
    assert best == pytest.approx(seed)
    # a weaker match: every part, the boosts too, in proportion to its relevance
    weaker = leo_score(
        0.30, success_rate=0.916, recency_value=0.85, occurrences=12, stale=False, settings=settings
    )
    assert weaker == pytest.approx(0.30 * seed)
    stale = leo_score(
        0.30, success_rate=0.916, recency_value=0.85, occurrences=12, stale=True, settings=settings
    )
    assert stale == pytest.approx(weaker * 0.8)
    unknown = leo_score(
        1.0, success_rate=None, recency_value=1.0, occurrences=1, stale=False, settings=settings
    )
    assert unknown == pytest.approx(0.4 + 0.15 + 0.2 + 0.1)


def _parts(
    kw: float, dense: float | None, top: float, mode: str = "hybrid", **figures: Any
) -> ScoreParts:
    given: dict[str, Any] = {
        "success_rate": None,
        "recency_value": 0.5,
        "occurrences": 1,
        "stale": False,
    }
    given.update(figures)
    return score_parts(kw, dense, mode, 0.7, top, settings=SearchSettings(), **given)


def test_score_parts_sum_to_the_score_and_split_the_similarity() -> None:
    got = _parts(0.4, 0.8, top=0.68, success_rate=0.9, recency_value=0.7, occurrences=2)
    fused = 0.7 * 0.8 + 0.3 * 0.4
    assert got.relevance == pytest.approx(fused / 0.68)
    assert got.keyword == pytest.approx(0.4 * 0.3 * 0.4 / 0.68)
    assert got.dense == pytest.approx(0.4 * 0.7 * 0.8 / 0.68)
    assert got.boost == pytest.approx(got.relevance * (0.3 * 0.9 + 0.2 * 0.7 + 0.1 * 0.5))
    assert got.keyword + got.dense + got.boost == got.score
    assert (got.success, got.recency, got.specificity, got.stale_factor) == (0.9, 0.7, 0.5, 1.0)
    assert set(got.to_dict()) == {
        "keyword",
        "dense",
        "boost",
        "score",
        "relevance",
        "success",
        "recency",
        "specificity",
        "stale_factor",
    }
    keyword_only = _parts(0.4, None, top=0.4)
    assert (keyword_only.dense, keyword_only.relevance) == (0.0, 1.0)
    assert _parts(0.4, 0.8, top=0.8, mode="keyword").dense == 0.0
    assert _parts(0.4, 0.8, top=0.8, mode="semantic").keyword == 0.0
    stale = _parts(0.4, 0.8, top=0.68, stale=True)
    assert stale.stale_factor == 0.8
    assert stale.score == pytest.approx(0.8 * _parts(0.4, 0.8, top=0.68).score)
    assert stale.keyword + stale.dense + stale.boost == stale.score


unit = st.floats(min_value=0.0, max_value=1.0)
figures = st.fixed_dictionaries(
    {
        "success_rate": st.one_of(st.none(), unit),
        "recency_value": unit,
        "occurrences": st.integers(min_value=1, max_value=50),
        "stale": st.booleans(),
    }
)


@settings(max_examples=300, deadline=None)
@given(unit, unit, unit, unit, figures, figures)
def test_boosts_do_not_swamp_relevance(
    kw_a: float,
    dense_a: float,
    kw_b: float,
    dense_b: float,
    fig_a: dict[str, Any],
    fig_b: dict[str, Any],
) -> None:
    """A boost reorders results only among comparable matches: one whose relevance is below
    the other's times the least over the most a boost can multiply it by (0.4 x 0.8 / 1.0 with
    the seed's weights) never outranks it; with equal figures, relevance alone decides."""
    top = max(0.7 * dense_a + 0.3 * kw_a, 0.7 * dense_b + 0.3 * kw_b, 1e-6)
    a, b = _parts(kw_a, dense_a, top, **fig_a), _parts(kw_b, dense_b, top, **fig_b)
    bound = 0.4 * 0.8 / 1.0
    if b.relevance < a.relevance * bound:
        assert b.score < a.score or a.score == b.score == 0.0
    same_b = _parts(kw_b, dense_b, top, **fig_a)
    if same_b.relevance < a.relevance:
        assert same_b.score <= a.score


def test_a_weak_proven_recent_match_no_longer_outranks_the_right_one() -> None:
    """The seed added the boosts (up to 0.6) to 0.4 x similarity: a learning that matched
    half as well, applied 10 times with success and written today, came first."""
    right = _parts(0.6, 0.8, top=0.74, recency_value=0.1)  # the match, unproven and old
    proven = _parts(0.3, 0.4, top=0.74, success_rate=1.0, recency_value=1.0)
    assert right.relevance == pytest.approx(1.0) and proven.relevance == pytest.approx(0.5)
    seed = SearchSettings().weights
    added = [seed.similarity * p.relevance + p.boost / p.relevance for p in (right, proven)]
    assert added[1] > added[0]  # the seed's order
    assert right.score > proven.score
    weights = SearchSettings()
    assert leo_score(
        1.0, success_rate=None, recency_value=0.1, occurrences=1, stale=False, settings=weights
    ) > leo_score(
        0.5, success_rate=1.0, recency_value=1.0, occurrences=1, stale=False, settings=weights
    )


def test_weights_from_config() -> None:
    settings = SearchSettings(
        {"weights": {"similarity": 1, "success": 0}, "threshold": 0.3, "dense_weight": 0.5}
    )
    assert settings.weights == WeightSettings(similarity=1.0, success=0.0)
    assert (settings.threshold, settings.dense_weight) == (0.3, 0.5)


def test_recency_halves_every_half_life() -> None:
    today = date(2026, 11, 22)
    assert recency("2026-11-22", today, 365) == 1.0
    assert recency("2025-11-22", today, 365) == pytest.approx(0.5)
    assert recency(None, today, 365) == 0.5
    assert recency("not a date", today, 365) == 0.5
    assert recency("2027-01-01", today, 365) == 1.0  # future dates are not bonuses


@pytest.mark.parametrize(
    ("applications", "rate", "start"),
    [
        (3, 0.9, "HIGH SUCCESS — apply preemptively"),
        (10, 1.0, "HIGH SUCCESS"),
        (2, 1.0, "MODERATE"),  # too few applications to be sure
        (5, 0.6, "MODERATE — be aware"),
        (5, 0.59, "LOW SUCCESS"),
        (0, None, "UNPROVEN"),
    ],
)
def test_recommendation(applications: int, rate: float | None, start: str) -> None:
    assert recommendation(applications, rate, False).startswith(start)
    assert "stale" in recommendation(applications, rate, True)


def test_filters() -> None:
    doc = {
        "id": "a",
        "status": "published",
        "kind": "pattern",
        "category": "Database",
        "severity": "high",
        "tags": ["RLS", "supabase"],
        "created": "2026-05-01",
    }
    assert Filters().admits(doc, set())
    assert not Filters().admits(doc, {"a"})  # another learning supersedes it
    assert Filters(include_hidden=True).admits(doc, {"a"})
    assert Filters(category="database", tags=("rls",)).admits(doc, set())
    assert not Filters(tags=("rls", "k8s")).admits(doc, set())
    assert not Filters(created_from="2026-06-01").admits(doc, set())
    assert Filters(created_to="2026-05-01").admits(doc, set())
    assert not Filters().admits({**doc, "status": "retired"}, set())
    assert Filters(status="retired").admits({**doc, "status": "retired"}, set())
    with pytest.raises(UsageError, match="--until"):
        Filters(created_to="05/01/2026")


def test_synonyms_expand_both_ways() -> None:
    table = SynonymTable()
    assert ["row", "level", "security"] in table.expansions(words("RLS blocks insert"))
    assert ["rls"] in table.expansions(words("row-level security blocks insert"))
    assert table.expansions(words("nothing to see")) == []
    custom = SynonymTable.from_config([["pg", "postgres"]])
    assert ["postgres"] in custom.expansions(["pg"])
    mapped = SynonymTable.from_config({"tf": ["terraform"]})
    assert ["terraform"] in mapped.expansions(["tf"])


def test_terms_stem_and_split_identifiers() -> None:
    assert words("sd_phase_handoffs parseHTTPResponse") == [
        "sd",
        "phase",
        "handoffs",
        "parse",
        "httpresponse",
    ]
    assert terms(["inserting", "the", "blocked"]) == ["insert", "block"]
