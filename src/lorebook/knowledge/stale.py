"""Staleness: a learning is stale when code it is anchored to changed or vanished after the
learning's own last commit — in a later commit, or in the working tree (uncommitted edits,
staged or not, count: the check runs before the commit that would hide them from CI).

Anchors are paths relative to the store root, optionally `path#symbol`: then only changes
whose diff mentions the symbol count (and the symbol vanishing from the file does too). A
learning with uncommitted edits of its own is as new as the working tree: only a deleted
anchor makes it stale then.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

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
    text_in_worktree,
    tracked_in_head,
    uncommitted,
    uncommitted_diff_mentions,
)
from .model import Learning

if TYPE_CHECKING:
    from ..contracts.knowledge import StaleReportData
    from ..paths import Layout


@dataclass
class AnchorChange:
    anchor: str
    reason: str  # "deleted", "missing", "changed", "symbol removed", "outside the repository"
    commits: list[str] = field(default_factory=list)  # short hashes, newest first
    uncommitted: bool = False  # the change is in the working tree, not (yet) in a commit


@dataclass
class StaleReport:
    id: str
    title: str
    path: str
    since: str | None  # the learning's last commit (None: never committed)
    anchors: list[AnchorChange]

    def to_dict(self) -> StaleReportData:
        return {
            "id": self.id,
            "title": self.title,
            "path": self.path,
            "since": self.since,
            "anchors": [
                {
                    "anchor": a.anchor,
                    "reason": a.reason,
                    "commits": list(a.commits),
                    "uncommitted": a.uncommitted,
                }
                for a in self.anchors
            ],
        }


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


def _under(path: str, rel: str) -> bool:
    return path == rel or path.startswith(rel + "/")


def _check_worktree(
    repo: Repo, dirty: dict[str, str], anchor: str, rel: str, own_edits: bool
) -> AnchorChange | None:
    """The anchor's uncommitted change (the committed history showed none)."""
    changed = {path: code for path, code in dirty.items() if _under(path, rel)}
    if not changed:
        return None
    if changed.get(rel) == "D":  # the anchored file itself is gone from the working tree
        return AnchorChange(anchor, "deleted", uncommitted=True)
    if own_edits:
        return None
    _, symbol = split_anchor(anchor)
    if symbol is None:
        return AnchorChange(anchor, "changed", uncommitted=True)
    if uncommitted_diff_mentions(repo, rel, symbol):
        return AnchorChange(anchor, "changed", uncommitted=True)
    if symbol not in text_in_worktree(repo, rel):
        return AnchorChange(anchor, "symbol removed", uncommitted=True)
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
    dirty = uncommitted(repo)
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
            if change is None and dirty:  # tracked at HEAD: compare the working tree too
                change = _check_worktree(repo, dirty, anchor, target, own_edits=rel in dirty)
            if change:
                changes.append(change)
        if changes:
            learning.stale = True
            reports.append(StaleReport(learning.id, learning.title, rel, since, changes))
    return reports
