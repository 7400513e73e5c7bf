"""`lore demo`."""

from __future__ import annotations

import tempfile
from pathlib import Path

import click

from ...demo import run_demo
from ...render.demo import demo_text
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
    summary = run_demo(target.resolve())
    if as_json:
        click.echo(to_json(summary))
        return
    click.echo(demo_text(summary))
