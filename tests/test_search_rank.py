"""Ranking policy as pure functions: fusion, LEO weighting, recency, recommendation, filters,
synonym expansion."""

from __future__ import annotations

from datetime import date

import pytest

from lorebook.errors import UsageError
from lorebook.index.rank import (
    Filters,
    fuse,
    leo_score,
    recency,
    recommendation,
)
from lorebook.index.synonyms import SynonymTable, terms, words
from lorebook.settings import SearchSettings, WeightSettings


def test_fuse_modes() -> None:
    assert fuse(0.2, 0.8, "hybrid", 0.7) == pytest.approx(0.62)
    assert fuse(0.2, 0.8, "keyword", 0.7) == 0.2
    assert fuse(0.2, 0.8, "semantic", 0.7) == 0.8
    assert fuse(0.2, None, "hybrid", 0.7) == 0.2  # no vectors: keywords only


def test_leo_weighting_matches_the_seed() -> None:
    # seed example: similarity .30, recency .85, success .916, specificity 1/12 -> 0.57
    settings = SearchSettings()
    score = leo_score(0.30, success_rate=0.916, recency_value=0.85, occurrences=12, stale=False,
                      settings=settings)
    assert score == pytest.approx(0.30 * 0.4 + 0.85 * 0.2 + 0.916 * 0.3 + (1 / 12) * 0.1)
    assert round(score, 2) == 0.57
    stale = leo_score(0.30, success_rate=0.916, recency_value=0.85, occurrences=12, stale=True,
                      settings=settings)
    assert stale == pytest.approx(score * 0.8)
    unknown = leo_score(1.0, success_rate=None, recency_value=1.0, occurrences=1, stale=False,
                        settings=settings)
    assert unknown == pytest.approx(0.4 + 0.15 + 0.2 + 0.1)


def test_weights_from_config() -> None:
    settings = SearchSettings({"weights": {"similarity": 1, "success": 0},
                               "threshold": 0.3, "dense_weight": 0.5})
    assert settings.weights == WeightSettings(similarity=1.0, success=0.0)
    assert (settings.threshold, settings.dense_weight) == (0.3, 0.5)


def test_recency_halves_every_half_life() -> None:
    today = date(2026, 11, 22)
    assert recency("2026-11-22", today, 365) == 1.0
    assert recency("2025-11-22", today, 365) == pytest.approx(0.5)
    assert recency(None, today, 365) == 0.5
    assert recency("not a date", today, 365) == 0.5
    assert recency("2027-01-01", today, 365) == 1.0  # future dates are not bonuses


@pytest.mark.parametrize(("applications", "rate", "start"), [
    (3, 0.9, "HIGH SUCCESS — apply preemptively"),
    (10, 1.0, "HIGH SUCCESS"),
    (2, 1.0, "MODERATE"),  # too few applications to be sure
    (5, 0.6, "MODERATE — be aware"),
    (5, 0.59, "LOW SUCCESS"),
    (0, None, "UNPROVEN"),
])
def test_recommendation(applications: int, rate: float | None, start: str) -> None:
    assert recommendation(applications, rate, False).startswith(start)
    assert "stale" in recommendation(applications, rate, True)


def test_filters() -> None:
    doc = {"id": "a", "status": "published", "kind": "pattern", "category": "Database",
           "severity": "high", "tags": ["RLS", "supabase"], "created": "2026-05-01"}
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
        "sd", "phase", "handoffs", "parse", "httpresponse"]
    assert terms(["inserting", "the", "blocked"]) == ["insert", "block"]
