"""`lore sync`: commit the store's new and changed files, pull (shards merge by union), push.

Only the store is ever committed — the action log, learnings and drafts, `.expertise/` and
reports — so sync is safe to run in a work tree with unrelated edits. Changes someone staged
outside the store make it refuse before anything is committed: a commit of the store would
otherwise be mixed up with them in the user's mind, and `git commit -- paths` would leave the
index in a surprising state.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import LoreError
from ..paths import Layout, git_toplevel
from . import binary

# (store part, singular, plural), in the order the message lists them
KINDS = (
    ("shard", "shard", "shards"),
    ("learning", "learning", "learnings"),
    ("draft", "draft", "drafts"),
    ("expertise", "expertise file", "expertise files"),
    ("report", "report", "reports"),
)


def store_parts(layout: Layout, top: Path) -> dict[str, str]:
    """Store part -> its folder relative to the repository top level (config may move them)."""
    parts = {
        "shard": layout.actionlog,
        "draft": layout.drafts,
        "learning": layout.learnings,
        "expertise": layout.expertise,
        "report": layout.reports,
    }
    out = {}
    for kind, path in parts.items():
        try:
            out[kind] = path.resolve().relative_to(top.resolve()).as_posix()
        except ValueError:
            continue  # a part moved outside the repository is not git's to commit
    return out


def kind_of(path: str, parts: dict[str, str]) -> str | None:
    """The store part a path belongs to (the deepest folder wins: drafts inside learnings)."""
    best: tuple[int, str] | None = None
    for kind, folder in parts.items():
        inside = folder in ("", ".") or path == folder or path.startswith(folder + "/")
        if inside and (best is None or len(folder) > best[0]):
            best = (len(folder), kind)
    return best[1] if best else None


def is_placeholder(path: str) -> bool:
    """`.gitkeep` and other dot files keep folders in git; they are committed, not counted."""
    return path.rpartition("/")[2].startswith(".")


def commit_message(
    changes: list[tuple[str, str]], kinds: dict[str, str], subject: str | None
) -> str:
    """`lore sync: 12 shards, 1 learning, 1 report` and a body listing each file."""
    counts = {kind: 0 for kind, _, _ in KINDS}
    for _, path in changes:
        if not is_placeholder(path):
            counts[kinds[path]] += 1
    summary = ", ".join(
        f"{counts[kind]} {one if counts[kind] == 1 else many}"
        for kind, one, many in KINDS
        if counts[kind]
    )
    body = "\n".join(f"{letter} {path}" for letter, path in sorted(changes, key=lambda c: c[1]))
    return f"{subject or 'lore sync: ' + (summary or 'store layout')}\n\n{body}\n"


def sync(layout: Layout, *, push: bool = True, message: str | None = None) -> dict[str, Any]:
    """Commit the store, pull, push; a summary of what was done. A pull conflict aborts the
    merge (the store commit stays) and raises a LoreError naming the files."""
    root = layout.root
    if not binary.is_work_tree(root):
        raise LoreError(f"{root} is not in a git repository: run `git init` first, then sync")
    if message is not None and not message.strip():
        raise LoreError("--message is empty: give the commit subject or leave the option out")
    top = git_toplevel(root) or root
    parts = store_parts(layout, top)
    folders = sorted(set(parts.values()))
    outside = [p for p in binary.staged_paths(root) if kind_of(p, parts) is None]
    if outside:
        listed = ", ".join(outside[:5]) + (
            f" (+{len(outside) - 5} more)" if len(outside) > 5 else ""
        )
        raise LoreError(
            f"staged changes outside the store: {listed}; commit or unstage them "
            "(git restore --staged <file>), then run lore sync again; nothing was committed"
        )
    changes = [(letter, p) for letter, p in binary.changed_under(root, folders)]
    kinds = {p: kind_of(p, parts) or "shard" for _, p in changes}
    result: dict[str, Any] = {
        "committed": None,
        "files": [{"path": p, "change": letter, "kind": kinds[p]} for letter, p in changes],
        "counts": {
            kind: sum(1 for p, k in kinds.items() if k == kind and not is_placeholder(p))
            for kind, _, _ in KINDS
        },
        "subject": None,
        "upstream": None,
        "pulled": False,
        "pushed": False,
    }
    if changes:
        text = commit_message(changes, kinds, message.strip() if message else None)
        result["committed"] = binary.commit_paths(root, [p for _, p in changes], text)
        result["subject"] = text.splitlines()[0]
    upstream = binary.upstream(root)
    result["upstream"] = upstream
    result["remote"] = binary.has_remote(root)
    if upstream is None:
        return result
    before = binary.head(root)
    conflicts = binary.pull_merge(root)
    if conflicts:
        kept = (
            f"the store commit {result['committed'][:7]} is kept; " if result["committed"] else ""
        )
        raise LoreError(
            f"git pull conflicts in {', '.join(conflicts)}: merge aborted; {kept}"
            "resolve them with git pull, then run lore sync again"
        )
    result["pulled"] = binary.head(root) != before
    if push and binary.ahead_count(root) > 0:
        binary.push(root)
        result["pushed"] = True
    return result
