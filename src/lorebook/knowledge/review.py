"""Review through git: promote a draft, reject it, list a learning's history.

Promotion with `branch` builds the commit from a temporary index (`lorebook.git.repo`), so the
user's branch, HEAD, index and working tree stay exactly as they were; without `branch` it
commits on the current branch and refuses when the index holds staged changes that would be
mixed into that commit.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..errors import LoreError, UsageError
from ..git.binary import staged_paths
from ..git.repo import (
    GitError,
    Repo,
    branch_exists,
    commit_changes,
    commit_on_new_branch,
    current_branch,
    find_repo,
    head_commit,
    in_index,
    is_branch_name,
    open_repo,
    path_history,
    push_branch,
    rel_path,
    run,
    tracked_in_head,
    work_tree,
)
from ..store import refuse_symlinks
from ..timeutil import utcnow
from .fileformat import render_learning
from .model import Learning

if TYPE_CHECKING:
    from ..contracts.knowledge import LearningHistoryEntry, Promoted, Rejected
    from ..log.actionlog import ActionLog
    from .store import LearningStore


@dataclass
class Promotion:
    """What `promote` did: the commit, where it went, push and pull-request state."""

    id: str
    title: str
    commit: str
    branch: str | None
    path: str
    on_current_branch: bool
    pushed: bool = False
    remote: str | None = None
    pr_url: str | None = None
    pr_command: list[str] = field(default_factory=list)
    warning: str | None = None

    def to_dict(self) -> Promoted:
        return {
            "id": self.id,
            "title": self.title,
            "commit": self.commit,
            "branch": self.branch,
            "path": self.path,
            "on_current_branch": self.on_current_branch,
            "pushed": self.pushed,
            "remote": self.remote,
            "pr_url": self.pr_url,
            "pr_command": list(self.pr_command),
            "warning": self.warning,
        }


@dataclass
class HistoryEntry:
    """One commit that touched a learning file."""

    commit: str
    short: str
    author: str
    date: str
    subject: str
    change: str  # A, M, D or R (added, modified, deleted, renamed)
    path: str

    def to_dict(self) -> LearningHistoryEntry:
        return {
            "commit": self.commit,
            "short": self.short,
            "author": self.author,
            "date": self.date,
            "subject": self.subject,
            "change": self.change,
            "path": self.path,
        }


def _draft(store: LearningStore, learning_id: str) -> Learning:
    lid = store.resolve_id(learning_id, missing_ok=True)
    path = store.layout.drafts / f"{lid}.md"
    if not path.is_file():
        if (store.layout.learnings / f"{lid}.md").is_file():
            raise UsageError("{} is already published (learnings/{}.md), not a draft", lid, lid)
        raise LoreError("no draft with id {!r} (see `lore drafts`)", lid)
    return store.get(lid)


def _refuse_staged(repo: Repo, allowed: set[str], action: str) -> None:
    other = [p for p in staged_paths(work_tree(repo)) if p not in allowed]
    if other:
        shown = ", ".join(other[:3]) + (f" and {len(other) - 3} more" if len(other) > 3 else "")
        raise UsageError(
            "the git index already holds staged changes ({}) that would be mixed into "
            "the {} commit: commit or unstage them first (git restore --staged), "
            "or use --branch",
            shown,
            action,
        )


def _message(verb: str, learning: Learning, body: str = "") -> str:
    subject = f"lore(learning): {verb} {learning.id}: {learning.title}"
    return f"{subject}\n\n{body}\n" if body else subject + "\n"


def promote(
    store: LearningStore,
    action_log: ActionLog,
    learning_id: str,
    *,
    branch: str | None = None,
    push: bool = False,
    pr: bool = False,
    remote: str = "origin",
) -> Promotion:
    """Publish a draft in one commit (see the module docstring); log `learning_promoted`."""
    if pr and branch is None:
        raise UsageError("--pr needs --branch: a pull request is opened from a new branch")
    draft = _draft(store, learning_id)
    repo = open_repo(store.layout.root)
    waiting = published_branches(store).get(draft.id)
    if waiting is not None:
        raise UsageError(
            "{} is already published on branch {} (merge it, or delete that branch to publish "
            "again)",
            draft.id,
            waiting,
        )
    if branch is not None:
        branch = branch or f"lore/learning/{draft.id}"
        _check_branch_name(repo, branch)
    elif push and current_branch(repo) is None:
        raise UsageError("HEAD is detached: there is no branch to push (use --branch)")
    published = store.sanitized(draft.model_copy(update={"status": "published"}))
    published.path = store.layout.learnings / f"{draft.id}.md"
    refuse_symlinks(published.path)  # a planted link must not take the published file away
    if published.path.exists():
        raise LoreError("{} already exists; nothing was done", store.layout.rel(published.path))
    assert draft.path is not None
    draft_rel = rel_path(repo, draft.path)
    dest_rel = rel_path(repo, published.path)
    data = render_learning(published).encode("utf-8")
    message = _message("publish", published)
    if branch is not None:
        commit = commit_on_new_branch(repo, branch, message, {dest_rel: data}, [draft_rel])
        target: str | None = branch
    else:
        _refuse_staged(repo, {draft_rel, dest_rel}, "promotion")
        commit = commit_changes(
            repo, message, writes={published.path: data}, removes=[draft.path], rels=[dest_rel]
        )
        target = current_branch(repo)
    result = Promotion(
        id=draft.id,
        title=published.title,
        commit=commit,
        branch=target,
        path=dest_rel,
        on_current_branch=branch is None,
    )
    try:
        if (push or pr) and target is not None:
            try:
                push_branch(repo, remote, target)
            except GitError as exc:
                raise GitError(
                    "published {} in {} on branch {}, but {}", draft.id, commit[:12], target, exc
                ) from None
            result.pushed, result.remote = True, remote
        if pr:
            _open_pr(repo, result, base=current_branch(repo))
    finally:  # the commit exists whatever happens to the push or the pull request
        _log_review(
            action_log,
            "learning_promoted",
            {
                "learning": draft.id,
                "title": published.title,
                "commit": commit,
                "branch": target,
                "pushed": result.pushed,
                "pr": result.pr_url,
            },
        )
    return result


def _log_review(action_log: ActionLog, action_type: str, context: dict[str, object]) -> None:
    """Log a reviewer's action: in the caller's session when one is named (LORE_SESSION),
    else in a session of its own that ends at once (the shared automatic session would stay
    listed as active for the day although the reviewer is done)."""
    if action_log.appender.default_session(None):
        action_log.log(action_type, outcome="success", context=context)
        return
    moment = utcnow()
    sid = action_log.start(session_type="cli", meta={"review": True}, now=moment)["session"]
    action_log.log(action_type, session=sid, outcome="success", context=context, now=moment)
    action_log.end(sid, reason="normal", now=moment)


def published_branches(store: LearningStore) -> dict[str, str]:
    """Draft id -> a local branch (not the current one) that already holds the draft as a
    published learning: published there with `promote --branch`, waiting for its merge.
    Outside a git repository there are no branches, so none."""
    drafts = {path.stem for path in store.layout.drafts.glob("*.md")}
    repo = find_repo(store.layout.root) if drafts else None
    if repo is None:
        return {}
    here = current_branch(repo)
    folder = rel_path(repo, store.layout.learnings)
    found: dict[str, str] = {}
    refs = run(repo, "for-each-ref", "--format=%(refname:short)", "refs/heads")
    for branch in sorted(refs.split()):
        if branch == here:
            continue
        names = run(repo, "ls-tree", "--name-only", f"refs/heads/{branch}", "--", f"{folder}/")
        for name in names.splitlines():
            stem = name.rsplit("/", 1)[-1].removesuffix(".md")
            if stem in drafts:
                found.setdefault(stem, branch)
    return found


def _check_branch_name(repo: Repo, branch: str) -> None:
    if not is_branch_name(repo, branch):
        raise UsageError("{!r} is not a valid branch name", branch)
    if branch_exists(repo, branch):
        raise UsageError("branch {!r} already exists: choose another name with --branch", branch)


def _open_pr(repo: Repo, result: Promotion, base: str | None) -> None:
    command = ["gh", "pr", "create", "--head", result.branch or ""]
    if base:
        command += ["--base", base]
    command += ["--title", f"lore(learning): publish {result.id}: {result.title}"]
    command += ["--body", f"Publishes the learning `{result.path}` for review."]
    result.pr_command = command
    gh = shutil.which("gh")
    if gh is None:
        result.warning = f"gh is not on PATH; open the pull request with: {shlex.join(command)}"
        return
    done = subprocess.run(
        [gh, *command[1:]],
        cwd=work_tree(repo),
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    if done.returncode != 0:
        detail = (done.stderr or done.stdout).strip().splitlines() or ["(no output)"]
        raise LoreError(
            "published {} on branch {} (pushed) but `gh pr create` failed: {}",
            result.id,
            result.branch,
            detail[0],
        )
    result.pr_url = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else None


def reject(
    store: LearningStore, action_log: ActionLog, learning_id: str, *, reason: str
) -> Rejected:
    """Remove a draft (in a commit when git tracks it) and log `learning_rejected`."""
    if not reason or not reason.strip():
        raise UsageError("a rejection needs a reason (--reason TEXT)")
    draft = _draft(store, learning_id)
    assert draft.path is not None
    reason_text, _ = store.sanitizer.redact_text(" ".join(reason.split()))
    repo = open_repo(store.layout.root)
    rel = rel_path(repo, draft.path)
    commit = None
    if tracked_in_head(repo, rel) or in_index(repo, rel):
        _refuse_staged(repo, {rel}, "rejection")
        message = _message("reject", draft, f"Reason: {reason_text}")
        commit = commit_changes(repo, message, writes={}, removes=[draft.path], rels=[])
    else:  # never committed: nothing to record in git, the log keeps the reason
        draft.path.unlink()
    _log_review(
        action_log,
        "learning_rejected",
        {
            "learning": draft.id,
            "title": draft.title,
            "reason": reason_text,
            "commit": commit,
        },
    )
    return {
        "id": draft.id,
        "title": draft.title,
        "reason": reason_text,
        "commit": commit,
        "path": rel,
    }


def history(store: LearningStore, learning_id: str) -> list[HistoryEntry]:
    """Commits touching `learnings/<id>.md` or `learnings/drafts/<id>.md`, newest first (an
    id prefix names the existing learning it starts)."""
    lid = store.resolve_id(learning_id, missing_ok=True)
    repo = open_repo(store.layout.root)
    if head_commit(repo) is None:
        return []
    layout = store.layout
    paths = [
        rel_path(repo, layout.learnings / f"{lid}.md"),
        rel_path(repo, layout.drafts / f"{lid}.md"),
    ]
    entries = [HistoryEntry(*commit) for commit in path_history(repo, paths)]
    if not entries and not store.exists(lid):
        raise LoreError("no learning or draft with id {!r} and no commits that touched one", lid)
    return entries
