"""Tab 5, reports: the last 7 or 30 days (`t` switches) as a chart (actions, and failures
below them, over labelled days) and `lore report`'s text."""

from __future__ import annotations

from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import Label, Sparkline, Static

from lorebook import Lorebook
from lorebook.render.report import day_axis, render_text

PERIODS = (7, 30)


class ReportsTab(VerticalScroll):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("t", "switch_period", "7/30 days")]

    def __init__(self, book: Lorebook, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.book = book
        self.days = PERIODS[0]
        self.days_shown: list[str] = []

    def compose(self) -> ComposeResult:
        yield Label(id="report-title")
        yield Sparkline([], id="report-chart")
        yield Label(id="report-failures-title")
        yield Sparkline([], id="report-failures")
        yield Static(id="report-days")
        yield Static(id="report-text")

    def on_show(self) -> None:
        self.reload()

    def reload(self) -> None:
        report = self.book.report(days=self.days)
        by_day = report.get("by_day", [])
        per_day = [int(d["count"]) for d in by_day]
        failed = [int(d.get("failure", 0)) for d in by_day]
        self.query_one("#report-title", Label).update(
            f"Actions per day, last {self.days} days (max {max(per_day, default=0)}) — "
            "`t` switches 7/30"
        )
        self.query_one("#report-chart", Sparkline).data = per_day
        self.query_one("#report-failures-title", Label).update(
            f"Failures per day (max {max(failed, default=0)}, {sum(failed)} in all)"
        )
        self.query_one("#report-failures", Sparkline).data = failed
        self.days_shown = [str(d["day"]) for d in by_day]
        self.label_days()
        self.query_one("#report-text", Static).update(render_text(report))

    def label_days(self) -> None:
        chart = self.query_one("#report-chart", Sparkline)
        self.query_one("#report-days", Static).update(
            day_axis(self.days_shown, chart.size.width or self.app.size.width - 2)
        )

    def on_resize(self) -> None:
        if self.days_shown:
            self.label_days()

    def action_switch_period(self) -> None:
        self.days = PERIODS[(PERIODS.index(self.days) + 1) % len(PERIODS)]
        self.reload()
