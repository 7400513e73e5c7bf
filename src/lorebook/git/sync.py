"""`lore sync`: commit the store's new and changed files, pull (shards merge by union), push.

Only the store is ever committed — the action log, learnings and drafts, `.expertise/` and
reports — so sync is safe to run in a work tree with unrelated edits. Changes someone staged
outside the store make it refuse before anything is committed: a commit of the store would
otherwise be mixed up with them in the user's mind, and `git commit -- paths` would leave the
index in a surprising state.

One file outside the store is committed too: `.gitattributes`, when `lore init` added the
union-merge rule for shards and it was never committed (a clone without it merges two writers'
lines of one shard as a conflict). Only lorebook's own lines are committed; anything else the
user changed in that file stays uncommitted, and other staged changes to it make sync refuse.
File names are written to the commit message and printed only through the caller's name
redactor: a hand-made file may be named after a secret.

Clones logging into one shared session merge one shard by union in different orders, and git
then repeats lines; every shard a pull changed is rewritten without exact repeats (first
occurrence kept, in order) and the repair is committed with the merge. A push rejected because
another clone pushed first is retried (pull, then push), a few times with a jittered pause.
During a paused rebase, merge, cherry-pick, revert, bisect or am sync refuses: its commit would
land on the operation's HEAD. Records logged meanwhile wait in side shards, folded back here.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import LoreError
from ..paths import UNION_COMMENT, Layout, git_toplevel
from ..store import SIDE, append_line, drop_repeated_lines, git_operation
from . import binary, remote

PUSH_ATTEMPTS = 8  # pull-then-push rounds before a rejected push is an error (N clones
# pushing at once need up to N: one wins each round)
# what to run to end each paused operation
FINISH = {
    "rebase": "git rebase --continue or git rebase --abort",
    "am": "git am --continue or git am --abort",
    "merge": "git commit (after resolving) or git merge --abort",
    "cherry-pick": "git cherry-pick --continue or git cherry-pick --abort",
    "revert": "git revert --continue or git revert --abort",
    "bisect": "git bisect reset",
}

ATTRIBUTES = "attributes"  # the kind of `.gitattributes` in the result (listed, not counted)
# what to do about a conflicting file of each kind, after `git pull --no-rebase`
RESOLVE = {
    "learning": "edit each file to keep what both sides wrote, without the conflict markers",
    "draft": "edit each file to keep what both sides wrote, without the conflict markers",
    "expertise": "edit each file to keep what both sides wrote, without the conflict markers",
    "report": "take either side (git checkout --theirs <file>): reports are regenerated",
    "shard": "keep both sides' lines (readers de-duplicate actions by id)",
}

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
    changes: list[tuple[str, str]],
    kinds: dict[str, str],
    subject: str | None,
    redact_name: Callable[[str], str],
) -> str:
    """`lore sync: 12 shards, 1 learning, 1 report` and a body listing each file (its name
    redacted)."""
    counts = {kind: 0 for kind, _, _ in KINDS}
    for _, path in changes:
        if not is_placeholder(path):
            counts[kinds[path]] += 1
    summary = ", ".join(
        f"{counts[kind]} {one if counts[kind] == 1 else many}"
        for kind, one, many in KINDS
        if counts[kind]
    )
    body = "\n".join(
        f"{letter} {redact_name(path)}" for letter, path in sorted(changes, key=lambda c: c[1])
    )
    return f"{subject or 'lore sync: ' + (summary or 'store layout')}\n\n{body}\n"


def attributes_update(layout: Layout, top: Path) -> tuple[str, str] | None:
    """(path from the top level, content to stage) when `.gitattributes` holds lorebook's
    union-merge rule and the last commit does not: the committed content plus lorebook's lines,
    nothing else. None when there is nothing of lorebook's to commit."""
    try:
        text = layout.attributes.read_text(encoding="utf-8")
        rel = layout.attributes.resolve().relative_to(top.resolve()).as_posix()
    except (OSError, UnicodeDecodeError, ValueError):
        return None  # absent, unreadable or outside the repository: `lore check` is the judge
    ours = [UNION_COMMENT, layout.union_rule]
    lines = text.splitlines()
    if ours[1] not in lines:
        return None  # the user took the rule out: not ours to put back
    committed = binary.file_at(top, "HEAD", rel) or ""
    if ours[1] in committed.splitlines():
        return None
    added = [line for line in ours if line in lines and line not in committed.splitlines()]
    prefix = "" if not committed or committed.endswith("\n") else "\n"
    return rel, committed + prefix + "".join(line + "\n" for line in added)


