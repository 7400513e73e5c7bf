"""Every table usable at 80x24 and 120x32: free text is cut with an ellipsis, the least needed
columns are left out, and words a reader decides by (an outcome, a status, a stale flag) are
never cut. The approve prompt shows its whole question; the report chart has day labels and a
failure series; durations read as the reports print them."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.cells import cell_len
from rich.console import Console
from rich.text import Text
from textual.widgets import DataTable, Label, Sparkline, Static

from lorebook import Lorebook
from lorebook.render.columns import Column, fit
from lorebook.render.report import day_axis
from lorebook.tui.app import make_app
from lorebook.tui.drafts import Ask
from test_tui import draft, settle

SIZES = [(80, 24), (120, 32)]


def test_free_text_is_cut_before_a_column_goes_and_words_never() -> None:
    columns = [Column("time"), Column("title", narrowest=8), Column("agent", priority=2),
               Column("status"), Column("count", priority=1)]  # fmt: skip
    natural = [14, 40, 6, 12, 5]
    assert fit(columns, natural, 200) == natural
    assert fit(columns, natural, 70) == [14, 23, 6, 12, 5]  # only the title gave cells
    assert fit(columns, natural, 50) == [14, 11, None, 12, 5]  # the agent (priority 2) went
    assert fit(columns, natural, 42) == [14, 10, None, 12, None]
    assert fit(columns, natural, 10) == [14, 8, None, 12, None]  # priority 0 always stays


def test_day_labels_fit_their_chart_and_never_overlap() -> None:
    days = [f"2026-11-{d:02d}" for d in range(1, 31)]
    for width in (20, 38, 76, 116):
        for span in (days[-8:], days):
            line = day_axis(span, width)
            assert len(line) <= width
            assert line.rstrip().endswith(span[-1][5:])  # the last day always
            labels = line.split()
            assert len(labels) >= (2 if width >= 20 else 1)
            assert labels == sorted(labels) and all(len(x) == 5 for x in labels)


def seeded(store: Path) -> Lorebook:
    book = Lorebook.open(store, env={})
    with book.session(agent="PS", project="shop-checkout") as session:
        session.log("plan", context={"task": "checkout"})
        session.log("deploy", outcome="failure", error="port 5000 already allocated " * 3,
                    duration_s=1840.0)  # fmt: skip
    return book


def shown(table: DataTable) -> dict[str, int]:  # type: ignore[type-arg]
    return {str(column.label.plain): column.width for column in table.ordered_columns}


def fits_and_whole(table: DataTable, whole: set[str]) -> None:  # type: ignore[type-arg]
    """The columns fit the table, and each of `whole` shows its widest cell uncut."""
    columns = table.ordered_columns
    assert sum(c.width + 2 for c in columns) <= table.size.width
    for index, column in enumerate(columns):
        if column.label.plain in whole:
            for row in range(table.row_count):
                cell = table.get_row_at(row)[index]
                text = cell.plain if isinstance(cell, Text) else str(cell)
                assert "…" not in text and cell_len(text) <= column.width, (column, text)


@pytest.mark.asyncio
@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x32"])
async def test_every_table_fits_and_keeps_its_deciding_words_whole(
    store: Path, size: tuple[int, int]
) -> None:
    book = seeded(store)
    book.learnings.new(title="Ports must be freed before a deploy " * 2, publish=True)
    draft(book, "Retry payments with backoff and jitter, never in a tight loop")
    app = make_app(book, load_model=False)
    async with app.run_test(size=size) as pilot:
        sessions = app.query_one("#sessions-table", DataTable)
        await settle(pilot, lambda: sessions.row_count == 1)
        await pilot.pause()
        assert {"project", "last activity", "status"} <= set(shown(sessions))
        fits_and_whole(sessions, {"status", "last activity"})

        await pilot.press("2")
        actions = app.query_one("#actions-table", DataTable)
        await settle(pilot, lambda: actions.row_count == 2)
        await pilot.pause()
        assert {"time", "type", "outcome"} <= set(shown(actions))
        if size[0] >= 120:
            assert "error" in shown(actions)
        fits_and_whole(actions, {"outcome", "type", "time"})
        assert not any(".000" in str(c) for r in range(2) for c in actions.get_row_at(r))

        await pilot.press("3")
        learned = app.query_one("#learn-results", DataTable)
        await settle(pilot, lambda: learned.row_count == 1)
        await pilot.pause()
        assert "stale" in shown(learned)
        fits_and_whole(learned, {"stale"})

        await pilot.press("4")
        drafts = app.query_one("#drafts-table", DataTable)
        await settle(pilot, lambda: drafts.row_count == 1)
        await pilot.pause()
        fits_and_whole(drafts, {"created"})
        await pilot.press("a")
        await settle(pilot, lambda: isinstance(app.screen, Ask))
        await pilot.pause()
        label = app.screen.query_one(Label)
        question = app.screen.question  # type: ignore[attr-defined]
        assert "branch for a pull request" in question
        lines = Text(question).wrap(Console(width=200), label.content_size.width)
        assert len(lines) <= label.content_size.height  # every line of it on screen
        assert label.region.right <= size[0]
        await pilot.press("escape")

        await pilot.press("5")
        await pilot.pause()
        failures = app.query_one("#report-failures", Sparkline)
        assert list(failures.data or []) and max(failures.data or [0]) == 1
        days = str(app.query_one("#report-days", Static).render())
        assert days.split() and len(days) <= app.query_one("#report-days").size.width
        assert "Failures per day" in str(app.query_one("#report-failures-title").render())


@pytest.mark.asyncio
@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x32"])
async def test_a_resize_lays_the_columns_out_again(store: Path, size: tuple[int, int]) -> None:
    book = seeded(store)
    app = make_app(book, load_model=False)
    async with app.run_test(size=size) as pilot:
        sessions = app.query_one("#sessions-table", DataTable)
        await settle(pilot, lambda: sessions.row_count == 1)
        await pilot.resize_terminal(60, 20)
        await settle(pilot, lambda: sum(c.width + 2 for c in sessions.ordered_columns)
                     <= sessions.size.width)  # fmt: skip
        fits_and_whole(sessions, {"status"})
