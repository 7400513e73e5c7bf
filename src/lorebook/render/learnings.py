"""Learnings for people: lists, one learning, stale anchors, drafts written, review results.

Pure functions over the JSON shapes (`to_dict()`) the API returns; paths are shown relative to
the store's root, which the caller passes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .table import table


def relative(path: str | None, root: str | Path) -> str | None:
    """`path` relative to `root` when it is inside it, else as it is (None stays None)."""
    if not path:
        return None
    try:
        return str(Path(path).relative_to(root))
    except ValueError:
        return str(path)


def learning_row(learning: dict[str, Any]) -> tuple[str, str, str, str]:
    """(id, status, kind, title + [stale]) of one learning."""
    flags = " [stale]" if learning.get("stale") else ""
    kind = learning["kind"] if learning["kind"] != "lesson" else ""
    return learning["id"], learning["status"], kind, f"{learning['title']}{flags}"


def learnings_table(learnings: list[dict[str, Any]], empty: str) -> str:
    """One line per learning (id, status, kind, title, [stale]) in aligned columns, or `empty`."""
    return table(None, (learning_row(x) for x in learnings)) if learnings else empty


def written(learning: dict[str, Any], root: str | Path) -> str:
    """`<status> <id>: <file>` after `lore learn new`."""
    where = relative(learning["path"], root) or learning["id"]
    return f"{learning['status']} {learning['id']}: {where}"


def learning_text(learning: dict[str, Any], root: str | Path) -> str:
    """`lore show`: the title, the facts that are set, solutions, prevention, then the body."""
    lines = [f"{learning['title']}\n"]
    facts = [
        ("id", learning["id"]),
        ("status", learning["status"] + (" (stale)" if learning.get("stale") else "")),
        ("kind", learning.get("kind")),
        ("category", learning.get("category")),
        ("severity", learning.get("severity")),
        ("tags", ", ".join(learning.get("tags") or [])),
        ("created", learning.get("created")),
        ("anchors", ", ".join(learning.get("anchors") or [])),
        ("supersedes", ", ".join(learning.get("supersedes") or [])),
        ("file", relative(learning.get("path"), root)),
    ]
    lines += [f"{name + ':':<12}{value}" for name, value in facts if value]
    for solution in learning.get("solutions") or []:
        lines.append(f"{'solution:':<12}{solution['id']}: {solution['text']}")
    for item in learning.get("prevention") or []:
        lines.append(f"{'prevention:':<12}{item}")
    lines.append(f"\n{learning['body'].rstrip()}")
    return "\n".join(lines)


def stale_text(reports: Sequence[Mapping[str, Any]]) -> str:
    """`lore stale`: each learning, then each anchor that changed and the commits (5 at most)."""
    if not reports:
        return "no stale learnings"
    lines = []
    for report in reports:
        lines.append(f"{report['id']}  {report['title']}")
        for change in report["anchors"]:
            lines.append(f"  {change['anchor']}: {anchor_change(change)}")
    return "\n".join(lines)


def anchor_change(change: Mapping[str, Any]) -> str:
    """How one anchor changed since its learning's last commit: the reason, whether it is
    uncommitted, and the commits (5 at most)."""
    commits = f" ({', '.join(change['commits'][:5])})" if change["commits"] else ""
    where = " (uncommitted)" if change.get("uncommitted") else ""
    return f"{change['reason']}{where}{commits}"


def draft_outcome(outcome: dict[str, Any], root: str | Path) -> str:
    """One line for a drafting outcome: where the draft went, or which learning it duplicates."""
    if outcome["status"] == "duplicate" and outcome.get("duplicate_of") is not None:
        return (
            f"not written: near-duplicate of {outcome['duplicate_of']} "
            f"({outcome['similarity']:.0%} similar); logged as a blocked learning_draft action"
        )
    if outcome["status"] == "drafted" and outcome.get("can_force"):
        return (
            f"not written: {outcome['subject']} was drafted before as {outcome['drafted_as']} "
            "(--force writes another); logged as a blocked learning_draft action"
        )
    if outcome["status"] == "drafted":
        return (
            f"not written: this trigger was drafted before as {outcome['drafted_as']}; "
            "logged as a blocked learning_draft action"
        )
    line = f"draft {relative(outcome['path'], root)}"
    if outcome["supersedes"]:
        similar = ", ".join(f"{m['id']} ({m['similarity']:.0%})" for m in outcome["supersedes"])
        line += f"  (supersedes suggested: {similar})"
    return line


def promoted(result: Mapping[str, Any]) -> str:
    """`lore promote`: the commit and branch, the push, the pull request."""
    where = f"branch {result['branch']}" if result["branch"] else "detached HEAD"
    lines = [f"published {result['id']} in {result['commit'][:12]} on {where}: {result['path']}"]
    if result.get("pushed"):
        lines.append(f"pushed {result['branch']} to {result['remote']}")
    if result.get("pr_url"):
        lines.append(f"pull request: {result['pr_url']}")
    return "\n".join(lines)


def rejected(result: Mapping[str, Any]) -> str:
    commit = f" in {result['commit'][:12]}" if result["commit"] else " (it was never committed)"
    return f"rejected {result['id']}{commit}: {result['reason']}"


def history_text(entries: Sequence[Mapping[str, Any]]) -> str:
    """`lore history`: one commit a line, newest first."""
    if not entries:
        return "no commits yet (the file was never committed)"
    return "\n".join(
        f"{e['short']}  {e['date'][:10]}  {e['change']}  {e['author']}  {e['subject']}"
        for e in entries
    )


def pattern_written(learning: dict[str, Any], root: str | Path) -> str:
    """`lore pattern new`: `<id> (<file>)`."""
    return f"{learning['id']} ({relative(learning['path'], root) or learning['id']})"


def rca_added(learning: dict[str, Any], root: str | Path) -> str:
    """`lore rca add`: whether the lesson is new (`created_now`), its id and file."""
    verb = "added" if learning["created_now"] else "already present"
    return f"{verb}: {pattern_written(learning, root)}"


def draft_review(
    draft: Mapping[str, Any],
    *,
    changed: Sequence[Mapping[str, Any]],
    branch: str | None,
    replaces: Mapping[str, str],
) -> str:
    """A draft's review pane (Markdown): where it came from (epic, session, task), its tags and
    each anchor's own state (ok, or how it `changed` since the draft's last commit: the
    `anchors` of its stale report), and what publishing it changes: the file it adds, and a
    unified diff of the body against each published learning it supersedes (`replaces`: id ->
    its body, already redacted)."""
    import difflib

    source = draft.get("source") or {}
    origin = ", ".join(f"{k} `{v}`" for k, v in source.items() if v) or "not recorded"
    changes = {change["anchor"]: change for change in changed}
    anchors = [
        f"- `{a}` ({'stale: ' + anchor_change(changes[a]) if a in changes else 'ok'})"
        for a in draft.get("anchors") or []
    ] or ["- none"]
    lines = [
        f"# {draft['title']}",
        "",
        f"**Source:** {origin}  ",
        f"**Tags:** {', '.join(draft.get('tags') or []) or 'none'}",
        "",
        "**Anchors:**",
        *anchors,
        "",
        "## What it changes",
        "",
        f"- adds `learnings/{draft['id']}.md`"
        + (f" (already published on branch `{branch}`)" if branch else ""),
    ]
    body = str(draft.get("body") or "")
    for old_id, old_body in replaces.items():
        diff = difflib.unified_diff(
            old_body.splitlines(),
            body.splitlines(),
            f"learnings/{old_id}.md",
            f"learnings/{draft['id']}.md",
            lineterm="",
        )
        lines += ["", f"- updates `{old_id}`:", "", "```diff", *diff, "```"]
    return "\n".join([*lines, "", "---", "", body])
