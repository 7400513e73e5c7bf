"""Each search answers for itself: its warnings, the mode it used and why it was degraded come
back with its results, and nothing of one search is left on the index for the next. One index
is updated and searched from two threads at once (the TUI does), and stays right."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest

from lorebook import Lorebook
from lorebook.index.engine import UPDATING
from search_fixtures import LEARNINGS, age_learnings, learning_text, open_book, write_learning

LONG = "row level security " * 600  # past the 10,000 characters a search reads
MEANWHILE = UPDATING + ": searched by keywords only"


def _keyword_only(root: Path) -> None:
    (root / ".lore" / "config.yaml").write_text("embedding:\n  enabled: false\n")


def test_a_search_carries_its_own_warnings_and_mode(search_store: Path) -> None:
    _keyword_only(search_store)
    book = open_book(search_store)
    long = book.index.search(LONG, limit=1)
    assert [w for w in long.warnings if "characters long" in w], long.warnings
    assert long.mode == "hybrid" or long.mode == "keyword"
    plain = book.index.search("row level security", limit=1)
    assert plain and plain[0].id == "rls-anon-insert"
    assert plain.warnings == [] and plain.degraded is None
    assert plain.query == "row level security"
    keyword = book.index.search("row level security", mode="keyword", limit=1)
    assert keyword.mode == "keyword" and keyword.warnings == []


def test_a_preflight_after_a_long_query_has_no_warning_of_it(search_store: Path) -> None:
    book = open_book(search_store)
    first = book.preflight(LONG, log=False, mode="keyword")
    assert any("characters long" in w for w in first["warnings"]), first["warnings"]
    second = book.preflight("deploy the container on port 8080", log=False, mode="keyword")
    assert second["warnings"] == [], second["warnings"]
    assert "deploy-port-conflict" in [item["id"] for item in second["learnings"]]


def test_the_model_missing_is_said_by_every_search_that_wanted_it(
    search_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a fact about the process, not one search: each hybrid search is keyword-only and says so
    from lorebook.index import embed
    from lorebook.index.embed import ModelUnavailable

    def missing(*args: Any, **kwargs: Any) -> Any:
        raise ModelUnavailable("the embedding model cannot be loaded")

    monkeypatch.setattr(embed, "load_embedder", missing)
    index = open_book(search_store).index
    for _ in range(2):
        found = index.search("row level security", limit=1)
        assert found.mode == "keyword" and found[0].id == "rls-anon-insert"
        assert [w for w in found.warnings if "searching by keywords only" in w], found.warnings
    # a keyword search needs no model (without a refresh: indexing would want it)
    assert index.search("row level security", mode="keyword", refresh=False).warnings == []


def _churn(root: Path, index: Any, rounds: int, errors: list[str]) -> None:
    try:
        for i in range(rounds):  # written whole (as an editor saves), then indexed
            text = learning_text(
                f"churn-{i % 4}",
                {
                    "title": f"Churn lesson {i} about cache eviction",
                    "category": "build",
                    "created": "2026-05-01",
                    "body": f"## Key Takeaway\nRevision {i}.",
                },
            )
            tmp = root / f".churn-{i}.tmp"
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, root / "learnings" / f"churn-{i % 4}.md")
            if i % 5 == 2:
                (root / "learnings" / f"churn-{(i + 1) % 4}.md").unlink(missing_ok=True)
            index.update()
    except Exception as exc:
        errors.append(f"update: {type(exc).__name__}: {exc}")


def _updates_and_searches_in_two_threads(root: Path, book: Lorebook, rounds: int) -> int:
    index = book.index
    index.update()
    errors: list[str] = []
    writer = threading.Thread(target=_churn, args=(root, index, rounds, errors))
    writer.start()
    searches = 0
    while writer.is_alive() or searches < 20:
        try:
            found = index.search("RLS policy blocks insert", limit=3, refresh=searches % 2 == 0)
        except Exception as exc:
            errors.append(f"search: {type(exc).__name__}: {exc}")
            break
        searches += 1
        assert found and found[0].id == "rls-anon-insert", [h.id for h in found]
        for hit in found:  # each hit is the document of its own file
            assert hit.path == f"learnings/{hit.id}.md", (hit.id, hit.path)
            assert hit.doc["id"] == hit.id
        # nothing damaged, skipped or unreadable; only, at times, answered by keywords while
        # the other thread updates the index, and then said so
        assert set(found.warnings) <= {MEANWHILE}, found.warnings
        assert found.degraded in (None, "keyword-only: " + UPDATING), found.degraded
        assert found.mode == "keyword" or not found.degraded, found.mode
    writer.join()
    assert errors == []
    assert set(index.warnings) <= {MEANWHILE}, index.warnings
    return searches


def test_one_index_updated_and_searched_from_two_threads(store: Path) -> None:
    _keyword_only(store)
    for learning_id, fields in LEARNINGS.items():
        write_learning(store, learning_id, **fields)
    age_learnings(store)
    searches = _updates_and_searches_in_two_threads(store, open_book(store), 60)
    assert searches >= 20


def test_one_index_updated_and_searched_from_two_threads_with_the_model(
    search_store: Path,
) -> None:
    searches = _updates_and_searches_in_two_threads(search_store, open_book(search_store), 25)
    assert searches >= 20


def test_a_search_does_not_wait_for_another_threads_update(search_store: Path) -> None:
    _keyword_only(search_store)
    index = open_book(search_store).index
    index.update()
    write_learning(search_store, "kafka-lag", title="Consumer lag grows on rebalance")
    age_learnings(search_store)
    inside, searched = threading.Event(), threading.Event()

    def held(task: str, done: int, total: int) -> None:  # the update, midway, waits for us
        inside.set()
        searched.wait(120)

    writer = threading.Thread(target=lambda: index.update(progress=held))
    writer.start()
    try:
        assert inside.wait(120)
        found = index.search("row level security", limit=1)
        keyword = index.search("row level security", mode="keyword", limit=1)
        assert writer.is_alive()  # answered while the update still held the index
    finally:
        searched.set()
        writer.join()
    assert found[0].id == keyword[0].id == "rls-anon-insert"
    assert (found.mode, found.degraded) == ("keyword", "keyword-only: " + UPDATING)
    assert found.warnings == [MEANWHILE]
    assert (keyword.mode, keyword.degraded, keyword.warnings) == ("keyword", None, [])
    after = index.search("row level security", limit=1)
    assert after.degraded is None and after.warnings == []
