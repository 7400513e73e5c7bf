"""Table columns are as wide as their cells the moment rows are filled, not on a later idle."""

from __future__ import annotations

from typing import Any

import pytest
from rich.text import Text
from textual.app import App, ComposeResult
from textual.widgets import DataTable

from lorebook.tui.tables import column_widths, fill_table


def test_widths_are_the_widest_of_header_and_cells() -> None:
    widths = column_widths(
        ["project", "status"], [("consilio", Text("disconnected")), ("a", "ok\nlonger line")]
    )
    assert widths == [len("consilio"), len("disconnected")]


def test_wide_characters_count_as_two_cells() -> None:
    assert column_widths(["x"], [("日本",)]) == [4]


class OneTable(App[None]):
    def compose(self) -> ComposeResult:
        yield DataTable()


@pytest.mark.asyncio
async def test_filled_columns_fit_before_any_idle() -> None:
    app = OneTable()
    async with app.run_test(size=(80, 24)):
        table: DataTable[Any] = app.query_one(DataTable)
        table.add_columns("project", "status")
        fill_table(table, [(("consilio", Text("disconnected")), "s1"), (("x", "ok"), "s2")])
        # measured now: no pause, so DataTable's own idle-time measuring has not run
        assert [c.get_render_width(table) for c in table.ordered_columns] == [
            len("consilio") + 2,
            len("disconnected") + 2,
        ]
        assert table.row_count == 2 and table.get_row("s1")[0] == "consilio"
        fill_table(table, [])
        assert table.row_count == 0
        assert [c.label.plain for c in table.ordered_columns] == ["project", "status"]
