"""Staleness: a learning is stale when code it is anchored to changed or vanished after the
learning's own last commit.

Anchors are paths relative to the store root, optionally `path#symbol`: then only commits
whose diff mentions the symbol count (and the symbol vanishing from the file does too).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from ..git.repo import (
    Repo,
    commits_since,
    commits_touching_text,
    head_commit,
    last_commit,
    newest_commit_per_file,
    open_repo,
    rel_path,
    text_at_head,
    tracked_in_head,
)
from .model import Learning

if TYPE_CHECKING:
    from ..paths import Layout


@dataclass
class AnchorChange:
    anchor: str
    reason: str  # "deleted", "missing", "changed", "symbol removed", "outside the repository"
    commits: list[str] = field(default_factory=list)  # short hashes, newest first


@dataclass
class StaleReport:
    id: str
    title: str
    path: str
    since: str | None  # the learning's last commit (None: never committed)
    anchors: list[AnchorChange]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def split_anchor(anchor: str) -> tuple[str, str | None]:
    path, _, symbol = anchor.partition("#")
    return path.strip().rstrip("/"), (symbol.strip() or None)


def _check_anchor(repo: Repo, since: str | None, anchor: str, rel: str) -> AnchorChange | None:
    _, symbol = split_anchor(anchor)
    if not tracked_in_head(repo, rel):
        ever = last_commit(repo, rel)
        return AnchorChange(anchor, "deleted" if ever else "missing", [ever] if ever else [])
    if since is None:
        return None
    if symbol is None:
        commits = commits_since(repo, since, rel)
        return AnchorChange(anchor, "changed", commits) if commits else None
    commits = commits_touching_text(repo, since, rel, symbol)
    if commits:
        return AnchorChange(anchor, "changed", commits)
    if symbol not in text_at_head(repo, rel):
        return AnchorChange(anchor, "symbol removed", [])
    return None


def find_stale(layout: Layout, learnings: list[Learning]) -> list[StaleReport]:
    """The stale learnings among `learnings` (of the store at `layout`), each with the anchors
    that moved."""
    anchored = [x for x in learnings if x.anchors and x.path is not None]
    if not anchored:
        return []
    repo = open_repo(layout.root)
    if head_commit(repo) is None:
        return []
    newest = newest_commit_per_file(repo, [rel_path(repo, layout.learnings)])
    reports = []
    for learning in anchored:
        assert learning.path is not None
        rel = rel_path(repo, learning.path)
        since = newest.get(rel)
        if since is None:  # a draft promoted from drafts/: its history is under drafts/
            since = newest.get(rel_path(repo, layout.drafts / learning.path.name))
        changes = []
        for anchor in learning.anchors:
            path, _ = split_anchor(anchor)
            if not path:
                continue
            try:
                target = rel_path(repo, layout.root / path)
            except ValueError:
                changes.append(AnchorChange(anchor, "outside the repository"))
                continue
            change = _check_anchor(repo, since, anchor, target)
            if change:
                changes.append(change)
        if changes:
            learning.stale = True
            reports.append(StaleReport(learning.id, learning.title, rel, since, changes))
    return reports
