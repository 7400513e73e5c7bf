"""`lore resume`."""

from __future__ import annotations

import click

from ... import Lorebook
from ...render.actions import resume_brief
from ..output import ProblemPrinter, to_json
from .common import COUNT, json_option, pass_book


@click.command("resume")
@click.option("--project", help="Only sessions of this project.")
@click.option("--agent", help="Only sessions of this agent.")
@click.option("--session", help="Resume this session instead of choosing one.")
@click.option("--limit", type=COUNT, default=20, show_default=True, help="Recent actions to show.")
@json_option
@pass_book
def resume(
    book: Lorebook,
    project: str | None,
    agent: str | None,
    session: str | None,
    limit: int,
    as_json: bool,
) -> None:
    """Where the last session left off, and what to do next (offline, from the files).

    Picks the most recent session (of PROJECT/AGENT) that did not end normally, else the most
    recent one, and prints a Markdown brief to paste into a prompt: work in progress, actions
    never closed, failed validations, suggested next steps, git state and the last actions.

    \b
    Example:
      lore resume --project consilio --json
    """
    problems = ProblemPrinter()
    state = book.resume(
        project=project, agent=agent, session=session, limit=limit, on_problem=problems
    )
    click.echo(to_json(state) if as_json else resume_brief(state))
    problems.finish()
