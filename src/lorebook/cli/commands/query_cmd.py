"""`lore actions` and `lore sessions`."""

from __future__ import annotations

import os
from typing import Any

import click

from ... import SESSION_STATUSES, Lorebook
from ...render.actions import sessions_table
from ..app import root_of
from ..output import ProblemPrinter, to_json
from ..queryspec import ACTIONS_DEFAULTS, ACTIONS_HELP, ACTIONS_OPTIONS, run_actions
from .common import json_option, pass_book
from .specopts import with_options


@click.command("actions", help=ACTIONS_HELP)
@with_options(ACTIONS_OPTIONS, ACTIONS_DEFAULTS)
@click.pass_context
def actions(ctx: click.Context, /, **values: Any) -> None:
    click.echo(run_actions(values, os.environ, root=root_of(ctx)))


@click.command("sessions")
@click.option("--project")
@click.option("--agent")
@click.option("--status", help=f"One of: {', '.join(SESSION_STATUSES)}.")
@json_option
@pass_book
def sessions(
    book: Lorebook, project: str | None, agent: str | None, status: str | None, as_json: bool
) -> None:
    """List sessions, most recently active first.

    A session is `ended` after its end event, `disconnected` when it has none and has been silent
    longer than sessions.idle_minutes (30), else `active`.
    """
    problems = ProblemPrinter(sanitizer=book.sanitizer)
    found = [
        s.to_dict()
        for s in book.sessions(project=project, agent=agent, status=status, on_problem=problems)
    ]
    click.echo(to_json(found) if as_json else sessions_table(found))
    problems.finish()
