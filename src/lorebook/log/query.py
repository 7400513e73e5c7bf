"""Filters for `lore actions`: pushed down to day directories and shards where possible."""

from __future__ import annotations

from ..errors import UsageError
from ..model import OUTCOMES

TYPE_CHECKING = False  # typing costs milliseconds on cold paths; mypy still sees it
if TYPE_CHECKING:
    from typing import Any

_FIELDS = ("type", "outcome", "project", "agent", "epic", "issue", "session", "category")
_WINDOW = ("since", "until")


class ActionFilter:
    """Exact-match filters on action fields plus a half-open time window [since, until).

    Immutable, compared and hashed by value, like a frozen dataclass; written out because
    `dataclasses` pulls `inspect` and `ast` into `lore actions` and `lore report`."""

    type: str | None
    outcome: str | None
    project: str | None
    agent: str | None
    epic: str | None
    issue: str | None
    session: str | None
    category: str | None
    since: str | None
    until: str | None

    def __init__(
        self,
        type: str | None = None,
        outcome: str | None = None,
        project: str | None = None,
        agent: str | None = None,
        epic: str | None = None,
        issue: str | None = None,
        session: str | None = None,
        category: str | None = None,
        since: str | None = None,
        until: str | None = None,
    ) -> None:
        values = (type, outcome, project, agent, epic, issue, session, category, since, until)
        for key, value in zip(_FIELDS + _WINDOW, values, strict=True):
            object.__setattr__(self, key, value)
        if outcome is not None and outcome not in OUTCOMES:
            raise UsageError(f"outcome {outcome!r} is not one of: {', '.join(OUTCOMES)}")
        if since and until and since >= until:
            raise UsageError(f"--since {since} is not before --until {until}")

    def _values(self) -> tuple[str | None, ...]:
        return tuple(getattr(self, key) for key in _FIELDS + _WINDOW)

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {key!r}: an ActionFilter is immutable")

    def __delattr__(self, key: str) -> None:
        raise AttributeError(f"cannot delete field {key!r}: an ActionFilter is immutable")

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ActionFilter) and other.__class__ is self.__class__:
            return self._values() == other._values()
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{key}={getattr(self, key)!r}" for key in _FIELDS + _WINDOW)
        return f"ActionFilter({shown})"

    def matches(self, record: dict[str, Any]) -> bool:
        if record.get("kind") != "action":
            return False
        for key in _FIELDS:
            wanted = getattr(self, key)
            if wanted is not None and record.get(key) != wanted:
                return False
        return True
