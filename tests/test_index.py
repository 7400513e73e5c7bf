"""`lore index` / `SearchIndex.update`: incremental by hash, manifest pins, damaged caches,
missing model, chunking of long learnings."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from conftest import cli_run
from lorebook.index.chunks import passages
from lorebook.index.documents import Document
from lorebook.index.manifest import Manifest
from search_fixtures import open_book, write_learning


def index_json(root: Path, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    result = cli_run(["index", *args, "--json"], env={"LORE_ROOT": str(root), **(env or {})})
    assert result.code == 0, result.err
    data = result.json()
    assert isinstance(data, dict)
    data["stderr"] = result.err
    return data


def manifest_of(root: Path) -> Manifest:
    found = Manifest.load(root / ".lore" / "cache" / "index" / "manifest.json")
    assert found is not None
    return found


def test_unchanged_files_are_never_embedded_again(search_store: Path, embedder: Any) -> None:
    book = open_book(search_store)
    book.index.update()
    calls: list[int] = []
    original = embedder.encode

    def counting(texts: list[str], batch_size: int = 32) -> Any:
        calls.append(len(texts))
        return original(texts, batch_size)

    embedder.encode = counting
    try:
        assert book.index.update().unchanged == 7
        assert calls == []
        (search_store / "learnings" / "k8s-liveness.md").touch()  # same bytes, new mtime
        assert book.index.update().unchanged == 7
        assert calls == []
        write_learning(search_store, "new-one", title="A new lesson about caching")
        report = book.index.update()
        assert report.added == ["learnings/new-one.md"]
        assert calls == [1]  # one passage: the title (no body)
    finally:
        embedder.encode = original


def test_index_summary_and_json(search_store: Path) -> None:
    result = cli_run(["index"], env={"LORE_ROOT": str(search_store)})
    assert result.code == 0, result.err
    assert result.out.strip() == (
        "Rebuilt the index (all-MiniLM-L6-v2): 7 added, 0 updated, 0 removed, 0 unchanged"
    )
    data = index_json(search_store)
    assert (data["added"], data["unchanged"], data["rebuilt"], data["model"]) == (
        0,
        7,
        False,
        "all-MiniLM-L6-v2",
    )


def test_deleted_cache_is_rebuilt_with_notice(search_store: Path) -> None:
    index_json(search_store)
    shutil.rmtree(search_store / ".lore" / "cache" / "index" / "chroma")
    result = cli_run(["search", "RLS insert", "--json"], env={"LORE_ROOT": str(search_store)})
    assert result.code == 0, result.err
    assert "index cache was missing; rebuilt" in result.err
    data = result.json()
    assert isinstance(data, dict) and data["results"][0]["id"] == "rls-anon-insert"
    shutil.rmtree(search_store / ".lore" / "cache")  # the whole cache: simply built again
    again = index_json(search_store)
    assert again["added"] == 7 and again["rebuilt"]


def test_corrupt_manifest_and_store_are_rebuilt(search_store: Path) -> None:
    index_json(search_store)
    folder = search_store / ".lore" / "cache" / "index"
    (folder / "manifest.json").write_text("{not json")
    data = index_json(search_store)
    assert data["rebuilt"] and data["added"] == 7
    assert "manifest was unreadable" in data["stderr"]
    sqlite = folder / "chroma" / "chroma.sqlite3"
    sqlite.write_bytes(b"garbage" * 1000)
    data = index_json(search_store)
    assert data["rebuilt"] and data["added"] == 7, data
    assert "rebuilt the index" in data["stderr"]
    result = cli_run(["search", "RLS insert", "--json"], env={"LORE_ROOT": str(search_store)})
    assert result.code == 0, result.err


def test_changed_pins_force_a_rebuild(search_store: Path) -> None:
    index_json(search_store)
    path = search_store / ".lore" / "cache" / "index" / "manifest.json"
    data = json.loads(path.read_text())
    data["chunker"] = 1
    path.write_text(json.dumps(data))
    report = index_json(search_store)
    assert report["rebuilt"] and report["added"] == 7
    assert "chunker=1" in report["stderr"] and "rebuilt the index" in report["stderr"]
    assert manifest_of(search_store).model == "all-MiniLM-L6-v2"
    assert manifest_of(search_store).dim == 384


def test_missing_model_means_keyword_only_with_one_warning(search_store: Path) -> None:
    (search_store / ".lore" / "config.yaml").write_text(
        "embedding:\n  model: /nonexistent/model-folder\n"
    )
    result = cli_run(
        ["search", "RLS policy blocks insert", "--json"], env={"LORE_ROOT": str(search_store)}
    )
    assert result.code == 0, result.err
    warnings = [line for line in result.err.splitlines() if "warning" in line]
    assert len(warnings) == 1 and "keywords only" in warnings[0], result.err
    data = result.json()
    assert isinstance(data, dict) and data["mode"] == "keyword"
    assert data["results"][0]["id"] == "rls-anon-insert"
    assert data["results"][0]["semantic_score"] is None
    assert manifest_of(search_store).model is None
    semantic = cli_run(
        ["search", "RLS", "--mode", "semantic", "--json"], env={"LORE_ROOT": str(search_store)}
    )
    assert semantic.code == 0 and "keywords only" in semantic.err
    # the model comes back: the keyword-only index is rebuilt with vectors
    (search_store / ".lore" / "config.yaml").write_text("")
    data = index_json(search_store)
    assert data["rebuilt"] and data["model"] == "all-MiniLM-L6-v2"


def test_long_learnings_are_chunked_by_section_and_found_as_one(search_store: Path) -> None:
    filler = " ".join(f"word{i}" for i in range(200))
    body = (
        f"## Problem\n{filler}\n\n## Root Cause\nThe queue consumer acknowledged messages "
        f"before processing them, so a crash lost them.\n\n## Solution\n{filler}\n\n"
        "## Key Takeaway\nAcknowledge a message only after it was processed."
    )
    write_learning(
        search_store,
        "long-one",
        title="Lost messages after consumer crash",
        body=body,
        category="messaging",
    )
    doc = Document(id="long-one", title="Lost messages after consumer crash", path="x", body=body)
    parts = passages(doc)
    assert parts[0] == doc.title and len(parts) >= 6
    assert all(p.startswith(doc.title) for p in parts)
    book = open_book(search_store)
    book.index.update()
    assert manifest_of(search_store).files["learnings/long-one.md"].chunks == len(parts)
    hits = book.index.search("consumer acknowledged before processing", limit=3)
    assert [h.id for h in hits].count("long-one") == 1 and hits[0].id == "long-one"


def test_drafts_are_indexed_with_their_status(search_store: Path) -> None:
    write_learning(
        search_store,
        "draft-one",
        folder="learnings/drafts",
        title="Draft: flaky DNS in CI runners",
        status="draft",
    )
    book = open_book(search_store)
    hit = book.index.search("DNS flaky CI", limit=1)[0]
    assert (hit.id, hit.to_dict()["status"]) == ("draft-one", "draft")
