"""The one column layout of every table lorebook prints.

Widths come from the cells themselves, so a long id (a ULID, an `auto-epic-…` draft, a
session id) widens its column instead of pushing the rest of its row out of line.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

Row = Sequence[object] | str  # a plain string is a full-width line under the previous row


def columns(
    headers: Sequence[str] | None, rows: Iterable[Row], *, right: Iterable[int] = ()
) -> list[str]:
    """Rows as lines: columns two spaces apart, left-aligned except the indexes in `right`;
    the last column is not padded (unless right-aligned). Plain strings pass through as they
    are and do not widen any column."""
    body: list[list[str] | str] = [
        row if isinstance(row, str) else [str(cell) for cell in row] for row in rows
    ]
    grid = [r for r in body if not isinstance(r, str)]
    if headers is not None:
        grid.insert(0, list(headers))
    if not grid:
        return [r for r in body if isinstance(r, str)]
    count = max(len(r) for r in grid)
    flush = set(right)
    widths = [0] * count
    for row in grid:
        for index, cell in enumerate(row):
            if index < count - 1 or index in flush:
                widths[index] = max(widths[index], len(cell))

    def line(row: list[str]) -> str:
        cells = [
            cell.rjust(widths[i]) if i in flush else cell.ljust(widths[i]) if i < len(row) - 1
            else cell
            for i, cell in enumerate(row)
        ]  # fmt: skip
        return "  ".join(cells).rstrip()

    out = [line(list(headers))] if headers is not None else []
    out += [r if isinstance(r, str) else line(r) for r in body]
    return out


def table(headers: Sequence[str] | None, rows: Iterable[Row], *, right: Iterable[int] = ()) -> str:
    """`columns` joined into one text."""
    return "\n".join(columns(headers, rows, right=right))