def listed(paths: list[str], redact_name: Callable[[str], str]) -> str:
    """`a, b, c, d, e (+3 more)`, every name redacted."""
    more = f" (+{len(paths) - 5} more)" if len(paths) > 5 else ""
    return ", ".join(redact_name(p) for p in paths[:5]) + more


def conflict_error(
    conflicts: list[str],
    parts: dict[str, str],
    committed: str | None,
    redact_name: Callable[[str], str],
) -> LoreError:
    """The one line for a pull that stopped on conflicts: which files (and what each is),
    that the merge was aborted and the store commit kept, and how to resolve them."""
    named = []
    steps = []
    for path in conflicts:
        kind = kind_of(path, parts)
        named.append(redact_name(path) + (f" ({kind})" if kind else ""))
        how = RESOLVE.get(kind or "", "resolve them as any git conflict")
        if how not in steps:
            steps.append(how)
    files = ", ".join(named[:5]) + (f" (+{len(named) - 5} more)" if len(named) > 5 else "")
    both = " (changed in both clones)" if any(kind_of(p, parts) for p in conflicts) else ""
    kept = f"the store commit {committed[:7]} is kept; " if committed else ""
    return LoreError(
        "git pull conflicts in {}{}: merge aborted; {}to resolve, run git pull --no-rebase, "
        "{}, git add the files and git commit, then run lore sync again",
        files,
        both,
        kept,
        "; ".join(steps),
    )


def refuse_during_operation(root: Path) -> None:
    """One line saying what to finish first when a git operation is paused in `root`."""
    found = remote.git_dir(root)
    operation = git_operation(found) if found is not None else None
    if operation is not None:
        raise LoreError(
            "a git {} is in progress: finish it ({}), then run "
            "lore sync again; nothing was committed (records logged meanwhile are kept)",
            operation,
            FINISH[operation],
        )


def fold_side_shards(actionlog: Path) -> int:
    """Append each side shard's lines (written during a git operation) that its session's
    shard lacks to that shard, then remove the side shard; how many were folded."""
    folded = 0
    for side in sorted(actionlog.glob(f"[0-9]*/[0-9]*/[0-9]*/*{SIDE}.jsonl")):
        if side.is_symlink() or not side.is_file():
            continue  # `lore check` reports it
        main = side.with_name(side.name[: -len(SIDE + ".jsonl")] + ".jsonl")
        have = set(main.read_bytes().splitlines()) if main.is_file() else set()
        lines = [raw for raw in side.read_bytes().splitlines() if raw.strip() and raw not in have]
        if lines:
            append_line(str(main), b"".join(raw + b"\n" for raw in lines))
        side.unlink()
        folded += 1
    return folded


def without_repeats(top: Path, changed: list[str]) -> list[str]:
    """Rewrite each changed shard without exact repeated lines; the ones rewritten."""
    fixed = []
    for rel in changed:
        path = top / rel
        shard = rel.endswith(".jsonl") and path.is_file() and not path.is_symlink()
        if shard and drop_repeated_lines(str(path)):
            fixed.append(rel)
    return fixed


