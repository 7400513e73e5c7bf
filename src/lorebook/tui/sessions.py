"""Tab 1, sessions: who did what and how it ended; Enter opens a timeline, `r` a resume brief."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.syntax import Syntax
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Footer, Header, Markdown, Static

from lorebook import Lorebook, LoreError
from lorebook.render.actions import resume_brief

from .data import (
    OUTCOME_STYLE,
    STATUS_STYLE,
    Collector,
    duration,
    failure,
    pretty_record,
    selected_key,
    short_ts,
)
from .messages import StoreWarnings
from .tables import Row, fill_table

PAGE = 500  # timeline rows in the table at a time
SESSIONS_PAGE = 200
EMPTY = "No sessions yet: agents start them with `lore log`; try `lore demo DIR` for a sample."


class SessionsTab(Vertical):
    """The sessions table (most recently active first)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open", "Timeline"),
        Binding("r", "resume", "Resume brief"),
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

    def compose(self) -> ComposeResult:
        yield DataTable(id="sessions-table", cursor_type="row", zebra_stripes=True)
        yield Static(EMPTY, id="sessions-empty", classes="empty")  # shown once read and empty

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("project", "agent", "started", "last activity", "actions", "status")
        self.query_one("#sessions-empty").display = False
        self.reload()

    @work(thread=True, exclusive=True, group="sessions")
    def reload(self) -> None:
        """Read the first page of sessions off the UI thread (the frame paints first); a
        store of two years holds tens of thousands, read only when `n` pages past them."""
        problems = Collector()
        try:
            sessions = self.book.sessions(limit=SESSIONS_PAGE + 1, on_problem=problems)
        except LoreError as exc:
            self.app.call_from_thread(self.app.notify, failure(exc, self.book), severity="error")
            return
        self.app.call_from_thread(self.fill, sessions, problems.lines)

    @work(thread=True, exclusive=True, group="sessions")
    def read_all(self, page: int) -> None:
        """Every session, once, when the user pages past the first page."""
        try:
            sessions = self.book.sessions()
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
        self.sessions = sessions
        self.complete = complete or len(sessions) <= SESSIONS_PAGE
        self.show_page(page)
        self.query_one("#sessions-empty").display = not sessions
        self.query_one(DataTable).display = bool(sessions)

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
    """One session's actions, oldest first, with the selected action's context."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("r", "resume", "Resume brief"),
        Binding("n", "next_page", "Next page"),
        Binding("p", "previous_page", "Prev page"),
    ]

    def __init__(self, book: Lorebook, session: str) -> None:
        super().__init__()
        self.book = book
        self.session = session
        self.records: list[dict[str, Any]] = []
        self.rows: list[dict[str, Any]] = []
        self.page = 0
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
        table = self.query_one(DataTable)
        table.add_columns("time", "type", "outcome", "duration", "epic")
        problems = Collector()
        self.records = self.book.actions(session=self.session, limit=None, on_problem=problems)
        self.records.reverse()  # oldest first
        self.show_page(0)
        if problems.lines:
            self.app.notify("\n".join(problems.lines[:5]), title="skipped", severity="warning")
        table.focus()

    def show_page(self, page: int) -> None:
        """Rows `page * PAGE` onwards: a table measures every cell it holds, so a session of
        10,000 actions is shown a page at a time."""
        self.page = page
        self.rows = self.records[page * PAGE : (page + 1) * PAGE]
        table = self.query_one(DataTable)
        table.clear()
        table.add_rows(
            (
                short_ts(record.get("ts"))[11:],
                record.get("type") or "-",
                Text(
                    record.get("outcome") or "-",
                    style=OUTCOME_STYLE.get(record.get("outcome") or "", ""),
                ),
                duration(record.get("duration_s")),
                record.get("epic") or "-",
            )
            for record in self.rows
        )
        pages = max(1, -(-len(self.records) // PAGE))
        self.sub_title = f"{len(self.records)} actions · page {page + 1} of {pages}"

    def action_next_page(self) -> None:
        if (self.page + 1) * PAGE < len(self.records):
            self.show_page(self.page + 1)

    def action_previous_page(self) -> None:
        if self.page:
            self.show_page(self.page - 1)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if 0 <= event.cursor_row < len(self.rows):
            record = self.rows[event.cursor_row]
            self.detail_text = pretty_record(record)
            self.query_one("#detail", Static).update(Syntax(self.detail_text, "json"))

    def action_resume(self) -> None:
        self.app.push_screen(ResumeScreen(self.book, self.session))


class ResumeScreen(ModalScreen[None]):
    """`lore resume --session ID` as Markdown."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,r,q", "app.pop_screen", "Close")]

    def __init__(self, book: Lorebook, session: str) -> None:
        super().__init__()
        self.book = book
        self.session = session

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="resume"):
            yield Markdown(resume_brief(self.book.resume(session=self.session)))
        yield Footer()
