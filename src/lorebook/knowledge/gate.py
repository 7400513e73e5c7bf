"""The gate in front of the knowledge subscribers (automatic drafts, RCA lessons).

It sits on the append path (`lore log`), so it is standard library only: the knowledge modules
are imported only when a record could interest them, and `wants_knowledge` decides from the
record's type and outcome alone.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs milliseconds on the append path; mypy still sees it
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ..events import EventBus
    from ..settings import DraftSettings
    from .ops import KnowledgeOps


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

    __slots__ = ("_state", "open_knowledge")

    def __init__(self, open_knowledge: Callable[[], KnowledgeOps]) -> None:
        self.open_knowledge = open_knowledge  # called only for a record that passes the gate
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
            from .triggers import dispatch

            dispatch(self.open_knowledge(), record)
        finally:
            self._state.busy = False


def install_knowledge_triggers(
    bus: EventBus, open_knowledge: Callable[[], KnowledgeOps], drafts: DraftSettings
) -> KnowledgeTriggers | None:
    """Subscribe the knowledge gate once per bus (unless `drafts.auto` is false)."""
    if not drafts.auto:
        return None
    return bus.once("action", KnowledgeTriggers, lambda: KnowledgeTriggers(open_knowledge))
