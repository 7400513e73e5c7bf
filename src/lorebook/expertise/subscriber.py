"""Learn when a session ends: a plain listener for `Lorebook.on("action", ...)`.

Registered by `Lorebook` when `expertise.learn_on_session_end` is true (default false). The
writer calls listeners with every stored record; this one acts on session `end` events only and
never lets a learning problem fail the agent's own write: it becomes one warning on stderr.
Imports nothing heavy until a session actually ends.
"""

from __future__ import annotations

from ..errors import LoreError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..book import Lorebook


def on_session_end(book: Lorebook, record: dict[str, Any]) -> dict[str, Any] | None:
    """Learn from the session `record` ends; None for any other record."""
    if record.get("kind") != "session" or record.get("event") != "end":
        return None
    from .api import NothingToLearn

    try:
        result: dict[str, Any] = book.expertise.learn(str(record.get("session")))
    except NothingToLearn:
        return None
    except LoreError as exc:
        from ..notices import warn

        warn(f"expertise not updated for session {record.get('session')}: {exc}")
        return None
    return result


def subscribe(book: Lorebook) -> None:
    """Register `on_session_end` for `book`."""

    def listener(record: dict[str, Any]) -> None:
        on_session_end(book, record)

    book.on("action", listener)
