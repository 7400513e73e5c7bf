"""The app: six tabs over one `Lorebook`. `make_app(book)` is the one factory, used by
`lore tui`, `lore tui --web` and the tests."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

from textual import events
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Footer, Header, Input, Markdown, TabbedContent, TabPane

from lorebook import Lorebook

from .actions import ActionsTab
from .data import focus_now
from .drafts import DraftsTab
from .expertise import ExpertiseTab
from .learnings import LearningsTab
from .messages import StoreChanged, StoreWarnings
from .reports import ReportsTab
from .sessions import SessionsTab

TABS = (
    ("sessions", "Sessions"),
    ("actions", "Actions"),
    ("learnings", "Learnings"),
    ("drafts", "Drafts"),
    ("reports", "Reports"),
    ("expertise", "Expertise"),
)

HELP = """\
# lore tui

| key | where | does |
|-----|-------|------|
| `1`-`6` | anywhere | sessions, actions, learnings, drafts, reports, expertise |
| `ctrl+p` | anywhere | command palette |
| `?` | anywhere | this help |
| `q` | anywhere | quit |
| `enter` | sessions | open the session's timeline (`escape` goes back) |
| `r` | sessions, timeline | the session's resume brief |
| `/` | sessions, actions, learnings | focus the filter / search box (`escape` leaves it) |
| | | sessions: `project=… agent=… status=… since=7d until=…` and words |
| | | actions: `type=deploy outcome=failure epic=… since=7d until=…` |
| `s` / `S` | sessions | sort by the next column / reverse (or click a header) |
| `n` / `p` | sessions, actions, timeline | next / previous page |
| `f` | actions | follow new actions on/off |
| `a` | drafts | approve (publish; optional branch for a pull request) |
| `x` | drafts | reject (asks for a reason) |
| `e` | drafts | edit in `$EDITOR` (in the app without one, or on the web: `ctrl+s` saves) |
| `t` | reports | switch between 7 and 30 days |
| `v` | expertise | validate the domain against the code |
"""

CSS = """
DataTable { height: 1fr; width: 1fr; }
#detail-pane, #action-detail-pane, #draft-preview-pane, #learn-preview-pane, #expertise-pane {
    width: 1fr; border-left: solid $primary-background;
}
#domains { width: 36; }
#actions-table { width: 3fr; }
#action-detail-pane { width: 2fr; }
.status { height: 1; color: $text-muted; }
.empty { padding: 1 2; color: $text-muted; }
#report-chart { height: 3; margin: 0 1; }
#report-failures { height: 2; margin: 0 1; }
#report-failures > .sparkline--max-color { color: $error; }
#report-failures > .sparkline--min-color { color: $error 50%; }
#report-days { margin: 0 1; color: $text-muted; }
#ask { width: 70; max-width: 95%; height: auto; border: round $primary; padding: 1;
       background: $panel; }
