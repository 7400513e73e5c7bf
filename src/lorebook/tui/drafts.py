"""Tab 4, drafts: review in one keystroke. `a` publishes (optionally on a branch for a pull
request), `x` removes with a reason, `e` edits in $EDITOR: the same facade calls, commits and
log records as `lore promote` / `lore reject`. Where the app cannot give the terminal to
$EDITOR (the web view) or none is set, `e` edits in the app (`editor.EditScreen`)."""

from __future__ import annotations

import os
import shlex
import subprocess
from typing import Any, ClassVar

from textual import work
from textual.app import ComposeResult, SuspendNotSupported
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import DataTable, Input, Label, Markdown, Static

from lorebook import Lorebook, LoreError
from lorebook.render.columns import Column
from lorebook.render.learnings import draft_review

from .data import Collector, failure, selected_key
from .editor import EditScreen
from .messages import StoreChanged, StoreWarnings
from .tables import FitTable, Row, fill_table

EMPTY = "No drafts to review. Drafts appear when agents record failures (or `lore learn new`)."


class Ask(ModalScreen[str | None]):
    """One line of input: Enter answers, Escape cancels (None)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]
    AUTO_FOCUS = "#answer"

    def __init__(self, question: str, *, required: bool) -> None:
        super().__init__()
        self.question = question
        self.required = required

    def compose(self) -> ComposeResult:
        with Vertical(id="ask"):
            yield Label(self.question)
            yield Input(id="answer")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        answer = event.value.strip()
        if self.required and not answer:
            self.app.notify("an answer is required (Escape cancels)", severity="warning")
            return
        self.dismiss(answer)

    def action_cancel(self) -> None:
        self.dismiss(None)


class DraftsTab(Vertical):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "approve", "Approve"),
        Binding("x", "reject", "Reject"),
        Binding("e", "edit", "Edit"),
    ]

    def __init__(self, book: Lorebook, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.book = book
        self.bodies: dict[str, str] = {}
        self.on_branch: dict[str, str] = {}  # draft id -> branch it is published on (a PR)
        self.changed: dict[str, list[Any]] = {}  # draft id -> how its stale anchors changed

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield FitTable(
                id="drafts-table",
                cursor_type="row",
                zebra_stripes=True,
                fits={"title": Column("title", narrowest=12)},
            )
            with VerticalScroll(id="draft-preview-pane"):
                yield Markdown(id="draft-preview")
        yield Static(EMPTY, id="drafts-empty", classes="empty")

    def on_mount(self) -> None:
        self.query_one(DataTable).add_columns("review", "created", "title")  # rows: on show

    def reload(self) -> None:
        problems = Collector()
        drafts = self.book.learnings.drafts(on_problem=problems)
        try:
            self.on_branch = self.book.learnings.published_branches()
        except LoreError as exc:  # not a git repository: nothing is published anywhere
            self.on_branch = {}
            problems.lines.append(failure(exc, self.book))
        if problems.lines:
            self.post_message(StoreWarnings("drafts", problems.lines))
        self.bodies = {}
        self.changed = self.book.learnings.stale_anchors(drafts)
        rows: list[Row] = []
        for draft in drafts:
            self.bodies[draft.id] = self.review_text(draft)
            branch = self.on_branch.get(draft.id)
            mark = f"PR {branch}" if branch else "draft"
            rows.append(((mark, str(draft.created), draft.title), draft.id))
        fill_table(self.query_one(DataTable), rows)
        self.query_one("#drafts-empty").display = not drafts
        self.query_one(Horizontal).display = bool(drafts)
        if not drafts:
            self.query_one(Markdown).update("")

    def review_text(self, draft: Any) -> str:
        """The preview: source, tags, anchors and what publishing changes, redacted."""
        shown = self.book.learnings.store.sanitized(draft)
        replaces: dict[str, str] = {}
        for old in shown.supersedes:
            try:
                replaces[old] = self.book.learnings.get(old).body
            except LoreError:
                continue  # not published (any more): nothing to diff against
        return draft_review(
            shown.to_dict() | {"body": shown.body},
            changed=self.changed.get(draft.id, []),
            branch=self.on_branch.get(draft.id),
            replaces=replaces,
        )

    def selected(self) -> str | None:
        return selected_key(self.query_one(DataTable))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.query_one(Markdown).update(self.bodies.get(str(event.row_key.value), ""))

    def on_show(self) -> None:
        self.reload()

    # -- review ----------------------------------------------------------------------------
    def action_approve(self) -> None:
        draft = self.selected()
        if draft is None:
            return
        if draft in self.on_branch:
            branch = self.on_branch[draft]
            message = f"{draft} is already published on branch {branch}: merge its pull request"
            self.app.notify(message, severity="warning")
            return

        def answered(branch: str | None) -> None:
            if branch is not None:
                self.review("promote", draft, branch or None)

        question = f"Publish {draft}: branch for a pull request (empty: the current branch)"
        self.app.push_screen(Ask(question, required=False), answered)

    def action_reject(self) -> None:
        draft = self.selected()
        if draft is None:
            return

        def answered(reason: str | None) -> None:
            if reason:
                self.review("reject", draft, reason)

        self.app.push_screen(Ask(f"Reject {draft}: why?", required=True), answered)

    @work(thread=True, exclusive=True, group="review")
    def review(self, verb: str, draft: str, argument: str | None) -> None:
        try:
            if verb == "promote":
                done = self.book.learnings.promote(draft, branch=argument)
                where = f"on branch {done.branch}" if done.branch else "on the current branch"
                message = f"published {draft} {where} ({done.commit[:12]})"
            else:
                self.book.learnings.reject(draft, reason=argument or "")
                message = f"rejected {draft}"
        except LoreError as exc:
            self.app.call_from_thread(self.reviewed, failure(exc, self.book), failed=True)
            return
        self.app.call_from_thread(self.reviewed, message, failed=False)

    def reviewed(self, message: str, *, failed: bool) -> None:
        """Back on the UI thread: say what happened, show the drafts as they are now."""
        self.app.notify(message, severity="error" if failed else "information")
        self.reload()
        if not failed:
            self.post_message(StoreChanged("drafts"))

    def action_edit(self) -> None:
        draft = self.selected()
        if draft is None:
            return
        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
        try:
            path = self.book.learnings.get(draft).path
            text = self.book.learnings.text(draft)
        except LoreError as exc:  # removed by someone else since the list was read
            self.app.notify(failure(exc, self.book), severity="error")
            self.reload()
            return
        if editor:
            try:
                with self.app.suspend():
                    try:
                        code = subprocess.call([*shlex.split(editor), str(path)])
                    except OSError as exc:
                        code = None
                        problem = f"could not run $EDITOR ({editor}): {exc.strerror}"
            except SuspendNotSupported:  # the web view: no terminal to hand over
                pass
            else:
                if code is None:
                    self.app.notify(problem, severity="error")
                elif code:
                    self.app.notify(f"$EDITOR ({editor}) exited with {code}", severity="warning")
                self.reload()
                return
        self.app.push_screen(EditScreen(self.book, draft, text), self.edited)

    def edited(self, saved: bool | None) -> None:
        if saved:
            self.app.notify("draft saved")
            self.post_message(StoreChanged("drafts"))
        self.reload()
