"""Which table columns fit a width, and how wide each is: one rule for every table of the TUI.

Each column has a priority (0: always shown; a higher number goes first when space runs out)
and, for free text (titles, projects, errors), a narrowest width it may be cut to with an
ellipsis. Words a reader decides by (an outcome, a status, a stale flag) are never cut: their
column is shown whole or not at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

PAD = 2  # a DataTable pads each cell by one on either side


class Column(NamedTuple):
    name: str
    priority: int = 0  # 0: always; higher numbers are dropped first
    narrowest: int | None = None  # free text: may be cut to this many cells (None: never cut)


def fit(columns: Sequence[Column], natural: Sequence[int], width: int) -> list[int | None]:
    """Each column's width at `width` cells (None: left out). While the kept columns do not
    fit even with free text cut to its narrowest, the highest priority number goes (the
    rightmost among equals; priority 0 always stays); then free text gives up what is still
    too much, the widest first."""
    kept = [True] * len(natural)

    def least(i: int) -> int:
        narrowest = columns[i].narrowest
        return natural[i] if narrowest is None else min(natural[i], narrowest)

    while sum(least(i) + PAD for i in range(len(kept)) if kept[i]) > width:
        droppable = [i for i, column in enumerate(columns) if kept[i] and column.priority]
        if not droppable:
            break
        kept[max(droppable, key=lambda i: (columns[i].priority, i))] = False
    widths = list(natural)
    over = sum(widths[i] + PAD for i in range(len(kept)) if kept[i]) - width
    while over > 0:
        cuttable = [i for i in range(len(kept)) if kept[i] and widths[i] > least(i)]
        if not cuttable:
            break
        i = max(cuttable, key=lambda i: widths[i])
        step = min(over, widths[i] - least(i))
        widths[i] -= step
        over -= step
    return [w if k else None for w, k in zip(widths, kept, strict=True)]
