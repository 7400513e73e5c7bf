"""Tab 1, sessions: who did what and how it ended; Enter opens a timeline, `r` a resume brief."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from rich.syntax import Syntax
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Footer, Header, Input, Markdown, Static

from lorebook import Lorebook, LoreError
from lorebook.render import timeline as waterfall
from lorebook.render.actions import resume_brief
from lorebook.render.columns import Column
from lorebook.render.progress import progress_status

from .data import (
    OUTCOME_STYLE,
    STATUS_STYLE,
    Collector,
    failure,
    focus_now,
    parse_session_filters,
    pretty_record,
    selected_key,
    short_ts,
)
from .messages import StoreWarnings
from .tables import FitTable, Row, fill_table

if TYPE_CHECKING:
    from lorebook import Timeline, TimelineRow

PAGE = 500  # timeline rows in the table at a time
TEXT_MIN = 32  # a timeline row's text keeps this many columns before the bar has any
SESSIONS_PAGE = 200
BUILD_POLL = 0.5  # seconds between looks at a background catalog build
EMPTY = "No sessions yet: agents start them with `lore log`; try `lore demo DIR` for a sample."
FILTER_HINT = "filter: project= agent= status= since=7d until= words (enter)"
COLUMNS = ("project", "agent", "started", "last activity", "actions", "status")
FIRST_DESCENDING = {"started", "last activity", "actions"}  # newest / most first
# at 80 columns "started" goes first, then the count and the agent; a project may be cut
FITS = {
    "project": Column("project", narrowest=8),
    "agent": Column("agent", priority=1),
    "started": Column("started", priority=3),
    "actions": Column("actions", priority=2),
}


def sort_value(session: Any, column: int) -> tuple[bool, Any]:
    """A session's value in `COLUMNS[column]`, sortable (missing values last)."""
    value = (
        session.project,
        session.agent,
        session.started,
        session.last_activity,
        session.action_count,
        session.status,
    )[column]
    return (value is None, value if value is not None else "")


