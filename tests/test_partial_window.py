"""While the catalog is built, a question about the whole log reads the last 7 days, or fewer
(down to the newest day) when those hold more than `PARTIAL_BYTES`: on a dense log 7 days were
233,000 actions and the first screen of sessions took 54 s."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

import lorebook.book
from lorebook import Lorebook
from lorebook.log.reader import newest_days_within


def day_shard(store: Path, day: str, size: int) -> None:
    folder = store / "actionlog" / day.replace("-", "/")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "01M8BZ2040B0S9KM9CBFY7BF0Z.jsonl").write_bytes(b"x" * size)


def test_the_newest_days_within_a_budget_always_the_newest(tmp_path: Path) -> None:
    for day, size in (("2026-11-20", 10), ("2026-11-25", 40), ("2026-11-26", 30),
                      ("2026-11-27", 50)):  # fmt: skip
        day_shard(tmp_path, day, size)
    log = tmp_path / "actionlog"
    assert newest_days_within(log, 1000, 7) == (
        ["2026-11-27", "2026-11-26", "2026-11-25", "2026-11-20"], False)  # fmt: skip
    assert newest_days_within(log, 1000, 2) == (["2026-11-27", "2026-11-26"], False)
    assert newest_days_within(log, 80, 7) == (["2026-11-27", "2026-11-26"], True)
    assert newest_days_within(log, 10, 7) == (["2026-11-27"], True)  # over, but one day
    assert newest_days_within(tmp_path / "none", 10, 7) == ([], False)


def test_a_dense_log_is_read_from_fewer_days_and_the_note_says_since_when(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    book = Lorebook.open(store, env={})
    assert book.partial_window() == (None, None)  # no build under way: all of it
    book._catalog_building = threading.Event()  # a build under way
    since, why = book.partial_window()
    assert since == "7d" and why is not None and "last 7 days" in why
    for day in ("2026-11-25", "2026-11-26", "2026-11-27"):
        day_shard(store, day, 600)
    monkeypatch.setattr(lorebook.book, "PARTIAL_BYTES", 1000)
    since, why = book.partial_window()
    assert since == "2026-11-27" and why is not None and "since 2026-11-27" in why


def test_a_dense_short_log_is_built_in_the_background_too(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 30-day log of 1,000,000 actions is short by days (`auto_build_days`) but was read
    whole by the TUI's first query (136 s): by size it is long, so the catalog is built in the
    background and the first screen reads the newest days."""
    Lorebook.open(store, env={}).log("plan", outcome="success")
    for made in (store / ".lore" / "cache").glob("catalog.sqlite*"):
        made.unlink()  # a fresh clone: no catalog
    book = Lorebook.open(store, env={})
    monkeypatch.setattr(lorebook.book, "PARTIAL_BYTES", 1 << 30)
    assert book.build_catalog_in_background(long_only=True) is False  # short and light
    monkeypatch.setattr(lorebook.book, "PARTIAL_BYTES", 10)
    assert book.build_catalog_in_background(long_only=True) is True  # short but heavy
    assert book.wait_for_catalog(60)
