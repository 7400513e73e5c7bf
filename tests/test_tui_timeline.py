"""`lore tui`, a session's timeline: a tree (a tracked step's calls under it) with an outcome
mark, the command or file, the duration and a waterfall bar on each line, at 80x24 and 120x32;
folding; a session of 10,000 actions opens a page of rows, not a widget per record; the resume
pop-up scrolls from the keyboard as soon as it opens. Pilot on real stores."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from textual.containers import VerticalScroll
from textual.widgets import DataTable

from lorebook import Lorebook
from lorebook.tui import sessions as sessions_tab
from lorebook.tui.app import make_app
from lorebook.tui.sessions import ResumeScreen, TimelineScreen
from test_timeline import START, subagents_at_work, traced
from test_tui import settle

SIZES = [(80, 24), (120, 32)]


def lines(table: DataTable[Any]) -> list[list[str]]:
    return [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]


async def opened(pilot: Any, app: Any) -> TimelineScreen:
    await settle(pilot, lambda: app.query_one("#sessions-table", DataTable).row_count == 1)
    await pilot.press("enter")
    await settle(pilot, lambda: isinstance(app.screen, TimelineScreen))
    screen = app.screen
    assert isinstance(screen, TimelineScreen)
    return screen


@pytest.mark.asyncio
@pytest.mark.parametrize("size", SIZES)
async def test_a_session_opens_as_a_tree_with_marks_commands_and_bars(
    store: Path, size: tuple[int, int]
) -> None:
    book, _ = traced(store)
    app = make_app(book, load_model=False)
    async with app.run_test(size=size) as pilot:
        screen = await opened(pilot, app)
        table = screen.query_one("#timeline", DataTable)
        shown = lines(table)
        assert [row[0] for row in shown] == [
            "  ✓ plan ship the cart",
            "▾ ✗ deploy e-1",
            "    ✓ Bash make build",  # under the tracked deploy
            "    ✗ Bash make deploy",
            "  ✓ Read src/cart.py",
        ]
        assert [row[1] for row in shown] == ["-", "1m 0s", "20.0s", "5.0s", "-"]
        bars = [row[2] for row in shown]  # a waterfall: each bar starts where its row did
        assert all(bar.strip() for bar in bars)
        starts = [len(bar) - len(bar.lstrip()) for bar in bars]
        assert "█" in bars[1] and starts[0] < starts[1] < starts[2] < starts[3] < starts[4]
        failed = table.get_row_at(3)[0]
        assert "red" in str(failed.style) or any("red" in str(s.style) for s in failed.spans)
        assert screen.sub_title.startswith("6 actions · 1m 19s · 2 failed")
        table.move_cursor(row=3)
        await pilot.pause()
        assert "make deploy" in screen.detail_text and "exit 2" in screen.detail_text
        await pilot.press("up", "up", "enter")  # fold the deploy: its calls go
        await pilot.pause()
        assert [row[0] for row in lines(table)][1:] == ["▸ ✗ deploy e-1", "  ✓ Read src/cart.py"]
        assert table.cursor_row == 1
        await pilot.press("space")  # and back
        await pilot.pause()
        assert table.row_count == 5
        assert '"outcome": "in_progress"' in screen.detail_text  # both of the deploy's records
        assert '"outcome": "failure"' in screen.detail_text


@pytest.mark.asyncio
@pytest.mark.parametrize("size", SIZES)
async def test_a_subagents_own_calls_show_under_it(store: Path, size: tuple[int, int]) -> None:
    """Two subagents at once, each with the call it made (`context.agent_id`) and the Agent
    call that launched it under its spawn; folding a subagent hides its calls."""
    book, _ = subagents_at_work(store, launched_first=True)
    app = make_app(book, load_model=False)
    async with app.run_test(size=size) as pilot:
        screen = await opened(pilot, app)
        table = screen.query_one("#timeline", DataTable)
        assert [row[0] for row in lines(table)] == [
            "▾ ✓ spawn review",
            "    ✓ Agent check a1",
            "    ✓ Bash go test ./...",
            "▾ ✓ spawn review",
            "    ✓ Agent check b2",
            "    ✓ Grep TODO",
            "  ✓ Read main.go",
        ]
        assert [row[1] for row in lines(table)][:3] == ["17.0s", "-", "1.0s"]
        table.move_cursor(row=2)
        await pilot.pause()
        assert '"agent_id": "a1"' in screen.detail_text
        await pilot.press("up", "up", "enter")  # fold the first subagent: its calls go
        await pilot.pause()
        assert [row[0] for row in lines(table)][:2] == ["▸ ✓ spawn review", "▾ ✓ spawn review"]


@pytest.mark.asyncio
@pytest.mark.parametrize("size", SIZES)
async def test_a_huge_session_opens_a_page_not_a_widget_per_record(
    store: Path, size: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sessions_tab, "PAGE", 50)
    book = Lorebook.open(store, env={})
    session = book.start_session(agent="PS", project="shop", now=START).id
    opened_at = book.log("build", session=session, outcome="in_progress", now=START)
    for n in range(1, 2000):
        book.log("tool_call", session=session, parent=opened_at["id"], duration_s=0.5,
                 context={"tool": "Bash", "command": f"step {n}"},
                 now=START + timedelta(seconds=n))  # fmt: skip
    app = make_app(book, load_model=False)
    async with app.run_test(size=size) as pilot:
        screen = await opened(pilot, app)
        table = screen.query_one("#timeline", DataTable)
        assert table.row_count == 50
        assert len(list(screen.walk_children())) < 30  # the rows are lines, not widgets
        assert screen.sub_title.endswith("page 1 of 40")
        await pilot.press("enter")  # fold the build: one row is left
        await pilot.pause()
        assert table.row_count == 1 and screen.sub_title.endswith("page 1 of 1")


@pytest.mark.asyncio
@pytest.mark.parametrize("size", SIZES)
async def test_the_resume_brief_scrolls_from_the_keyboard_at_once(
    store: Path, size: tuple[int, int]
) -> None:
    book = Lorebook.open(store, env={})
    with book.session(agent="PS", project="shop") as session:
        for n in range(40):
            session.log("tool_call", context={"tool": "Edit", "file": f"src/module_{n}.py"})
            command = {"tool": "Bash", "command": f"pytest tests/test_{n}.py"}
            session.log("tool_call", outcome="failure", error=f"test {n} failed", context=command)
    app = make_app(book, load_model=False)
    async with app.run_test(size=size) as pilot:
        await settle(pilot, lambda: app.query_one("#sessions-table", DataTable).row_count == 1)
        await pilot.press("r")
        await settle(pilot, lambda: isinstance(app.screen, ResumeScreen))
        await pilot.pause()
        pane = app.screen.query_one("#resume", VerticalScroll)
        assert pane.max_scroll_y > 0  # the brief is longer than the pop-up
        await pilot.press("down", "down")
        await pilot.pause()
        assert pane.scroll_y > 0
        await pilot.press("pagedown")
        await pilot.pause()
        assert pane.scroll_y > 2


@pytest.mark.asyncio
async def test_a_narrow_terminal_drops_the_bar_and_keeps_the_text(store: Path) -> None:
    book, _ = traced(store)
    app = make_app(book, load_model=False)
    async with app.run_test(size=(120, 32)) as pilot:
        screen = await opened(pilot, app)
        table = screen.query_one("#timeline", DataTable)
        wide = [str(column.label) for column in table.columns.values()]
        await pilot.resize_terminal(60, 24)
        await settle(pilot, lambda: len(table.columns) == 2)
        assert wide == ["action", "took", "waterfall"]
        assert [row[0] for row in lines(table)][2:4] == [
            "    ✓ Bash make build",
            "    ✗ Bash make deploy",
        ]
        await pilot.resize_terminal(120, 32)
        await settle(pilot, lambda: len(table.columns) == 3)
