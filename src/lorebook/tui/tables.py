"""Fill a DataTable with its column widths measured at once.

A DataTable measures auto-width columns on its next idle event; rows added from a worker's
callback can be painted before that (or, on a loaded machine, left so), cut to the header's
width. Measuring here makes what is painted right the first time.

A `FitTable` also fits its width (`lorebook.render.columns.fit`): free text is cut with an
ellipsis, then the least needed columns are left out, and it is laid out again on a resize;
an outcome or a status is shown whole or not at all."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rich.cells import cell_len, set_cell_size
from rich.text import Text
from textual import events
from textual.widgets import DataTable

from lorebook.render.columns import Column, fit

Cell = str | Text
Row = tuple[Sequence[Cell], str | None]
SCROLLBAR = 2  # cells a vertical scrollbar may take


class FitTable(DataTable[Any]):
    """A DataTable whose columns fit its width; `fits` names the columns that may be cut or
    left out (any other column is always shown whole)."""

    def __init__(self, *, fits: Mapping[str, Column] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.fits = dict(fits or {})
        self.lore_headers: list[str] = []
        self.shown: Sequence[Row] = ()
        self.laid_at = 0  # the width the columns were fitted to

    def on_resize(self, event: events.Resize) -> None:
        if self.lore_headers and self.size.width != self.laid_at:
            fill_table(self, self.shown)


def cell_width(cell: Cell) -> int:
    """Terminal cells one value takes (its widest line)."""
    text = cell.plain if isinstance(cell, Text) else str(cell)
    return max((cell_len(line) for line in text.splitlines()), default=0)


def column_widths(headers: Sequence[str], cells: Iterable[Sequence[Cell]]) -> list[int]:
    """Each column as wide as its header or its widest cell."""
    widths = [cell_len(header) for header in headers]
    for row in cells:
        for i, cell in enumerate(row[: len(widths)]):
            widths[i] = max(widths[i], cell_width(cell))
    return widths


def cut(cell: Cell, width: int) -> Cell:
    """`cell` in at most `width` cells, its end an ellipsis when cut."""
    if cell_width(cell) <= width:
        return cell
    if isinstance(cell, Text):
        short = cell.copy()
        short.truncate(width, overflow="ellipsis")
        return short
    return set_cell_size(str(cell), max(width - 1, 0)) + "…"


def fill_table(table: Any, rows: Sequence[Row]) -> None:
    """Replace every row of `table` with `rows` (cells, key), its columns sized to them (and,
    for a FitTable, to its width)."""
    fitting = isinstance(table, FitTable)
    if fitting and table.lore_headers:
        headers = table.lore_headers
    else:
        headers = [column.label.plain for column in table.ordered_columns]
    widths: list[int | None] = list(column_widths(headers, (cells for cells, _ in rows)))
    if fitting:
        table.lore_headers, table.shown = headers, rows
        if table.size.width:  # once laid out; a resize fits it again
            specs = [table.fits.get(header, Column(header)) for header in headers]
            widths = fit(specs, [w or 0 for w in widths], table.size.width - SCROLLBAR)
            table.laid_at = table.size.width
    table.clear(columns=True)
    for header, width in zip(headers, widths, strict=True):
        if width is not None:
            table.add_column(header, width=width, key=header)
    for cells, key in rows:
        shown = [cut(c, w) for c, w in zip(cells, widths, strict=False) if w is not None]
        table.add_row(*shown, key=key)
