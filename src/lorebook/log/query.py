"""Filters for `lore actions`: pushed down to day directories and shards where possible.

A plain class rather than a dataclass: `dataclasses` pulls in `inspect` (and `ast`, `dis`,
`tokenize`), which cost a cold `lore actions` or `lore report` more than the query itself.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

from ..errors import UsageError
from ..model import OUTCOMES

TYPE_CHECKING = False  # typing costs milliseconds on cold paths; mypy still sees it
if TYPE_CHECKING:
    from typing import Any

FIELDS = (
    "type", "outcome", "project", "agent", "epic", "issue", "session", "category", "since", "until",
)  # fmt: skip


class ActionFilter:
    """Exact-match filters on action fields plus a half-open time window [since, until);
    immutable, compared and hashed by value."""

    __slots__ = FIELDS
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
        for key, value in zip(FIELDS, values, strict=True):
            object.__setattr__(self, key, value)
        if outcome is not None and outcome not in OUTCOMES:
            raise UsageError("outcome {!r} is not one of: " + ", ".join(OUTCOMES), outcome)
        if since and until and since >= until:
            raise UsageError("--since {} is not before --until {}", since, until)

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {key!r}: an ActionFilter is immutable")

    def __delattr__(self, key: str) -> None:
        raise AttributeError(f"cannot delete field {key!r}: an ActionFilter is immutable")

    def values(self) -> dict[str, str | None]:
        """Every field by name (what `ActionFilter(**values)` rebuilds)."""
        return {key: getattr(self, key) for key in FIELDS}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ActionFilter):
            return NotImplemented
        return self.values() == other.values()

    def __hash__(self) -> int:
        return hash(tuple(getattr(self, key) for key in FIELDS))

    def __reduce__(self) -> tuple[Any, ...]:  # copy and pickle rebuild through __init__
        return (ActionFilter, tuple(getattr(self, key) for key in FIELDS))

    def __repr__(self) -> str:
        shown = ", ".join(f"{key}={getattr(self, key)!r}" for key in FIELDS)
        return f"ActionFilter({shown})"

    def matches(self, record: dict[str, Any]) -> bool:
        if record.get("kind") != "action":
            return False
        for key in FIELDS[:-2]:  # the exact-match fields, not the window
            wanted = getattr(self, key)
            if wanted is not None and record.get(key) != wanted:
                return False
        return True
