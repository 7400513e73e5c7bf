"""`lore demo`."""

from __future__ import annotations

import tempfile
from pathlib import Path

import click

from ...demo import PREFLIGHT_TASK, build_demo, demo_summary, learn_expertise, search_demo
from ...render.actions import resume_brief, sessions_table
from ...render.expertise import update
from ...render.report import summary_lines
from ...render.search import search_text
from ..output import to_json
from .common import json_option


@click.command("demo")
@click.argument("directory", required=False, type=click.Path())
@json_option
def demo(directory: str | None, as_json: bool) -> None:
    """Build a realistic sample store in DIRECTORY (new or empty; default: a temp dir) and show it.

    The sample is a git repository where a supervisor agent worked on two epics over four days;
    its last session disconnected after a failed validation while a fix subagent was running.
    Shown: the sessions, the resume brief an agent would read first, what the finished
    session taught its domain's expertise file, a search and a deploy preflight, the drafts
    awaiting review, a stale learning and a week's report summary.

    \b
    Example:
      lore demo /tmp/lore-demo && cd /tmp/lore-demo && lore actions --since 7d
    """
    target = Path(directory) if directory else Path(tempfile.mkdtemp(prefix="lore-demo-"))
    book = build_demo(target.resolve())
    summary = demo_summary(book, learn_expertise(book))
    summary.update(search_demo(book))
    if as_json:
        click.echo(to_json(summary))
        return
    click.echo(f"Sample store created in {summary['root']}\n")
    click.echo("$ lore sessions")
    click.echo(sessions_table(summary["sessions"]))
    click.echo("\n$ lore resume --project consilio")
    click.echo(resume_brief(summary["resume"]))
    learned = summary["expertise"]
    click.echo(f"\n$ lore expertise learn --session {learned['session']}")
    click.echo(update(learned, "learned"))
    found = summary["search"]
    click.echo(f'\n$ lore search "{found["query"]}"')
    click.echo(search_text(found["query"], found["results"]))
    click.echo(f'\n$ lore preflight "{PREFLIGHT_TASK}" --phase deploy')
    click.echo(summary["preflight"]["text"])
    click.echo("\n$ lore drafts")
    for draft in summary["drafts"]:
        click.echo(f"{draft['id']}  {draft['title']}")
    click.echo("\n$ lore stale")
    for report in summary["stale"]:
        changes = "; ".join(f"{c['anchor']}: {c['reason']}" for c in report["anchors"])
        click.echo(f"{report['id']}  {report['title']}\n  {changes}")
    click.echo("\n$ lore report --days 7   (summary)")
    click.echo("\n".join(summary_lines(summary["report"])))
    first = summary["drafts"][0]["id"] if summary["drafts"] else "ID"
    click.echo(
        f"\nReview the draft: cd {summary['root']} && lore show {first}, then "
        f"lore promote {first} --branch"
    )
    click.echo(f"\nExplore it: cd {summary['root']} && lore actions --since 7d")
