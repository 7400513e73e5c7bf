"""Tab 6, expertise: each domain, its YAML highlighted, `v` validates against the code."""

from __future__ import annotations

from typing import Any, ClassVar

import yaml
from rich.syntax import Syntax
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import DataTable, Static

from lorebook import Lorebook, LoreError
from lorebook.render.expertise import update

from .data import failure, selected_key
from .messages import StoreChanged


class ExpertiseTab(Vertical):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("v", "validate", "Validate")]

    def __init__(self, book: Lorebook, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.book = book
        self.validated: dict[str, str] = {}  # domain -> its last validation's summary
        self.last: dict[str, str] = {}  # domain -> when it was last validated, as listed

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield DataTable(id="domains", cursor_type="row", zebra_stripes=True)
            with VerticalScroll(id="expertise-pane"):
                yield Static(id="expertise-summary", classes="status")
                yield Static(id="expertise-yaml")

    def on_mount(self) -> None:
        self.query_one(DataTable).add_columns("domain", "lines", "validated")

    def on_show(self) -> None:
        if not self.query_one(DataTable).row_count:
            self.reload()

    def reload(self) -> None:
        table = self.query_one(DataTable)
        table.clear()
        for row in self.book.expertise.list_domains():
            exists = row.get("exists")
            self.last[row["domain"]] = str(row.get("last_validated") or "never")
            table.add_row(
                row["domain"],
                str(row.get("lines", "-")) if exists else "no file",
                str(row.get("last_validated") or "-")[:10],  # the day; the pane says more
                key=row["domain"],
            )

    def selected(self) -> str | None:
        return selected_key(self.query_one(DataTable))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.show(str(event.row_key.value))

    def show(self, domain: str) -> None:
        """The domain's YAML, and a status line about this domain (never the one before)."""
        self.put_summary(domain, self.validated.get(domain))
        pane = self.query_one("#expertise-yaml", Static)
        try:
            content = self.book.expertise.get(domain)
        except LoreError as exc:
            pane.update(failure(exc, self.book))
            return
        text = yaml.safe_dump(content, sort_keys=False, allow_unicode=True, width=76)
        pane.update(Syntax(text, "yaml", word_wrap=True))

    def action_validate(self) -> None:
        domain = self.selected()
        if domain is not None:
            self.validate(domain)

    def put_summary(self, domain: str, summary: str | None) -> None:
        """On the app's thread: the status line of `domain`, if it is still the one selected
        (a validation that ends after the cursor moved on only keeps its result for later);
        the tab may have closed (app quitting) while a worker ran."""
        if summary is not None:
            self.validated[domain] = summary
        if self.selected() not in (domain, None):
            return
        text = summary or f"{domain}: last validated {self.last.get(domain, 'never')} · v validates"
        for pane in self.query("#expertise-summary").results(Static):
            pane.update(text)

    @work(thread=True, exclusive=True, group="validate")
    def validate(self, domain: str) -> None:
        try:
            results = self.book.expertise.validate(domain)
        except LoreError as exc:
            self.app.call_from_thread(self.app.notify, failure(exc, self.book), severity="error")
            return
        summary = "\n".join(
            update(r, "validated") if r["status"] == "validated" else f"{r['path']}: no file yet"
            for r in results
        )
        self.app.call_from_thread(self.put_summary, domain, summary)
        if self.selected() == domain:
            self.app.call_from_thread(self.show, domain)
        self.app.call_from_thread(self.post_message, StoreChanged("expertise"))