class SessionsTab(Vertical):
    """The sessions table (most recently active first), a filter, and a status line."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open", "Timeline"),
        Binding("r", "resume", "Resume brief"),
        Binding("slash", "filter", "Filter"),
        Binding("s", "sort", "Sort"),
        Binding("S", "reverse", "Reverse", show=False),
        Binding("escape", "leave_filter", "Back to the table", show=False),
        Binding("n", "next_page", "Next page", show=False),
        Binding("p", "previous_page", "Prev page", show=False),
    ]

    def __init__(self, book: Lorebook, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.book = book
        self.sessions: list[Any] = []
        self.complete = False  # False: `sessions` is the first page (and one more) only
        self.page = 0
        self.loaded = False
        self.filters: dict[str, str] = {}
        self.sort: tuple[int, bool] | None = None  # (column, descending); None: last active
        self.partial: str | None = None  # the days read while the catalog is being built
        self.step: tuple[str, int, int] | None = None  # the build's last progress report
        self.watch: Any = None

    def compose(self) -> ComposeResult:
        yield Input(placeholder=FILTER_HINT, id="sessions-filter")
        yield Static("", id="sessions-status", classes="status")
        yield Static(EMPTY, id="sessions-empty", classes="empty")  # shown once read and empty
        yield FitTable(id="sessions-table", cursor_type="row", zebra_stripes=True, fits=FITS)

    def on_mount(self) -> None:
        self.query_one(DataTable).add_columns(*COLUMNS)
        self.query_one("#sessions-empty").display = False
        self.book.on_progress(self.heard)  # before the build starts: it reports from a thread
        try:
            building = self.book.build_catalog_in_background(long_only=True)
        except LoreError as exc:
            self.app.notify(failure(exc, self.book), severity="warning")
            building = False
        if building:
            self.watch = self.set_interval(BUILD_POLL, self.check_build)
        self.show_status()
        self.reload()

    def heard(self, task: str, done: int, total: int) -> None:
        """The library's progress callback (any thread): kept for the next status line."""
        self.step = (task, done, total)

    def check_build(self) -> None:
        """While the catalog is built: its progress; once built: every session, read again."""
        if self.book.catalog_building:
            self.show_status()
            return
        self.watch.stop()
        self.step = None
        self.reload()

    def show_status(self) -> None:
        parts: list[str] = []
        if self.book.catalog_building:
            step = progress_status(*self.step) if self.step else "Building the action catalog…"
            parts.append(f"{step} in the background")
            if self.partial:  # `7d`, or the newest day a dense log's first read starts at
                days = self.partial.removesuffix("d")
                parts.append(f"last {days} days" if days.isdigit() else f"since {self.partial}")
        elif self.loaded:  # while building, the line has no room for the count
            count = f"{len(self.sessions)}" if self.complete else f"over {SESSIONS_PAGE}"
            parts.append(f"{count} session(s)")
        if self.sort is not None:
            column, descending = self.sort
            parts.append(f"by {COLUMNS[column]} {'↓' if descending else '↑'}")
        self.query_one("#sessions-status", Static).update(" · ".join(parts))

    def query_args(self) -> dict[str, Any]:
        """The filter's arguments for `Lorebook.sessions`; while the catalog is built, only
        the last days (`Lorebook.partial_window`) unless the filter names a `since`."""
        args: dict[str, Any] = dict(self.filters)
        since, _ = self.book.partial_window()
        self.partial = since if since and "since" not in args else None
        if self.partial:
            args["since"] = self.partial
        return args

    @work(thread=True, exclusive=True, group="sessions")
    def reload(self) -> None:
        """Read the first page of sessions off the UI thread (the frame paints first); a
        store of two years holds tens of thousands, read only when `n` pages past them (or a
        sort asks for all of them)."""
        problems = Collector()
        limit = None if self.sort is not None else SESSIONS_PAGE + 1
        try:
            args = self.query_args()
            sessions = self.book.sessions(limit=limit, on_problem=problems, **args)
        except LoreError as exc:
            self.app.call_from_thread(self.app.notify, failure(exc, self.book), severity="error")
            return
        self.app.call_from_thread(self.fill, sessions, problems.lines, complete=limit is None)

    @work(thread=True, exclusive=True, group="sessions")
    def read_all(self, page: int) -> None:
        """Every matching session, once, when the user pages past the first page."""
        try:
            sessions = self.book.sessions(**self.query_args())
        except LoreError as exc:
            self.app.call_from_thread(self.app.notify, failure(exc, self.book), severity="error")
            return
        self.app.call_from_thread(self.fill, sessions, [], page=page, complete=True)

    def fill(
        self, sessions: list[Any], problems: list[str], *, page: int = 0, complete: bool = False
    ) -> None:
        if problems:
            self.post_message(StoreWarnings("sessions", problems))
        self.loaded = True
        if self.sort is not None:
            column, descending = self.sort
            sessions = sorted(sessions, key=lambda s: sort_value(s, column), reverse=descending)
        self.sessions = sessions
        self.complete = complete or len(sessions) <= SESSIONS_PAGE
        self.show_page(page)
        empty = self.query_one("#sessions-empty", Static)
        if self.filters:
            empty.update("No sessions match the filter (escape, then / to change it).")
        elif self.partial:
            empty.update(f"No sessions in the last {self.partial.removesuffix('d')} days yet.")
        else:
            empty.update(EMPTY)
        empty.display = not sessions
        self.show_status()

    def show_page(self, page: int) -> None:
        """`SESSIONS_PAGE` sessions from `page` on, most recently active first (a table
        measures every cell it holds)."""
        self.page = page
        rows: list[Row] = []
        for s in self.sessions[page * SESSIONS_PAGE : (page + 1) * SESSIONS_PAGE]:
            status = s.status + (f" ({s.end_reason})" if s.end_reason else "")
            cells = (
                s.project or "-",
                s.agent or "-",
                short_ts(s.started),
                short_ts(s.last_activity),
                str(s.action_count),
                Text(status, style=STATUS_STYLE.get(s.status, "")),
            )
            rows.append((cells, s.id))
        fill_table(self.query_one(DataTable), rows)
        if len(self.sessions) > SESSIONS_PAGE:
            total = f"{len(self.sessions)}" if self.complete else f"over {SESSIONS_PAGE}"
            self.app.sub_title = f"{total} sessions · page {page + 1} (n/p) · {self.book.root}"

    def action_filter(self) -> None:
        focus_now(self.query_one(Input))

    def action_leave_filter(self) -> None:
        self.query_one(DataTable).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        try:
            self.filters = parse_session_filters(event.value)
        except LoreError as exc:
            self.app.notify(failure(exc, self.book), severity="error")
            return
        self.query_one(DataTable).focus()
        self.reload()

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        event.stop()
        column = COLUMNS.index(str(event.column_key.value))  # a narrow table leaves some out
        if self.sort is not None and self.sort[0] == column:
            self.action_reverse()
        else:
            self.sort_by(column, COLUMNS[column] in FIRST_DESCENDING)

    def action_sort(self) -> None:
        """The next column (after the last one: most recently active first again)."""
        column = 0 if self.sort is None else self.sort[0] + 1
        if column >= len(COLUMNS):
            self.sort = None
            self.reload()
        else:
            self.sort_by(column, COLUMNS[column] in FIRST_DESCENDING)

    def action_reverse(self) -> None:
        if self.sort is not None:
            self.sort_by(self.sort[0], not self.sort[1])

    def sort_by(self, column: int, descending: bool) -> None:
        self.sort = (column, descending)
        if self.complete:  # all of them are here: no need to read them again
            self.fill(self.sessions, [], complete=True)
        else:
            self.reload()

    def action_next_page(self) -> None:
        if not self.complete:
            self.app.notify("reading every session…", timeout=2)
            self.read_all(self.page + 1)
        elif (self.page + 1) * SESSIONS_PAGE < len(self.sessions):
            self.show_page(self.page + 1)

    def action_previous_page(self) -> None:
        if self.page:
            self.show_page(self.page - 1)

    def selected(self) -> str | None:
        return selected_key(self.query_one(DataTable))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open()

    def action_open(self) -> None:
        session = self.selected()
        if session:
            self.app.push_screen(TimelineScreen(self.book, session))

    def action_resume(self) -> None:
        session = self.selected()
        if session:
            self.app.push_screen(ResumeScreen(self.book, session))


