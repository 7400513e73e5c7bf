"""`lore stats`: applications, success rates and pattern figures, derived from the log."""

from __future__ import annotations

import click

from ... import Lorebook
from ...render.stats import stats_table
from ..output import ProblemPrinter, to_json
from .common import json_option, pass_book


@click.command("stats")
@click.argument("learning_id", metavar="[ID]", required=False)
@json_option
@pass_book
def stats(book: Lorebook, learning_id: str | None, as_json: bool) -> None:
    """Applications, success rate and last applied per learning, plus pattern figures.

    Every figure is computed from `apply_learning` and `occurrence` actions in the log
    (de-duplicated by action id); nothing is stored in the learning files.

    \b
    Examples:
      lore stats
      lore stats 2026-11-22-rls-policy-blocks-insert-k3x9qa --json
    """
    problems = ProblemPrinter(sanitizer=book.sanitizer)
    entries = book.knowledge.stats(learning_id, on_problem=problems)
    if as_json:
        click.echo(to_json(entries[0] if learning_id else entries))
    else:
        click.echo(stats_table(entries))
    problems.finish()
