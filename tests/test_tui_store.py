"""What `lore tui` asks of the library: the sessions' skipped lines on the catalog path, the
first page of sessions, and keyset pages of actions that match one unpaged stream."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from lorebook import Lorebook
from lorebook.tui.data import page_after

START = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)


def torn_store(store: Path) -> Lorebook:
    book = Lorebook.open(store, env={})
    for n in range(3):
        with book.session(agent="PS", project=f"p{n}") as session:
            session.log("plan", context={"n": n})
    shard = sorted((store / "actionlog").rglob("*.jsonl"))[0]
    with shard.open("a", encoding="utf-8") as out:
        out.write('{"kind": "action", "torn\n')
    return book


def test_sessions_report_torn_lines_on_the_catalog_path_as_a_scan_does(store: Path) -> None:
    book = torn_store(store)
    found: list[str] = []
    catalogued = book.sessions(on_problem=lambda p: found.append(str(p)))
    assert book.action_log.scan_note() is None  # the catalog answered
    (store / ".lore" / "config.yaml").write_text("catalog:\n  enabled: false\n")
    scanned: list[str] = []
    reference = Lorebook.open(store, env={}).sessions(on_problem=lambda p: scanned.append(str(p)))
    assert [s.id for s in catalogued] == [s.id for s in reference]
    assert found == scanned and len(found) == 1 and ".jsonl:" in found[0]


def test_first_page_of_sessions_is_the_head_of_all_of_them(store: Path) -> None:
    book = torn_store(store)
    every = [s.id for s in book.sessions()]
    assert [s.id for s in book.sessions(limit=2)] == every[:2]
    assert [s.id for s in book.sessions(limit=2, status="ended")] == every[:2]
    (store / ".lore" / "config.yaml").write_text("catalog:\n  enabled: false\n")
    assert [s.id for s in Lorebook.open(store, env={}).sessions(limit=2)] == every[:2]


def test_keyset_pages_match_the_unpaged_stream_with_ties(store: Path) -> None:
    book = Lorebook.open(store, env={})
    session = book.start_session(agent="PS", project="shop", now=START)
    for n in range(23):  # pairs of actions in the same millisecond: ties on the page boundary
        book.log(
            "plan" if n % 3 else "deploy",
            session=session.id,
            outcome="success",
            now=START + timedelta(milliseconds=n // 2),
        )
    for filters in ({}, {"type": "plan"}, {"until": START + timedelta(milliseconds=9)}):
        every = [r["id"] for r in book.actions(limit=None, **filters)]
        paged: list[str] = []
        boundary = None
        while True:
            rows = page_after(book, filters, boundary, 4)
            if not rows:
                break
            paged += [r["id"] for r in rows]
            boundary = (rows[-1]["ts"], rows[-1]["id"])
        assert paged == every, filters
