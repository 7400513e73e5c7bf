"""Filters for `lore actions`: pushed down to day directories and shards where possible; and
`ActionSource`, what a reader of the log (reports, exports) is given instead of a `Lorebook`."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import UsageError
from ..model import OUTCOMES

if TYPE_CHECKING:
    from ..paths import Layout
    from ..problems import OnProblem
    from ..redact.sanitize import Sanitizer
    from .catalog_query import CatalogView


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


class ActionSource(Protocol):
    """The action log as its readers use it: the store's root and layout, the sanitizer, the
    catalog, and matching actions (from the catalog, else the shards; redacted)."""

    @property
    def root(self) -> Path: ...

    @property
    def layout(self) -> Layout: ...

    @property
    def sanitizer(self) -> Sanitizer: ...

    @property
    def catalog(self) -> CatalogView: ...

    def iter_actions(
        self,
        query: ActionFilter | None = None,
        *,
        newest_first: bool = True,
        on_problem: OnProblem = ...,
        include_archive: bool = False,
    ) -> Iterator[dict[str, Any]]: ...