class TimelineScreen(Screen[None]):
    """One session as a tree (tracked steps and subagents under their parent), oldest first:
    each row's outcome mark, what it was, how long it took and a bar placed by its start, like
    a trace waterfall; the selected row's records beside it. Only a page of the visible rows is
    in the table at a time (a table measures every cell it holds)."""

    CSS = "#timeline { width: 3fr; }"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("space", "fold", "Fold"),
        Binding("r", "resume", "Resume brief"),
        Binding("n", "next_page", "Next page"),
        Binding("p", "previous_page", "Prev page"),
    ]

    def __init__(self, book: Lorebook, session: str) -> None:
        super().__init__()
        self.book = book
        self.session = session
        self.timeline: Timeline | None = None
        self.folded_rows: set[int] = set()  # indices (in the tree's rows) of folded rows
        self.shown: list[int] = []  # indices of the rows not under a folded one
        self.rows: list[TimelineRow] = []  # the rows of the page on screen
        self.page = 0
        self.columns = (0, 0, 0)  # the widths the page on screen was laid out for
        self.detail_text = ""

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal():
            yield DataTable(id="timeline", cursor_type="row", zebra_stripes=True)
            with VerticalScroll(id="detail-pane"):
                yield Static(id="detail")
        yield Footer()

    def on_mount(self) -> None:
        self.title = f"session {self.session}"
        problems = Collector()
        self.timeline = self.book.timeline(self.session, on_problem=problems)
        self.unfold()
        self.show_page(0)
        if problems.lines:
            self.app.notify("\n".join(problems.lines[:5]), title="skipped", severity="warning")
        self.query_one(DataTable).focus()

    def unfold(self) -> None:
        """The visible rows: every row but those under a folded one."""
        rows = self.timeline.rows if self.timeline else []
        visible: list[int] = []
        n = 0
        while n < len(rows):
            visible.append(n)
            n = rows[n].last + 1 if n in self.folded_rows else n + 1
        self.shown = visible

    def widths(self) -> tuple[int, int, int]:
        """(text, duration, bar) column widths for the table's width: the text keeps
        TEXT_MIN columns, the bar takes up to a third of the room (none when too narrow)."""
        table = self.query_one(DataTable)
        width = table.size.width or (self.app.size.width * 3) // 4  # before the first layout
        room = max(width - 2 - 3 * 2, TEXT_MIN)  # its scrollbar, each column's padding
        took = 7  # `30m 40s`
        bar = waterfall.bar_width(min(room - took - TEXT_MIN, room // 3))
        return room - took - bar, took, bar

    def show_page(self, page: int, cursor: int = 0) -> None:
        """The visible rows `page * PAGE` onwards."""
        assert self.timeline is not None
        self.page = page
        shown = self.shown[page * PAGE : (page + 1) * PAGE]
        self.rows = [self.timeline.rows[n] for n in shown]
        text_w, took_w, bar_w = self.columns = self.widths()
        table = self.query_one(DataTable)
        table.clear(columns=True)
        table.add_column("action", width=text_w)
        table.add_column("took", width=took_w)
        if bar_w:
            table.add_column("waterfall", width=bar_w)
        span = self.timeline.span
        for n, row in zip(shown, self.rows, strict=True):
            style = OUTCOME_STYLE.get(row.outcome or "", "")
            line = waterfall.label(row, n in self.folded_rows)
            text = Text(line if len(line) <= text_w else line[: text_w - 1] + "…")
            at = waterfall.mark_at(row)
            text.stylize(f"bold {style}" if style else "", at, at + 1)
            if row.failed:
                text.stylize("red")
            cells: list[Any] = [text, Text(waterfall.took(row), justify="right")]
            if bar_w:
                cells.append(Text(waterfall.bar(row.start, row.duration, span, bar_w), style))
            table.add_row(*cells, key=str(n))
        if self.rows:
            table.move_cursor(row=min(cursor, len(self.rows) - 1))
        pages = max(1, -(-len(self.shown) // PAGE))
        failed = sum(1 for row in self.timeline.rows if row.failed)
        parts = [f"{sum(len(r.records) for r in self.timeline.rows)} actions"]
        if self.timeline.span:
            parts.append(waterfall.length(self.timeline.span))
        if failed:
            parts.append(f"{failed} failed")
        self.sub_title = " · ".join([*parts, f"page {page + 1} of {pages}"])

    def on_resize(self) -> None:
        self.call_after_refresh(self.fit)

    def fit(self) -> None:
        """The page laid out again when the table's width changed the columns'."""
        if self.timeline is not None and self.widths() != self.columns:
            self.show_page(self.page, self.query_one(DataTable).cursor_row)

    def action_next_page(self) -> None:
        if (self.page + 1) * PAGE < len(self.shown):
            self.show_page(self.page + 1)

    def action_previous_page(self) -> None:
        if self.page:
            self.show_page(self.page - 1)

    def action_fold(self) -> None:
        """Fold or unfold the row under the cursor (one with children), keeping it there."""
        key = selected_key(self.query_one(DataTable))
        if key is None or self.timeline is None or not self.timeline.rows[int(key)].children:
            return
        n = int(key)
        self.folded_rows ^= {n}
        self.unfold()
        at = self.shown.index(n)
        self.show_page(at // PAGE, at % PAGE)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_fold()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if 0 <= event.cursor_row < len(self.rows):
            records = self.rows[event.cursor_row].records
            self.detail_text = "\n".join(pretty_record(record) for record in records)
            self.query_one("#detail", Static).update(Syntax(self.detail_text, "json"))

    def action_resume(self) -> None:
        self.app.push_screen(ResumeScreen(self.book, self.session))


class ResumeScreen(ModalScreen[None]):
    """`lore resume --session ID` as Markdown, scrolled by the keys as soon as it opens."""

    AUTO_FOCUS = "#resume"  # the app's own (its sessions table) is not on this screen
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,r,q", "app.pop_screen", "Close")]

    def __init__(self, book: Lorebook, session: str) -> None:
        super().__init__()
        self.book = book
        self.session = session

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="resume"):
            yield Markdown(resume_brief(self.book.resume(session=self.session)))
        yield Footer()
