"""The parse cache behind `LearningStore.all()`: reused while files are unchanged, disposable."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from lorebook import Lorebook
from lorebook.knowledge import store as store_module

CACHE = Path(".lore") / "cache" / "learnings-v1.json"


def _age(path: Path, seconds: float = 10) -> None:
    """Make a file look written `seconds` ago (outside the racy window)."""
    then = time.time() - seconds
    os.utime(path, (then, then))


@pytest.fixture
def seeded(book: Lorebook) -> Lorebook:
    for name in ("alpha", "beta"):
        learning = book.learnings.new(
            title=name.title(), learning_id=name, publish=True, extra={"count": 3}
        )
        assert learning.path
        _age(learning.path)
    return book


def test_second_listing_comes_from_the_cache(
    seeded: Lorebook, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = [x.model_dump() for x in seeded.learnings.all()]
    assert (seeded.root / CACHE).is_file()

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("parsed a file the cache holds")

    monkeypatch.setattr(store_module, "read_learning", refuse)
    again = [x.model_dump() for x in seeded.learnings.all()]
    assert [x["id"] for x in again] == ["alpha", "beta"]
    for one, two in zip(first, again, strict=True):
        one["extra"] = {k: str(v) for k, v in one["extra"].items()}
        assert one == two


def test_a_changed_file_is_parsed_again(seeded: Lorebook) -> None:
    list(seeded.learnings.all())
    path = seeded.layout.learnings / "alpha.md"
    path.write_text(path.read_text().replace("title: Alpha", "title: Alpha two"))
    _age(path, 5)
    assert [x.title for x in seeded.learnings.all()] == ["Alpha two", "Beta"]
    seeded.learnings.store.write(
        seeded.learnings.get("beta").model_copy(update={"title": "Beta two"})
    )
    assert [x.title for x in seeded.learnings.all()] == ["Alpha two", "Beta two"]


def test_removed_files_leave_the_cache_and_bad_files_are_reported_each_time(
    seeded: Lorebook,
) -> None:
    list(seeded.learnings.all())
    (seeded.layout.learnings / "beta.md").unlink()
    bad = seeded.layout.learnings / "bad.md"
    bad.write_text("---\nid: bad\ntitle: [\n---\n")
    _age(bad)
    for _ in range(2):
        problems: list[object] = []
        assert [x.id for x in seeded.learnings.all(on_problem=problems.append)] == ["alpha"]
        assert len(problems) == 1
    entries = json.loads((seeded.root / CACHE).read_text())["entries"]
    assert sorted(entries) == ["learnings/alpha.md"]


def test_a_damaged_or_deleted_cache_changes_nothing(seeded: Lorebook) -> None:
    list(seeded.learnings.all())
    cache = seeded.root / CACHE
    cache.write_text("{not json")
    assert [x.id for x in seeded.learnings.all()] == ["alpha", "beta"]
    cache.write_text(
        json.dumps({"v": 1, "entries": {"learnings/alpha.md": [[1, 2, 3], {"id": "forged"}]}})
    )
    assert [x.id for x in seeded.learnings.all()] == ["alpha", "beta"]
    cache.unlink()
    assert [x.id for x in seeded.learnings.all()] == ["alpha", "beta"]


def test_files_written_just_now_are_not_cached(book: Lorebook) -> None:
    book.learnings.new(title="Fresh", learning_id="fresh")
    list(book.learnings.all())
    cache = book.root / CACHE
    assert not cache.exists() or json.loads(cache.read_text())["entries"] == {}
