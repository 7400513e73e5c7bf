"""Learn when a session ends: a plain listener on the event bus's `action` event.

Installed by `Lorebook.install_subscribers()` when `expertise.learn_on_session_end` is true
(default false). The writer calls listeners with every stored record; this one acts on session
`end` events only and never lets a learning problem fail the agent's own write: it becomes one
warning on stderr. Imports nothing heavy until a session actually ends: `open_expertise` is
called then, not before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import LoreError

if TYPE_CHECKING:
    from ..events import EventBus
    from .api import Expertise


def on_session_end(expertise: Expertise, record: dict[str, Any]) -> dict[str, Any] | None:
    """Learn from the session `record` ends; None for any other record."""
    if record.get("kind") != "session" or record.get("event") != "end":
        return None
    from .api import NothingToLearn

    try:
        result: dict[str, Any] = expertise.learn(str(record.get("session")))
    except NothingToLearn:
        return None
    except LoreError as exc:
        from ..notices import Notice, warn

        session = record.get("session")
        warn(
            Notice("expertise not updated for session {}: {}", session, exc),
            None,
            expertise.sanitizer,
        )
        return None
    return result


class SessionEndLearner:
    """The listener: opens the expertise API on the first session end it sees."""

    __slots__ = ("open_expertise",)

    def __init__(self, open_expertise: Callable[[], Expertise]) -> None:
        self.open_expertise = open_expertise

    def __call__(self, record: dict[str, Any]) -> None:
        if record.get("kind") == "session" and record.get("event") == "end":
            on_session_end(self.open_expertise(), record)


def subscribe(bus: EventBus, open_expertise: Callable[[], Expertise]) -> SessionEndLearner:
    """Register the learner on `bus`, once per bus (a second call returns the first one)."""
    return bus.once("action", SessionEndLearner, lambda: SessionEndLearner(open_expertise))
