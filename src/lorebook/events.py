"""The in-process event bus: the log writer publishes every stored record; subscribers react.

`bus.on("action", handler)` subscribes; handlers run after the record is on disk, so a handler
that raises is reported (a warning) and never loses or fails the append that triggered it.

This module sits on the append path (`lore log`), so it is standard library only; the knowledge
subscribers sit behind a cheap gate (`lorebook.knowledge.gate`).

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

from .errors import UsageError

TYPE_CHECKING = False  # typing costs milliseconds on the append path; mypy still sees it
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    Handler = Callable[[dict[str, Any]], object]
    H = TypeVar("H", bound=Handler)

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
            raise UsageError("unknown event {!r}: only {} is published", event, ", ".join(EVENTS))
        self._handlers.setdefault(event, []).append(handler)

    def once(self, event: str, kind: type[H], make: Callable[[], H]) -> H:
        """The handler of type `kind` on `event`, subscribing `make()` only if none is: an
        installer called again (each entry point, each `Lorebook.around`) adds nothing."""
        for handler in self._handlers.get(event, ()):
            if isinstance(handler, kind):
                return handler
        handler = make()
        self.on(event, handler)
        return handler

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
                from .notices import Notice

                self.warn(
                    Notice(
                        "subscriber {} failed on {} {}: {}: {} (the record is stored)",
                        name,
                        payload.get("type") or payload.get("kind"),
                        payload.get("id"),
                        type(exc).__name__,
                        reason,
                    )
                )

    def publish_record(self, record: dict[str, Any]) -> None:
        """The log writer's listener: every stored record is an `action` event."""
        if self._handlers:
            self.publish("action", record)
