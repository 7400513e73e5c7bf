"""Tab 2, actions: filtered, paged from the catalog (one page in the widget at a time), and
following new lines as agents append them."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.syntax import Syntax
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import DataTable, Input, Static

from lorebook import Lorebook, LoreError
from lorebook.render.columns import Column
from lorebook.render.report import duration, one_line

from .data import (
    OUTCOME_STYLE,
    Boundary,
    Collector,
    failure,
    focus_now,
    page_after,
    parse_filters,
    pretty_record,
    short_ts,
)
from .messages import StoreWarnings
from .tables import FitTable, Row, fill_table

PAGE = 200


def seconds(value: Any) -> str:
    """A record's `duration_s` as reports print it (`30m 40s`); "-" when it has none."""
    number = isinstance(value, int | float) and not isinstance(value, bool)
    return duration(float(value) if number else None)


COLUMNS = ("time", "agent", "type", "outcome", "dur", "project", "error", "epic")
# time, type and outcome always; then the error (cut first), the agent, the project, …
FITS = {
    "error": Column("error", priority=1, narrowest=10),
    "agent": Column("agent", priority=2),
    "project": Column("project", priority=3, narrowest=8),
    "dur": Column("dur", priority=4),
    "epic": Column("epic", priority=5, narrowest=8),
}
FOLLOW_EVERY = 1.0  # seconds between looks for new lines
HINT = "filter: type=deploy outcome=failure project=… epic=… since=7d until=2026-11-01"


class ActionsTab(Vertical):
    """A page of actions, newest first; `n`/`p` page, `f` toggles following, `/` filters."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "focus_filter", "Filter"),
        Binding("escape", "leave_filter", "Table", show=False),
        Binding("n", "next_page", "Next page"),
        Binding("p", "previous_page", "Prev page"),
        Binding("f", "toggle_follow", "Follow"),
    ]

    def __init__(self, book: Lorebook, *, follow_every: float = FOLLOW_EVERY, **kwargs: Any):
        super().__init__(**kwargs)
        self.book = book
        self.follow_every = follow_every
        self.filters: dict[str, Any] = {}
        self.page = 0
        self.boundaries: list[Boundary | None] = [None]  # page k: the actions after boundary k
        self.records: dict[str, dict[str, Any]] = {}
        self.newest: str | None = None  # id of the newest action shown on page 0
        self.following = True
        self.started = False
        self.warned: set[str] = set()  # skipped lines already reported (each query finds them)

    def compose(self) -> ComposeResult:
        yield Input(placeholder=HINT, id="actions-filter")
        with Horizontal():
            yield FitTable(id="actions-table", cursor_type="row", zebra_stripes=True, fits=FITS)
            with VerticalScroll(id="action-detail-pane"):
                yield Static(id="action-detail")
        yield Static(id="actions-status", classes="status")

    def on_mount(self) -> None:
        self.query_one(DataTable).add_columns(*COLUMNS)

    def on_show(self) -> None:
        """Rows are read when the tab is first shown, not at start (first paint stays fast)."""
        if not self.started:
            self.started = True
            self.load(0)
            self.set_interval(self.follow_every, self.look_for_new)

    # -- paging ----------------------------------------------------------------------------
    def load(self, page: int, filters: dict[str, Any] | None = None) -> bool:
        """Show page `page` of `filters` (default: the current ones); False, with a message and
        nothing changed, when the filters are refused or there is no such page. Each page is
        its own keyset query from the boundary the page before ended on (no open cursor)."""
        filters = self.filters if filters is None else filters
        if filters is self.filters and page >= len(self.boundaries):
            self.app.notify("no more actions", timeout=2)  # the page before was empty
            return False
        boundary = self.boundaries[page] if filters is self.filters else None
        problems = Collector()
        try:
            rows = page_after(self.book, filters, boundary, PAGE, problems)
        except LoreError as exc:
            kept = "" if filters is self.filters else " (the filters are unchanged)"
            self.app.notify(f"{failure(exc, self.book)}{kept}", title="filter", severity="error")
            return False
        if not rows and page:
            self.app.notify("no more actions", timeout=2)
            return False
        if filters is not self.filters:
            self.filters = filters
            self.boundaries = [None]
        self.page = page
        del self.boundaries[page + 1 :]
        if rows:
            self.boundaries.append((rows[-1]["ts"], rows[-1]["id"]))
        self.fill(rows)
        fresh = [line for line in problems.lines if line not in self.warned]
        if fresh:
            self.warned.update(fresh)
            self.post_message(StoreWarnings("actions", fresh))
        return True

    def fill(self, rows: list[dict[str, Any]]) -> None:
        self.records = {}
        cells: list[Row] = []
        for record in rows:
            self.records[record["id"]] = record
            outcome = record.get("outcome") or "-"
            cells.append(
                (
                    (
                        short_ts(record.get("ts"))[5:],  # the year is in the detail pane
                        record.get("agent") or "-",
                        record.get("type") or "-",
                        Text(outcome, style=OUTCOME_STYLE.get(outcome, "")),
                        seconds(record.get("duration_s")),
                        record.get("project") or "-",
                        one_line(record.get("error")),
                        record.get("epic") or "-",
                    ),
                    record["id"],
                )
            )
        fill_table(self.query_one(DataTable), cells)
        if self.page == 0:
            self.newest = rows[0]["id"] if rows else None
        self.show_status(len(rows))

    def show_status(self, count: int) -> None:
        first = self.page * PAGE + 1
        shown = f"rows {first}-{first + count - 1}" if count else "no matching actions"
        if not count and not self.filters and not self.page:
            shown = "no actions yet: agents append them with `lore log` (or try `lore demo DIR`)"
        follow = "following" if self.following and self.page == 0 else "paused"
        filters = " ".join(f"{k}={v}" for k, v in self.filters.items()) or "none"
        self.query_one("#actions-status", Static).update(
            f"{shown} · page {self.page + 1} · filters: {filters} · {follow}"
        )

    def action_next_page(self) -> None:
        self.load(self.page + 1)

    def action_previous_page(self) -> None:
        if self.page:
            self.load(self.page - 1)

    # -- filtering -------------------------------------------------------------------------
    def action_focus_filter(self) -> None:
        focus_now(self.query_one(Input))

    def action_leave_filter(self) -> None:
        self.query_one(DataTable).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Apply a filter only once it has answered: a refused one leaves the previous filters
        (and the live follow) as they were."""
        event.stop()
        try:
            filters = parse_filters(event.value)
        except LoreError as exc:
            self.app.notify(
                f"{failure(exc, self.book)} (the filters are unchanged)",
                title="filter",
                severity="error",
            )
            return
        if self.load(0, filters):
            self.query_one(DataTable).focus()

    # -- following -------------------------------------------------------------------------
    def action_toggle_follow(self) -> None:
        self.following = not self.following
        self.show_status(len(self.records))

    def look_for_new(self) -> None:
        if self.following and self.page == 0 and self.is_mounted:
            self.check_newest()

    @work(thread=True, exclusive=True, group="follow")
    def check_newest(self) -> None:
        try:
            found = self.book.actions(limit=1, **self.filters)
        except LoreError:
            return
        newest = found[0]["id"] if found else None
        if newest != self.newest:
            self.app.call_from_thread(self.load, 0)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        record = self.records.get(str(event.row_key.value))
        if record is not None:
            self.query_one("#action-detail", Static).update(Syntax(pretty_record(record), "json"))
