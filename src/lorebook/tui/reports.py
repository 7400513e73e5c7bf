"""Tab 5, reports: the last 7 or 30 days (`t` switches) as a chart and `lore report`'s text."""

from __future__ import annotations

from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import Label, Sparkline, Static

from lorebook import Lorebook
from lorebook.render.report import render_text

PERIODS = (7, 30)


class ReportsTab(VerticalScroll):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("t", "switch_period", "7/30 days")]

    def __init__(self, book: Lorebook, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.book = book
        self.days = PERIODS[0]

    def compose(self) -> ComposeResult:
        yield Label(id="report-title")
        yield Sparkline([], id="report-chart")
        yield Static(id="report-text")

    def on_show(self) -> None:
        self.reload()

    def reload(self) -> None:
        report = self.book.report(days=self.days)
        per_day = [int(d["count"]) for d in report.get("by_day", [])]
        self.query_one(Label).update(
            f"Actions per day, last {self.days} days (max {max(per_day, default=0)}) — "
            "`t` switches 7/30"
        )
        self.query_one(Sparkline).data = per_day
        self.query_one("#report-text", Static).update(render_text(report))

    def action_switch_period(self) -> None:
        self.days = PERIODS[(PERIODS.index(self.days) + 1) % len(PERIODS)]
        self.reload()
