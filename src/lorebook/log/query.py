"""Filters for `lore actions`: pushed down to day directories and shards where possible."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import UsageError
from ..model import OUTCOMES


@dataclass(frozen=True)
class ActionFilter:
    """Exact-match filters on action fields plus a half-open time window [since, until)."""

    type: str | None = None
    outcome: str | None = None
    project: str | None = None
    agent: str | None = None
    epic: str | None = None
    issue: str | None = None
    session: str | None = None
    category: str | None = None
    since: str | None = None
    until: str | None = None

    def __post_init__(self) -> None:
        if self.outcome is not None and self.outcome not in OUTCOMES:
            raise UsageError(f"outcome {self.outcome!r} is not one of: {', '.join(OUTCOMES)}")
        if self.since and self.until and self.since >= self.until:
            raise UsageError(f"--since {self.since} is not before --until {self.until}")

    def matches(self, record: dict[str, Any]) -> bool:
        if record.get("kind") != "action":
            return False
        for key in ("type", "outcome", "project", "agent", "epic", "issue", "session", "category"):
            wanted = getattr(self, key)
            if wanted is not None and record.get(key) != wanted:
                return False
        return True