Ask, ResumeScreen, HelpScreen { align: center middle; }
#ask Label { width: 1fr; }
#resume, #help { width: 90%; height: 90%; border: round $primary; background: $panel; }
"""


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark,q", "app.pop_screen", "Close")
    ]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help"):
            yield Markdown(HELP)


class LoreApp(App[None]):
    TITLE = "lorebook"
    AUTO_FOCUS = "#sessions-table"
    CSS = CSS
    BINDINGS: ClassVar[list[BindingType]] = [
        *(
            Binding(str(n), f"show_tab('{tab}')", label, show=False)
            for n, (tab, label) in enumerate(TABS, 1)
        ),
        Binding("question_mark", "help", "Help"),
        Binding("q", "quit", "Quit"),
    ]

    def __init__(self, book: Lorebook, *, load_model: bool = True, follow_every: float = 1.0):
        super().__init__()
        self.book = book
        self.load_model = load_model
        self.follow_every = follow_every
        self.sub_title = str(book.root)

    def compose(self) -> ComposeResult:
        yield Header()
        with TabbedContent(initial="sessions"):
            with TabPane("1 Sessions", id="sessions"):
                yield SessionsTab(self.book)
            with TabPane("2 Actions", id="actions"):
                yield ActionsTab(self.book, follow_every=self.follow_every)
            with TabPane("3 Learnings", id="learnings"):
                yield LearningsTab(self.book, load_model=self.load_model)
            with TabPane("4 Drafts", id="drafts"):
                yield DraftsTab(self.book)
            with TabPane("5 Reports", id="reports"):
                yield ReportsTab(self.book)
            with TabPane("6 Expertise", id="expertise"):
                yield ExpertiseTab(self.book)
        yield Footer()

    def action_show_tab(self, tab: str) -> None:
        if not isinstance(self.screen, ModalScreen) and len(self.screen_stack) > 1:
            self.pop_screen()  # from a session's timeline, a tab key goes back to the tabs
        self.query_one(TabbedContent).active = tab
        self.focus_tab(tab)

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        """A tab chosen by a click (or the tab bar's arrows) hands the focus to its pane, where
        the pane's keys (`/`, `a`, `x`, `e`, `n`, `p` …) live: left on the tab bar, they did
        nothing, and a filter typed after `/` went nowhere. A focus already in the pane stays
        (a `/` typed right after the tab's number has put it in the pane's field). An
        activation that arrives after the app's last screen is gone (it is closing) is let go."""
        if not self.screen_stack:
            return
        focused = self.focused
        if focused is not None and event.pane in focused.ancestors:
            return
        if event.pane.id is not None:
            self.focus_tab(event.pane.id)

    def focus_tab(self, tab: str) -> None:
        pane = self.query_one(f"#{tab}", TabPane)
        for selector in (
            "DataTable",
            "Input",
            "VerticalScroll",
        ):  # a table first: digits switch tabs
            for widget in pane.query(selector):
                if widget.display and widget.can_focus:
                    focus_now(widget)
                    return

    def on_key(self, event: events.Key) -> None:
        """A printable key that reaches the app while a field has the focus was handed to the
        widget focused before (a field takes its printable keys and stops them): keys typed in
        a burst while the app was busy (a model loading), after the `/` that moved the focus.
        They were lost, or taken as hotkeys; they go to the field, in order."""
        focused = self.focused
        if isinstance(focused, Input) and event.is_printable:
            event.prevent_default()  # not the app's bindings (its own `_on_key`) either
            event.stop()
            focused._forward_event(events.Key(event.key, event.character))

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def on_store_warnings(self, message: StoreWarnings) -> None:
        shown = message.problems[:5]
        more = len(message.problems) - len(shown)
        text = "\n".join(shown) + (f"\n… and {more} more (see `lore check`)" if more else "")
        self.notify(text, title=f"{message.source}: skipped", severity="warning", timeout=8)

    def on_store_changed(self, message: StoreChanged) -> None:
        self.query_one(SessionsTab).reload()

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        for n, (tab, label) in enumerate(TABS, 1):
            yield SystemCommand(
                f"Go to {label}", f"tab {n}", lambda tab=tab: self.action_show_tab(tab)
            )
        yield SystemCommand("Approve draft", "publish the selected draft", self._approve)
        yield SystemCommand("Reject draft", "remove the selected draft", self._reject)
        yield SystemCommand("Switch report period", "7 / 30 days", self._period)
        yield SystemCommand("Validate expertise", "the selected domain", self._validate)
        yield SystemCommand("Help", "keys", self.action_help)

    def _approve(self) -> None:
        self.action_show_tab("drafts")
        self.query_one(DraftsTab).action_approve()

    def _reject(self) -> None:
        self.action_show_tab("drafts")
        self.query_one(DraftsTab).action_reject()

    def _period(self) -> None:
        self.action_show_tab("reports")
        self.query_one(ReportsTab).action_switch_period()

    def _validate(self) -> None:
        self.action_show_tab("expertise")
        self.query_one(ExpertiseTab).action_validate()


def make_app(book: Lorebook, *, load_model: bool = True, follow_every: float = 1.0) -> LoreApp:
    """The app over `book` (tests pass `load_model=False` to stay on keyword search)."""
    return LoreApp(book, load_model=load_model, follow_every=follow_every)
