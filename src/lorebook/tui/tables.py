"""Fill a DataTable with its column widths measured at once.

A DataTable measures auto-width columns on its next idle event; rows added from a worker's
callback can be painted before that (or, on a loaded machine, left so), cut to the header's
width. Measuring here makes what is painted right the first time."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from rich.cells import cell_len
from rich.text import Text

Cell = str | Text
Row = tuple[Sequence[Cell], str | None]


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


def fill_table(table: Any, rows: Sequence[Row]) -> None:
    """Replace every row of `table` with `rows` (cells, key), its columns sized to them."""
    headers = [column.label.plain for column in table.ordered_columns]
    widths = column_widths(headers, (cells for cells, _ in rows))
    table.clear(columns=True)
    for header, width in zip(headers, widths, strict=True):
        table.add_column(header, width=width, key=header)
    for cells, key in rows:
        table.add_row(*cells, key=key)
