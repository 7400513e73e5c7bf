"""`lore tui`, the Sessions tab on a big history: the first screen without a catalog (the last
days at once, the background build said, every session once it is built), the filter and the
sort, at 80x24 and 120x32. Pilot on real stores; the catalog build is a real child process,
held by SIGSTOP (`catalog_build_held`) so that "not built yet" never depends on timing."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, Input, Static

from lorebook import Lorebook
from lorebook.tui.app import make_app
from lorebook.tui.sessions import ResumeScreen, SessionsTab
from search_fixtures import age_learnings, write_learning
from test_mcp_fresh import catalog_built, catalog_children, long_log
from test_tui import settle

SIZES = [(80, 24), (120, 32)]


def keys(table: DataTable[Any]) -> list[str]:
    return [str(table.coordinate_to_cell_key((i, 0)).row_key.value) for i in range(table.row_count)]


def text_of(app: Any, selector: str) -> str:
    return str(app.query_one(selector, Static).render())


class Stopped:
    """The catalog build's child, which stops itself (SIGSTOP) as its first statement, until
    `release`: it cannot end before the test sees it, however busy the app keeps the GIL."""

    def __init__(self, root: Path) -> None:
        self.root, self.pids = root, list[int]()

    def wait(self) -> None:
        deadline = time.monotonic() + 120
        while not self.pids:
            assert time.monotonic() < deadline, "the app started no catalog build process"
            self.pids = catalog_children(self.root)
            time.sleep(0.01)

    def release(self) -> None:
        for pid in self.pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)


@contextlib.contextmanager
def stopped_children(monkeypatch: pytest.MonkeyPatch, root: Path) -> Iterator[Stopped]:
    from lorebook import child

    held, real = Stopped(root), child.run_child
    stop = "import os, signal; os.kill(os.getpid(), signal.SIGSTOP)\n"

    def run_child(script: str, *args: Any, **kwargs: Any) -> Any:
        return real(stop + script, *args, **kwargs)

    monkeypatch.setattr(child, "run_child", run_child)
    try:
        yield held
    finally:
        held.release()


@pytest.mark.asyncio
@pytest.mark.parametrize("size", SIZES)
async def test_without_a_catalog_the_last_days_show_at_once_and_every_session_once_built(
    store: Path, size: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    seeded = long_log(store)  # 70 days: more than a query builds a catalog for
    every = {s.id for s in Lorebook.open(store, env={}).sessions()}
    assert not catalog_built(store)
    book = Lorebook.open(store, env={})
    app = make_app(book, load_model=False)
    with stopped_children(monkeypatch, store) as held:
        async with app.run_test(size=size) as pilot:
            tab = app.query_one(SessionsTab)
            table = app.query_one("#sessions-table", DataTable)
            await settle(pilot, lambda: tab.loaded)
            held.wait()
            shown = keys(table)
            assert seeded["session"] in shown  # the last days, read from their shards
            assert 0 < len(shown) < 10 < len(every)
            status = text_of(app, "#sessions-status")
            assert "Building the action catalog" in status and "in the background" in status
            assert "last 7 days" in status
            assert len(status) < size[0]  # one line, whole, at this width

            await pilot.press("slash", *"project=nowhere", "enter")  # answered from 7 days
            await settle(pilot, lambda: app.query_one("#sessions-empty").display)
            assert "No sessions match" in text_of(app, "#sessions-empty")
            assert table.row_count == 0
            assert not catalog_built(store)

            app.query_one(Input).value = ""
            await pilot.press("slash", "enter")
            await settle(pilot, lambda: table.row_count == len(shown))

            held.release()  # the build ends: the table is read again, whole
            await settle(pilot, lambda: set(keys(table)) == every, timeout=60)
            assert not book.catalog_building
            assert "Building" not in text_of(app, "#sessions-status")
            assert not app.query_one("#sessions-empty").display


def test_the_background_build_reports_its_progress(store: Path) -> None:
    long_log(store)
    book = Lorebook.open(store, env={})
    heard: list[tuple[str, int, int]] = []
    book.on_progress(lambda task, done, total: heard.append((task, done, total)))
    assert book.build_catalog_in_background()
    assert not book.build_catalog_in_background()  # one build at a time
    assert book.wait_for_catalog(120)
    assert catalog_built(store)
    assert heard and {task for task, _, _ in heard} == {"catalog.build"}
    assert all(0 <= done <= total for _, done, total in heard)


def varied(store: Path) -> Lorebook:
    """Sessions of two projects and agents, of 1 to 4 actions, one of them failed."""
    book = Lorebook.open(store, env={})
    start = datetime.now(UTC) - timedelta(hours=6)
    for n, (project, agent) in enumerate(
        [("web", "claude"), ("api", "codex"), ("web", "codex"), ("api", "claude")]
    ):
        when = start + timedelta(minutes=10 * n)
        session = book.start_session(agent=agent, project=project, now=when)
        for k in range(n + 1):
            book.log("plan", session=session.id, now=when + timedelta(seconds=k))
        book.end_session(session.id, now=when + timedelta(minutes=1))
    return book


def test_sessions_filter_by_time_and_text_in_the_library(store: Path) -> None:
    book = varied(store)
    every = book.sessions()
    assert [s.project for s in book.sessions(text="WEB")] == ["web", "web"]
    assert [s.agent for s in book.sessions(text="codex", project="api")] == ["codex"]
    middle = every[2].started
    assert {s.id for s in book.sessions(since=middle)} == {s.id for s in every[:3]}
    assert {s.id for s in book.sessions(until=middle)} == {s.id for s in every[3:]}
    assert book.sessions(text="nothing-like-this") == []


@pytest.mark.asyncio
@pytest.mark.parametrize("size", SIZES)
async def test_sessions_filter_and_sort_and_typing_fires_no_hotkey(
    store: Path, size: tuple[int, int]
) -> None:
    book = varied(store)
    app = make_app(book, load_model=False)
    async with app.run_test(size=size) as pilot:
        tab = app.query_one(SessionsTab)
        table = app.query_one("#sessions-table", DataTable)
        await settle(pilot, lambda: table.row_count == 4)
        await pilot.press("slash", *"project=web resumed")  # r, p, n, s: no hotkey fires
        assert app.query_one(Input).value == "project=web resumed"
        assert not isinstance(app.screen, ResumeScreen) and tab.sort is None
        await pilot.press("enter")
        await settle(pilot, lambda: app.query_one("#sessions-empty").display)  # no such text
        app.query_one(Input).value = "project=web claude"
        await pilot.press("slash", "enter")
        await settle(pilot, lambda: table.row_count == 1)
        assert [s.agent for s in tab.sessions] == ["claude"]
        assert app.focused is table  # back to the table: its keys work again

        app.query_one(Input).value = "status=ended"
        await pilot.press("slash", "enter")
        await settle(pilot, lambda: table.row_count == 4)
        for _ in range(5):  # project, agent, started, last activity, actions
            await pilot.press("s")
        await settle(pilot, lambda: tab.sort == (4, True))
        assert [s.action_count for s in tab.sessions] == [4, 3, 2, 1]
        assert "by actions ↓" in text_of(app, "#sessions-status")
        await pilot.press("S")
        await settle(pilot, lambda: [s.action_count for s in tab.sessions] == [1, 2, 3, 4])
        counts = [table.get_cell(key, "actions") for key in table.rows]  # a column by its name:
        assert [str(c) for c in counts] == ["1", "2", "3", "4"]  # a narrow table leaves some out

        await pilot.click("#sessions-table", offset=(2, 0))  # the project header
        await settle(pilot, lambda: tab.sort == (0, False))
        assert [s.project for s in tab.sessions] == ["api", "api", "web", "web"]
        await pilot.press("1", "slash", *"status=bogus", "enter")
        await settle(pilot, lambda: any(n.severity == "error" for n in app._notifications))


@pytest.mark.asyncio
@pytest.mark.parametrize("size", SIZES)
async def test_learnings_tab_lists_the_published_ones_newest_first_before_any_query(
    store: Path, size: tuple[int, int]
) -> None:
    (store / ".lore" / "config.yaml").write_text("embedding:\n  enabled: false\n")
    for n, (created, word) in enumerate(
        [("2026-09-01", "cache"), ("2026-11-01", "queue"), ("2026-10-01", "zebrafish")]
    ):
        write_learning(store, f"lesson-{n}", title=f"Lesson {n}", created=created,
                       body=f"## Key Takeaway\nMind the {word}.")  # fmt: skip
    write_learning(store, "a-draft", folder="learnings/drafts", title="Not yet", status="draft")
    age_learnings(store)
    book = Lorebook.open(store, env={})
    app = make_app(book, load_model=False)
    async with app.run_test(size=size) as pilot:
        await pilot.press("3")
        table = app.query_one("#learn-results", DataTable)
        await settle(pilot, lambda: table.row_count == 3)
        assert keys(table) == ["lesson-1", "lesson-2", "lesson-0"]
        first = table.coordinate_to_cell_key((0, 0)).row_key  # columns by name: at 80 some go
        assert [str(table.get_cell(first, name)) for name in ("match", "title", "status")] == [
            "-", "Lesson 1", ""]  # fmt: skip
        if size[0] >= 120:  # at 80 columns `applied` gives way to the title
            assert str(table.get_cell(first, "applied")) == "0"
        assert "3 published learning(s), newest first" in text_of(app, "#learn-mode")
        await pilot.press("slash", *"zebrafish", "enter")
        await settle(pilot, lambda: keys(table) == ["lesson-2"], timeout=20)
        await pilot.press("slash", *["backspace"] * 9)  # an emptied query lists them again
        await settle(pilot, lambda: table.row_count == 3)
        assert "newest first" in text_of(app, "#learn-mode")
