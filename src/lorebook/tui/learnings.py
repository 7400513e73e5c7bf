"""Tab 3, learnings: debounced live search (keyword until the model has loaded in a worker,
then hybrid), a Markdown preview with effectiveness figures and the file's git history."""

from __future__ import annotations

from typing import Any, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.timer import Timer
from textual.widgets import DataTable, Input, Markdown, Static

from lorebook import Lorebook, LoreError
from lorebook.render.columns import Column
from lorebook.render.progress import progress_status
from lorebook.render.search import relative_scores

from .data import Collector, failure, focus_now
from .messages import StoreWarnings
from .tables import FitTable, Row, fill_table

# the stale flag is never left out; the title is cut first, then success and applied go
FITS = {
    "title": Column("title", narrowest=12),
    "applied": Column("applied", priority=1),
    "success": Column("success", priority=2),
}
DEBOUNCE = 0.3  # seconds of quiet typing before a search runs
LISTING = "listing"  # the mode of what is shown with no query: the published learnings


def pct(value: float | None) -> str:
    return "n/a" if value is None else f"{round(value * 100)}%"


class LearningsTab(Vertical):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "focus_query", "Search"),
        Binding("escape", "leave_query", "Results", show=False),
    ]

    def __init__(self, book: Lorebook, *, load_model: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.book = book
        self.load_model = load_model
        self.mode = "keyword"
        self.results: dict[str, dict[str, Any]] = {}
        self.pending: Timer | None = None
        self.asked = 0  # searches started: only the last one's results are shown
        self.model_state = ""  # after the mode on the status line: loading, unavailable

    def compose(self) -> ComposeResult:
        yield Input(placeholder="search learnings…", id="learn-query")
        yield Static("search: keyword", id="learn-mode", classes="status")
        with Horizontal():
            yield FitTable(id="learn-results", cursor_type="row", zebra_stripes=True, fits=FITS)
            with VerticalScroll(id="learn-preview-pane"):
                yield Markdown(id="learn-preview")

    def on_mount(self) -> None:
        self.query_one(DataTable).add_columns(
            "match", "title", "status", "applied", "success", "stale"
        )
        if self.load_model:
            self.model_state = " (loading the model…)"
            self.label(None)
            self.warm()
        self.search("")  # what the team knows, before anything is typed

    def action_focus_query(self) -> None:
        focus_now(self.query_one(Input))

    def action_leave_query(self) -> None:
        self.query_one(DataTable).focus()

    @work(thread=True, exclusive=True, group="model")
    def warm(self) -> None:
        """Load the embedding model and bring the index up to date off the UI thread (saying
        how far an export, the load or the index build is); hybrid search once both are ready.
        Searches meanwhile answer by keywords (the index lets them: see `SearchIndex`)."""
        self.book.index.on_progress(self.model_progress)
        try:
            embedder = self.book.index.embedder()
            self.book.index.update()
            mode = "keyword" if embedder is None else "hybrid"
        except LoreError as exc:
            mode = "keyword"
            self.app.call_from_thread(self.app.notify, failure(exc, self.book), severity="warning")
        finally:
            self.book.index.on_progress(None)
        self.app.call_from_thread(self.model_ready, mode)

    def model_progress(self, task: str, done: int, total: int) -> None:
        """The library's progress callback, from the worker: shown in the mode line."""
        text = f"search: keyword ({progress_status(task, done, total)})"
        self.app.call_from_thread(self.show_mode, text)

    def show_mode(self, text: str) -> None:
        self.query_one("#learn-mode", Static).update(text)

    def model_ready(self, mode: str) -> None:
        self.mode = mode
        self.model_state = "" if mode == "hybrid" else " (model unavailable)"
        self.label(None)
        query = self.query_one(Input).value
        if query.strip():
            self.search(query)  # the results shown were keyword ones: rank them again
        else:  # the listing stays: say so again
            self.label((len(self.results), LISTING))

    def label(self, found: tuple[int, str] | None) -> None:
        """The status line: how the results shown were found, and the model's state."""
        text = f"search: {self.mode}{self.model_state}"
        if found is not None:
            count, mode = found
            text = f"{count} result(s) by {mode} search{self.model_state}"
            if mode == LISTING:
                text = f"{count} published learning(s), newest first (/ to search)"
                text += self.model_state  # the model's state stays in view
        for line in self.query("#learn-mode").results(Static):  # gone while the app quits
            line.update(text)

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        if self.pending is not None:
            self.pending.stop()
        query = event.value
        self.pending = self.set_timer(DEBOUNCE, lambda: self.search(query))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.search(event.value)
        self.query_one(DataTable).focus()

    def search(self, query: str) -> None:
        """Search (or list, for an empty query) in a worker; only the newest one's answer is
        shown (a thread that was superseded still finishes and calls back)."""
        self.asked += 1
        self.run_search(query, self.asked)

    @work(thread=True, exclusive=True, group="search")
    def run_search(self, query: str, asked: int) -> None:
        if not query.strip():
            self.listing(asked)
            return
        mode = self.mode  # hybrid only once the model has answered (see warm)
        try:
            found = self.book.index.search(query, mode=mode, limit=20)
        except LoreError as exc:
            self.app.call_from_thread(self.app.notify, failure(exc, self.book), severity="error")
            return
        used = found.mode if mode == "hybrid" else "keyword"
        self.app.call_from_thread(self.show, [r.to_dict() for r in found], used, asked)

    def listing(self, asked: int) -> None:
        """With no query (in the search worker): every published learning, newest first, with
        its figures from the log (none while the catalog is built: they would read it all)."""
        problems = Collector()
        try:
            found = self.book.learnings.query(
                status="published", newest_first=True, on_problem=problems
            )
            self.book.learnings.mark_stale(found)
            figures = None if self.book.catalog_building else self.book.knowledge.ranking_figures()
        except LoreError as exc:
            self.app.call_from_thread(self.app.notify, failure(exc, self.book), severity="error")
            return
        results = []
        for learning in found:
            applications, success, _ = figures(learning.id) if figures else (0, None, 0)
            results.append(
                {
                    "id": learning.id,
                    "title": learning.title,
                    "score": None,
                    "status": learning.status,
                    "applications": applications,
                    "success_rate": success,
                    "stale": learning.stale,
                }
            )
        if problems.lines:
            self.post_message(StoreWarnings("learnings", problems.lines))
        self.app.call_from_thread(self.show, results, LISTING, asked)

    def show(self, results: list[dict[str, Any]], mode: str, asked: int | None = None) -> None:
        """On the app's thread: the results of search `asked`, unless a newer one is under way
        or the tab closed (the app quitting) while the worker read."""
        if asked is not None and asked != self.asked:
            return  # a newer search is under way
        table = next(iter(self.query(DataTable)), None)
        if table is None:
            return
        self.label((len(results), mode))
        self.results = {r["id"]: r for r in results}
        shares = relative_scores([r.get("score") for r in results])  # the ranking's own score
        rows: list[Row] = [
            (
                (
                    "-" if share is None else pct(share),
                    r["title"],
                    "DRAFT" if r.get("status") == "draft" else "",
                    str(r["applications"]),
                    pct(r.get("success_rate")),
                    "STALE" if r.get("stale") else "",
                ),
                r["id"],
            )
            for r, share in zip(results, shares, strict=True)
        ]
        fill_table(table, rows)
        if not results:
            self.put_preview("")

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        learning_id = str(event.row_key.value)
        if learning_id in self.results:
            self.preview(learning_id)

    @work(thread=True, exclusive=True, group="preview")
    def preview(self, learning_id: str) -> None:
        result = self.results[learning_id]
        try:
            learning = self.book.learnings.get(learning_id)
            history = self.book.learnings.history(learning_id)
        except LoreError as exc:
            self.app.call_from_thread(self.app.notify, failure(exc, self.book), severity="warning")
            return
        lines = [
            f"# {learning.title}",
            "",
            f"*{learning.kind} · {learning.category or '-'} · {learning.status}* — "
            f"{result['applications']} application(s), success {pct(result.get('success_rate'))}"
            + (" · **stale**" if result.get("stale") else ""),
            "",
            learning.body,
            "",
            "## History",
            "",
        ]
        lines += [f"- `{h.short}` {h.date[:10]} {h.author}: {h.subject}" for h in history]
        self.app.call_from_thread(self.put_preview, "\n".join(lines))

    def put_preview(self, text: str) -> None:
        """On the app's thread: the tab may have closed (app quitting) while the worker read."""
        for pane in self.query(Markdown):
            pane.update(text)
