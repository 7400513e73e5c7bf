"""`lore demo` for people: the sample store shown command by command (pure, from
`Lorebook.demo()`'s summary)."""

from __future__ import annotations

from typing import Any

from .actions import resume_brief, sessions_table
from .expertise import update
from .report import summary_lines
from .search import search_text


def demo_text(summary: dict[str, Any]) -> str:
    """What each `lore` command shows on the sample, then how to explore it."""
    root = summary["root"]
    learned = summary["expertise"]
    found = summary["search"]
    preflight = summary["preflight"]
    lines = [
        f"Sample store created in {root}\n",
        "$ lore sessions",
        sessions_table(summary["sessions"]),
        "\n$ lore resume --project consilio",
        resume_brief(summary["resume"]),
        f"\n$ lore expertise learn --session {learned['session']}",
        update(learned, "learned"),
        f'\n$ lore search "{found["query"]}"',
        search_text(found["query"], found["results"]),
        f'\n$ lore preflight "{preflight["task"]}" --phase {preflight["phase"]}',
        preflight["text"],
        "\n$ lore drafts",
    ]
    lines += [f"{draft['id']}  {draft['title']}" for draft in summary["drafts"]]
    lines.append("\n$ lore stale")
    for report in summary["stale"]:
        changes = "; ".join(f"{c['anchor']}: {c['reason']}" for c in report["anchors"])
        lines.append(f"{report['id']}  {report['title']}\n  {changes}")
    lines.append("\n$ lore report --days 7   (summary)")
    lines += summary_lines(summary["report"])
    first = summary["drafts"][0]["id"] if summary["drafts"] else "ID"
    lines.append(
        f"\nReview the draft: cd {root} && lore show {first}, then lore promote {first} --branch"
    )
    lines.append(f"\nExplore it: cd {root} && lore actions --since 7d")
    return "\n".join(lines)
