"""Hubness correction of the dense similarity: the pure policy (index/hubness.py), and a real
index recording each learning's hubness and ranking the specific learning above the hub."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import cli_run
from lorebook.index.chunks import CHUNKER_VERSION
from lorebook.index.hubness import (
    MAX_GAIN,
    NEIGHBOURS,
    WEIGHT,
    corrected,
    hubness,
    nearest_others,
)
from lorebook.index.manifest import Manifest
from lorebook.index.rank import fuse
from search_fixtures import open_book, write_learning


def test_nearest_others_leave_out_the_learning_itself_and_keep_each_ones_best_passage() -> None:
    hits = [("a.md", 1.0), ("b.md", 0.7), ("a.md", 0.9), ("c.md", 0.5), ("b.md", 0.8)]
    assert nearest_others(hits, "a.md") == [0.8, 0.5]
    assert nearest_others([("a.md", 1.0)], "a.md") == []


def test_hubness_is_the_mean_similarity_to_the_nearest_others() -> None:
    assert hubness([0.9, 0.1, 0.8, 0.7]) == pytest.approx((0.9 + 0.8 + 0.7) / NEIGHBOURS)
    assert hubness([0.6]) == pytest.approx(0.6)  # a small store: fewer neighbours
    assert hubness([]) == 0.0  # alone in the store


def test_a_specific_learning_beats_a_hub_that_the_old_scoring_ranked_first() -> None:
    # The hub sits in the middle of its topic (close to its neighbours, 0.85) and comes out
    # slightly closer to the query than the learning about the query's actual problem.
    mean_hub = 0.55
    hub_raw, hub_hub = 0.62, 0.85
    right_raw, right_hub = 0.58, 0.50
    keyword_hub, keyword_right = 0.30, 0.30
    old = {
        "hub": fuse(keyword_hub, hub_raw, "hybrid", 0.7),
        "right": fuse(keyword_right, right_raw, "hybrid", 0.7),
    }
    assert max(old, key=old.__getitem__) == "hub"  # the old scoring's answer
    new = {
        "hub": fuse(keyword_hub, corrected(hub_raw, hub_hub, mean_hub), "hybrid", 0.7),
        "right": fuse(keyword_right, corrected(right_raw, right_hub, mean_hub), "hybrid", 0.7),
    }
    assert max(new, key=new.__getitem__) == "right"


def test_correction_is_relative_to_the_store_mean_and_stays_in_range() -> None:
    assert corrected(0.5, 0.6, 0.6) == pytest.approx(0.5)  # an average learning: unchanged
    assert corrected(0.5, 0.4, 0.6) == pytest.approx(0.5 + WEIGHT * 0.2)  # less central: gains
    assert corrected(0.1, 1.0, 0.2) == 0.0
    # an outlier far from every other learning gains at most MAX_GAIN of its own similarity
    assert corrected(0.06, 0.05, 0.55) == pytest.approx(0.06 * MAX_GAIN)
    assert corrected(0.9, 0.0, 0.5) == 1.0


HUB_TOPIC = {  # four learnings about terminal tabs around one generic one
    "tabs-generic": "Terminal tabs feature request",
    "tabs-rename": "Rename a terminal tab by double-clicking its title",
    "tabs-colour": "Set the colour of a terminal tab",
    "tabs-close": "Close all other terminal tabs from the tab menu",
    "tabs-reorder": "Reorder terminal tabs with the keyboard",
}


def test_a_real_index_records_hubness_and_ranks_the_specific_learning_first(
    store: Path, embedder: Any
) -> None:
    root = store
    for learning_id, title in HUB_TOPIC.items():
        write_learning(root, learning_id, title=title)
    write_learning(
        root,
        "tab-tearoff",
        title="Drag a tab out of the window into a new window",
        body="## Problem\nTabs cannot be torn off into a window of their own.",
    )
    write_learning(root, "pandas-memory", title="Reading a large CSV exhausts memory")
    book = open_book(root)
    book.index.update()
    manifest = Manifest.load(root / ".lore" / "cache" / "index" / "manifest.json")
    assert manifest is not None
    hubs = {Path(k).stem: e.hub for k, e in manifest.files.items()}
    assert all(0.0 < h < 1.0 for h in hubs.values()), hubs
    assert hubs["tabs-generic"] > hubs["pandas-memory"]  # the hub of the tabs topic
    # by raw similarity "Close all other terminal tabs ..." is nearer this query (0.669 against
    # 0.664 for the tear-off learning); corrected, the tear-off learning comes first
    query = "tear a terminal tab off into its own window"
    for mode in ("semantic", "hybrid"):
        hits = book.index.search(query, mode=mode, limit=3, refresh=False)
        assert hits[0].id == "tab-tearoff", (mode, [(h.id, h.semantic_score) for h in hits])
    # the learning far from every other one is not lifted into an unrelated query's results
    hits = book.index.search("terminal tab window", limit=10, refresh=False)
    assert "pandas-memory" not in [hit.id for hit in hits]


def test_an_index_from_before_hubness_is_rebuilt_and_gets_it(search_store: Path) -> None:
    """An index written by chunker v2 (no hubness in its manifest) rebuilds by itself."""
    path = search_store / ".lore" / "cache" / "index" / "manifest.json"
    first = cli_run(["index", "--json"], env={"LORE_ROOT": str(search_store)})
    assert first.code == 0, first.err
    data = json.loads(path.read_text())
    data["chunker"] = 2
    for entry in data["files"].values():
        entry.pop("hub", None)
    path.write_text(json.dumps(data))
    result = cli_run(["search", "liveness probe", "--json"], env={"LORE_ROOT": str(search_store)})
    assert result.code == 0, result.err
    assert result.json()["results"][0]["id"] == "k8s-liveness"
    manifest = Manifest.load(path)
    assert manifest is not None and manifest.chunker == CHUNKER_VERSION
    assert all(e.hub > 0.0 for e in manifest.files.values() if e.chunks)
