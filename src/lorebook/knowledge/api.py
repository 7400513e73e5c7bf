"""`Learnings`: the knowledge-base API behind `Lorebook.learnings`.

The store (files) now; review through git (promote / reject / history) and staleness join
it, in one place for the CLI, TUI and MCP server.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import date
from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from .model import KINDS, STATUSES, Learning
from .store import LearningStore, OnProblem, with_skeleton

if TYPE_CHECKING:
    from ..book import Lorebook


class Learnings:
    """Learnings and drafts of one store."""

    def __init__(self, book: Lorebook) -> None:
        self.book = book
        self.store = LearningStore(book.layout, book.sanitizer)

    # -- files -----------------------------------------------------------------------------
    def new(self, *, title: str, body: str = "", **fields: Any) -> Learning:
        """Create a draft (or, with `publish=True`, a published learning); a body without
        `## ` sections gets the Problem / Root Cause / Solution / Key Takeaway skeleton."""
        return self.store.create(title=title, body=with_skeleton(body), **fields)

    def get(self, learning_id: str) -> Learning:
        return self.store.get(learning_id)

    def all(
        self, *, drafts: bool = True, published: bool = True, on_problem: OnProblem | None = None
    ) -> Iterator[Learning]:
        return self.store.all(drafts=drafts, published=published, on_problem=on_problem)

    def drafts(self, *, on_problem: OnProblem | None = None) -> list[Learning]:
        return list(self.store.all(published=False, on_problem=on_problem))

    def query(
        self,
        *,
        status: str | None = None,
        kind: str | None = None,
        category: str | None = None,
        tags: Iterable[str] = (),
        on_problem: OnProblem | None = None,
    ) -> list[Learning]:
        """Learnings matching every given filter (tags: all of them), oldest id first."""
        if status is not None and status not in STATUSES:
            raise UsageError(f"status {status!r} is not one of: {', '.join(STATUSES)}")
        if kind is not None and kind not in KINDS:
            raise UsageError(f"kind {kind!r} is not one of: {', '.join(KINDS)}")
        wanted = set(tags)
        found = [
            learning
            for learning in self.all(on_problem=on_problem)
            if (status is None or learning.status == status)
            and (kind is None or learning.kind == kind)
            and (category is None or learning.category == category)
            and wanted <= set(learning.tags)
        ]
        return found

    def today(self) -> date:
        from ..timeutil import utcnow

        return utcnow().date()
