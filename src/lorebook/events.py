"""The in-process event bus: the log writer publishes every stored record; subscribers react.

`bus.on("action", handler)` subscribes; handlers run after the record is on disk, so a handler
that raises is reported (a warning) and never loses or fails the append that triggered it.

This module sits on the append path (`lore log`), so it is standard library only and the
knowledge subscribers (automatic drafts, RCA lessons) are imported only when a record could
interest them: `wants_knowledge` decides from the record's type and outcome alone.
"""

from __future__ import annotations

from .errors import UsageError

TYPE_CHECKING = False  # typing costs milliseconds on the append path; mypy still sees it
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .book import Lorebook

    Handler = Callable[[dict[str, Any]], object]

EVENTS = ("action",)  # every stored record (actions and session events) is an "action" event


def stderr_warning(message: str) -> None:
    from .notices import warn

    warn(message)


class EventBus:
    """Named events to handlers, in subscription order; a failing handler is only warned about."""

    __slots__ = ("_handlers", "warn")

    def __init__(self, warn: Callable[[str], None] | None = None) -> None:
        self._handlers: dict[str, list[Handler]] = {}
        self.warn = warn or stderr_warning

    def on(self, event: str, handler: Handler) -> None:
        if event not in EVENTS:
            raise UsageError(f"unknown event {event!r}: only {', '.join(EVENTS)} is published")
        self._handlers.setdefault(event, []).append(handler)

    def off(self, event: str, handler: Handler) -> None:
        """Unsubscribe (no error if `handler` was not subscribed)."""
        handlers = self._handlers.get(event, [])
        if handler in handlers:
            handlers.remove(handler)

    def handlers(self, event: str) -> list[Handler]:
        return list(self._handlers.get(event, ()))

    def publish(self, event: str, payload: dict[str, Any]) -> None:
        """Call every handler of `event`; an exception is turned into a warning."""
        for handler in self._handlers.get(event, ()):
            try:
                handler(payload)
            except Exception as exc:
                name = getattr(handler, "__qualname__", type(handler).__name__)
                reason = " ".join(str(exc).split())[:300]  # one line, whatever the exception
                self.warn(
                    f"subscriber {name} failed on {payload.get('type') or payload.get('kind')} "
                    f"{payload.get('id')}: {type(exc).__name__}: {reason} (the record is stored)"
                )

    def publish_record(self, record: dict[str, Any]) -> None:
        """The log writer's listener: every stored record is an `action` event."""
        if self._handlers:
            self.publish("action", record)


def wants_knowledge(record: dict[str, Any]) -> bool:
    """Could this record start an automatic draft or an RCA lesson? Cheap: fields only."""
    if record.get("kind") != "action":
        return False
    kind = record.get("type")
    outcome = record.get("outcome")
    if kind == "epic_complete" or kind == "issue_resolved":
        return True
    if outcome != "failure":
        return False
    if kind == "validate":
        return True
    context = record.get("context")
    return isinstance(context, dict) and isinstance(context.get("rca"), dict)


class KnowledgeTriggers:
    """The gate in front of the knowledge subscribers.

    Ordinary records cost one call to `wants_knowledge`; the knowledge modules (pydantic, YAML)
    are imported on the first record that passes. Records logged while a subscriber runs (its
    own `learning_draft` action, say) never trigger again, so drafting cannot recurse.
    """

    __slots__ = ("_state", "open_book")

    def __init__(self, open_book: Callable[[], Lorebook]) -> None:
        self.open_book = open_book
        self._state: Any = None  # a threading.local, made on the first wanted record

    def __call__(self, record: dict[str, Any]) -> None:
        if not wants_knowledge(record):
            return
        if self._state is None:
            import threading  # only now: the append path of ordinary records never needs it

            self._state = threading.local()
        if getattr(self._state, "busy", False):  # logged by a subscriber on this thread
            return
        self._state.busy = True
        try:
            from .knowledge.triggers import dispatch

            dispatch(self.open_book(), record)
        finally:
            self._state.busy = False


def install_knowledge_triggers(
    bus: EventBus, open_book: Callable[[], Lorebook], config_section: dict[str, Any]
) -> KnowledgeTriggers | None:
    """Subscribe the knowledge gate once per bus (unless `drafts.auto` is false)."""
    if config_section.get("auto", True) is False:
        return None
    for handler in bus.handlers("action"):
        if isinstance(handler, KnowledgeTriggers):
            return handler
    gate = KnowledgeTriggers(open_book)
    bus.on("action", gate)
    return gate