def pull_and_push(
    root: Path,
    top: Path,
    shards: str | None,
    push: bool,
    on_conflict: Callable[[list[str]], LoreError],
) -> tuple[bool, bool, list[str]]:
    """Pull (merge), drop the repeats the merge made in shards, commit, push; a push rejected
    because another clone pushed first goes round again. (pulled, pushed, shards repaired)."""
    import random
    import time

    pulled = False
    repaired: list[str] = []
    for attempt in range(1, PUSH_ATTEMPTS + 1):
        before = binary.head(root)
        conflicts = remote.pull_merge(root)
        if conflicts:
            raise on_conflict(conflicts)
        fixed = without_repeats(
            top, remote.changed_since(root, before, [shards]) if shards and before else []
        )
        if remote.merging(root):
            remote.commit_merge(root, fixed)
        elif fixed:
            binary.commit_paths(
                root, fixed, f"lore sync: {len(fixed)} shard(s) without repeated lines\n"
            )
        repaired += [p for p in fixed if p not in repaired]
        pulled = pulled or binary.head(root) != before
        if not push or binary.ahead_count(root) == 0:
            return pulled, False, repaired
        if remote.push(root):
            return pulled, True, repaired
        if attempt < PUSH_ATTEMPTS:
            time.sleep(random.uniform(0.05, 0.25) * attempt)  # another clone pushed first
    raise LoreError(
        "git push was rejected {} times (other clones kept pushing first): the "
        "store commit is kept; run lore sync again",
        PUSH_ATTEMPTS,
    )


def sync(
    layout: Layout,
    *,
    redact_name: Callable[[str], str],
    redact_text: Callable[[str], str] = str,
    push: bool = True,
    message: str | None = None,
) -> dict[str, Any]:
    """Commit the store, pull, push; a summary of what was done. A pull conflict aborts the
    merge (the store commit stays) and raises a LoreError naming the files. `redact_name`
    replaces the secret-looking parts of a file name in messages and the result, `redact_text`
    those of git's own messages."""
    root = layout.root
    if not binary.is_work_tree(root):
        raise LoreError("{} is not in a git repository: run `git init` first, then sync", root)
    if message is not None and not message.strip():
        raise LoreError("--message is empty: give the commit subject or leave the option out")
    refuse_during_operation(root)
    try:
        return _sync(layout, redact_name=redact_name, push=push, message=message)
    except binary.GitError as exc:
        if exc.template is None:
            raise binary.GitError(redact_text(str(exc))) from None
        shown = [(value, redact_text(str(value))) for value in exc.values]  # lorebook's words kept
        values = [value if clean == str(value) else clean for value, clean in shown]
        raise binary.GitError(exc.template, *values) from None


def _sync(
    layout: Layout,
    *,
    redact_name: Callable[[str], str],
    push: bool,
    message: str | None,
) -> dict[str, Any]:
    root = layout.root
    top = git_toplevel(root) or root
    fold_side_shards(layout.actionlog)
    parts = store_parts(layout, top)
    folders = sorted(set(parts.values()))
    attributes = attributes_update(layout, top)
    outside = [
        p
        for p in binary.staged_paths(root)
        if kind_of(p, parts) is None
        and not (attributes and p == attributes[0] and binary.file_at(top, "", p) == attributes[1])
    ]
    if outside:
        raise LoreError(
            "staged changes outside the store: {}; commit or "
            "unstage them (git restore --staged <file>), then run lore sync again; nothing was "
            "committed",
            listed(outside, redact_name),
        )
    changes = [(letter, p) for letter, p in binary.changed_under(root, folders)]
    kinds = {p: kind_of(p, parts) or "shard" for _, p in changes}
    if attributes:
        new = binary.file_at(top, "HEAD", attributes[0]) is None
        changes.append(("A" if new else "M", attributes[0]))
        kinds[attributes[0]] = ATTRIBUTES
    result: dict[str, Any] = {
        "committed": None,
        "files": [
            {"path": redact_name(p), "change": letter, "kind": kinds[p]} for letter, p in changes
        ],
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
        text = commit_message(changes, kinds, message.strip() if message else None, redact_name)
        if attributes:
            binary.stage_text(top, *attributes)
        store_files = [p for _, p in changes if kinds[p] != ATTRIBUTES]
        result["committed"] = binary.commit_paths(root, store_files, text)
        result["subject"] = text.splitlines()[0]
    upstream = binary.upstream(root)
    result["upstream"] = upstream
    result["remote"] = binary.has_remote(root)
    if upstream is None:
        return result
    pulled, pushed, repaired = pull_and_push(
        root,
        top,
        parts.get("shard"),
        push,
        lambda conflicts: conflict_error(conflicts, parts, result["committed"], redact_name),
    )
    result["pulled"], result["pushed"] = pulled, pushed
    result["repaired"] = [redact_name(p) for p in repaired]
    return result
