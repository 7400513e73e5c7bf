"""Editing a draft inside the app, where the app cannot hand the terminal to $EDITOR
(`lore tui --web`: a browser has no terminal to give) or no $EDITOR is set.

The text goes back through `Learnings.edit`: checked as a learning file first (an invalid text
is refused with its file and line, and stays in the editor, so nothing typed is lost), then
redacted and written atomically.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Footer, Static, TextArea

from lorebook import Lorebook, LoreError

from .data import failure

HINT = "ctrl+s saves · escape leaves without saving"


class EditScreen(Screen[bool]):
    """One draft's file in a text area; dismissed with True once saved, False when left."""

    AUTO_FOCUS = "#draft-editor"

    BINDINGS: ClassVar[list[BindingType]] = [
        # not a priority binding: ctrl+s then waits behind the keys typed before it (a priority
        # binding ran at once in the web view and saved the text without them)
        Binding("ctrl+s", "save", "Save"),
        Binding("escape", "leave", "Leave"),
    ]

    def __init__(self, book: Lorebook, draft: str, text: str) -> None:
        super().__init__()
        self.book, self.draft, self.text = book, draft, text

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(f"editing {self.draft} · {HINT}", id="edit-title", classes="status")
            yield TextArea(self.text, id="draft-editor", language="markdown")
            yield Static("", id="edit-error")
        yield Footer()

    def action_save(self) -> None:
        text = self.query_one(TextArea).text
        try:
            self.book.learnings.edit(self.draft, text)
        except LoreError as exc:  # stays open with the text as typed
            self.query_one("#edit-error", Static).update(failure(exc, self.book))
            return
        self.dismiss(True)

    def action_leave(self) -> None:
        self.dismiss(False)
