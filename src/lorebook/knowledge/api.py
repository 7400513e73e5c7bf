"""`Learnings`: the knowledge-base API behind `Lorebook.learnings`.

The store (files), review through git (promote / reject / history), staleness and the
learnings part of `lore check`, in one place for the CLI, TUI and MCP server.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import date
from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from ..problems import OnProblem
from .model import KINDS, STATUSES, Learning
from .store import LearningStore, with_skeleton

if TYPE_CHECKING:
    from ..contracts.knowledge import AnchorChange, Rejected
    from ..log.actionlog import ActionLog
    from .review import HistoryEntry, Promotion
    from .stale import StaleReport


class Learnings:
    """Learnings and drafts of one store: the files (`store`) and the log that review writes to
    (`action_log`: promotions and rejections are logged)."""

    def __init__(self, store: LearningStore, action_log: ActionLog) -> None:
        self.store = store
        self.action_log = action_log
        self.layout = store.layout
        self.sanitizer = store.sanitizer
        self.root = store.layout.root

    # -- files -----------------------------------------------------------------------------
    def new(self, *, title: str, body: str = "", **fields: Any) -> Learning:
        """Create a draft (or, with `publish=True`, a published learning); a body without
        `## ` sections gets the Problem / Root Cause / Solution / Key Takeaway skeleton."""
        return self.store.create(title=title, body=with_skeleton(body), **fields)

    def get(self, learning_id: str) -> Learning:
        """A learning as read, redacted (a file may hold a pasted secret); code that rewrites
        the file uses `store.get()`."""
        return self.store.sanitized(self.store.get(learning_id))

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
        stale: bool | None = None,
        newest_first: bool = False,
        on_problem: OnProblem | None = None,
    ) -> list[Learning]:
        """Learnings matching every given filter (tags: all of them), oldest id first (with
        `newest_first`: the latest `created` first, ties by id, last first, as a browser lists)."""
        if status is not None and status not in STATUSES:
            raise UsageError("status {!r} is not one of: " + ", ".join(STATUSES), status)
        if kind is not None and kind not in KINDS:
            raise UsageError("kind {!r} is not one of: " + ", ".join(KINDS), kind)
        wanted = set(tags)
        found = [
            learning
            for learning in self.all(on_problem=on_problem)
            if (status is None or learning.status == status)
            and (kind is None or learning.kind == kind)
            and (category is None or learning.category == category)
            and wanted <= set(learning.tags)
        ]
        if stale is not None:
            self.mark_stale(found)
            found = [learning for learning in found if learning.stale == stale]
        if newest_first:
            found.sort(key=lambda learning: (learning.created, learning.id), reverse=True)
        return found

    def text(self, learning_id: str) -> str:
        """A learning's file as text for an editor, redacted (what `edit` takes back)."""
        from .fileformat import render_learning

        return render_learning(self.get(learning_id))

    def edit(self, learning_id: str, text: str) -> Learning:
        """Replace a learning's file with `text`, checked as a learning file first: an invalid
        text is refused (LoreError naming the file and line) and the file stays as it was; a
        valid one is redacted and written atomically (never through a symlink)."""
        from .fileformat import parse_learning

        path = self.store.get(learning_id).path
        assert path is not None  # read from a file
        learning = parse_learning(text, path, self.layout.rel(path))
        self.store.write(learning)
        return learning

    # -- review through git ----------------------------------------------------------------
    def promote(
        self,
        learning_id: str,
        *,
        branch: str | None = None,
        push: bool = False,
        pr: bool = False,
        remote: str = "origin",
    ) -> Promotion:
        """Publish a draft in one commit (on `branch`, leaving the current one as it was)."""
        from .review import promote

        return promote(
            self.store,
            self.action_log,
            learning_id,
            branch=branch,
            push=push,
            pr=pr,
            remote=remote,
        )

    def reject(self, learning_id: str, *, reason: str) -> Rejected:
        """Remove a draft in one commit and log the reason."""
        from .review import reject

        return reject(self.store, self.action_log, learning_id, reason=reason)

    def published_branches(self) -> dict[str, str]:
        """Draft id -> the local branch it is already published on (`promote --branch`),
        for drafts waiting for that branch's merge."""
        from .review import published_branches

        return published_branches(self.store)

    def history(self, learning_id: str) -> list[HistoryEntry]:
        """The commits that touched the learning, newest first, across drafts/ -> learnings/."""
        from .review import history

        return history(self.store, learning_id)

    # -- staleness -------------------------------------------------------------------------
    def stale(self, *, on_problem: OnProblem | None = None) -> list[StaleReport]:
        """Learnings whose anchors changed or vanished after the learning's last commit."""
        from .stale import find_stale

        return find_stale(self.layout, list(self.all(on_problem=on_problem)))

    def stale_ids(self) -> frozenset[str]:
        """Ids of the stale learnings, for ranking (cached per commit: `cached_stale_ids`)."""
        from .stale_cache import cached_stale_ids

        return cached_stale_ids(self.layout, lambda: [report.id for report in self.stale()])

    def mark_stale(self, learnings: list[Learning]) -> list[Learning]:
        """Set `stale` on each learning (for ranking and review) and return them."""
        self.stale_anchors(learnings)
        return learnings

    def stale_anchors(self, learnings: list[Learning]) -> dict[str, list[AnchorChange]]:
        """Set `stale` on each learning, and say which anchors of each stale one changed and
        how (id -> its stale report's `anchors`): a review shows each anchor's own state."""
        from .stale import find_stale

        reports = {report.id: report for report in find_stale(self.layout, learnings)}
        for learning in learnings:
            learning.stale = learning.id in reports
        return {lid: report.to_dict()["anchors"] for lid, report in reports.items()}

    def today(self) -> date:
        from ..timeutil import utcnow

        return utcnow().date()
