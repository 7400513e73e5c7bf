"""Typed messages the tabs send up to the app (so tabs never reach into each other)."""

from __future__ import annotations

from textual.message import Message


class StoreWarnings(Message):
    """Lines or files a reader skipped (torn lines, broken learnings): shown, never fatal."""

    def __init__(self, source: str, problems: list[str]) -> None:
        super().__init__()
        self.source = source
        self.problems = problems


class StoreChanged(Message):
    """Something this app did changed the store (a draft approved or rejected, a validation):
    tabs that show derived data reload."""

    def __init__(self, what: str) -> None:
        super().__init__()
        self.what = what
