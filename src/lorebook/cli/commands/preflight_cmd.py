"""`lore preflight`."""

from __future__ import annotations

import click

from ... import PREFLIGHT_PHASES, Lorebook
from ..output import to_json
from .common import COUNT, json_option, pass_book
from .index_cmd import warn


@click.command("preflight")
@click.argument("task", nargs=-1, required=True)
@click.option(
    "--phase",
    type=click.Choice(PREFLIGHT_PHASES),
    default="plan",
    show_default=True,
    help="deploy puts deployment learnings and high severity first.",
)
@click.option("--limit", type=COUNT, default=5, show_default=True, help="How many learnings.")
@json_option
@pass_book
def preflight(book: Lorebook, task: tuple[str, ...], phase: str, limit: int, as_json: bool) -> None:
    """Before planning, implementing or deploying: what the team already learned.

    Prints a block to paste into a prompt: RELEVANT PAST LEARNINGS (title + key takeaway),
    matching patterns with their best solution and success rate, a prevention checklist and the
    domain expertise summary when .expertise/ has one. Every line is redacted again before it
    is printed; the call is logged as a `search` action.

    \b
    Example:
      lore preflight "add row level security to the orders table"
      lore preflight "ship the api service" --phase deploy --json
    """
    book.index.on_warning(warn)
    brief = book.preflight(" ".join(task), phase=phase, limit=limit)
    click.echo(to_json(brief) if as_json else brief["text"])
