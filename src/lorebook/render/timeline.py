"""A session's timeline rows (`Lorebook.timeline`) as lines of a trace waterfall: indentation,
an outcome mark, what it was, how long it took and a bar placed by its start in the session.

Pure: the TUI lays these into its table; the widths are the caller's.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

from ..log.report_file import duration

TYPE_CHECKING = False  # typing costs milliseconds on cold paths; mypy still sees it
if TYPE_CHECKING:
    from ..log.timeline import TimelineRow

MARKS = {"success": "✓", "failure": "✗", "blocked": "⊘", "in_progress": "…"}
OTHER_MARK = "·"
INDENT = 2  # columns per level
EIGHTHS = " ▏▎▍▌▋▊▉"  # a cell filled from the left by n/8
MIN_BAR = 4  # a narrower bar column says nothing: it is left out


def mark(outcome: str | None) -> str:
    """The outcome as one character: ✓ success, ✗ failure, ⊘ blocked, … in progress."""
    return MARKS.get(outcome or "", OTHER_MARK)


def label(row: TimelineRow, folded: bool = False) -> str:
    """`row` on one line: indented by depth, ▸/▾ when it has children (▸: folded), its
    outcome mark and what it was."""
    fold = ("▸ " if folded else "▾ ") if row.children else "  "
    return f"{' ' * (INDENT * row.depth)}{fold}{mark(row.outcome)} {row.what}"


def took(row: TimelineRow) -> str:
    """How long the row took, as reports print it (`850ms`, `30m 40s`); "-" unknown."""
    return duration(row.duration)


def length(seconds: float | None) -> str:
    """A span of seconds as reports print it."""
    return duration(seconds)


def mark_at(row: TimelineRow) -> int:
    """Where `label(row)` has its outcome mark."""
    return INDENT * row.depth + 2


def bar(start: float, length: float | None, span: float, width: int) -> str:
    """A `width`-cell bar of a row starting `start` seconds into a session of `span` seconds
    and lasting `length` (None: a moment of unknown length, one thin mark), left-padded to
    its start; at least a sliver, so a short call still shows where it was."""
    if width <= 0:
        return ""
    scale = width / span if span > 0 else 0.0
    left = min(max(start * scale, 0.0), width - 1 / 8)
    if length is None:
        cell = int(left)
        return (" " * cell + "│").ljust(width)
    right = min(max((start + length) * scale, left + 1 / 8), float(width))
    first, last = int(left * 8), int(right * 8)  # in eighths of a cell
    cells: list[str] = []
    for n in range(width):
        lo, hi = n * 8, n * 8 + 8
        filled = min(hi, last) - max(lo, first)
        if filled <= 0:
            cells.append(" ")
        elif filled >= 8:
            cells.append("█")
        elif max(lo, first) == lo:  # filled from the left edge: the bar's end
            cells.append(EIGHTHS[filled])
        else:  # the bar's start inside the cell: right-aligned blocks do not exist
            cells.append("▐" if filled >= 4 else "▕")
    return "".join(cells)


def bar_width(room: int) -> int:
    """The bar's width in `room` columns left beside the text: none when too narrow."""
    return room if room >= MIN_BAR else 0
