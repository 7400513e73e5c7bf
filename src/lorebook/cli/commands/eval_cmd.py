"""`lore eval`: search quality on the golden queries kept in git."""

from __future__ import annotations

from pathlib import Path

import click

from ... import SEARCH_MODES, Lorebook
from ...render.eval import eval_text
from ..output import ProblemPrinter, to_json, warning_line
from .common import json_option, pass_book


@click.command("eval")
@click.option(
    "--queries",
    "queries_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Golden-set YAML (default: learnings/eval.yaml in the store).",
)
@click.option(
    "--mode",
    "modes",
    type=click.Choice(SEARCH_MODES),
    multiple=True,
    help="Evaluate only these modes (repeatable; default: all three).",
)
@json_option
@pass_book
def eval_(book: Lorebook, queries_file: Path | None, modes: tuple[str, ...], as_json: bool) -> None:
    """Measure search quality: recall@1, recall@5 and MRR@10 per mode, next to a plain
    word-overlap baseline, on golden queries (query + expected learning ids).

    \b
    The golden set is YAML kept in git:
      queries:
        - query: why is a one-shot lore log slow to start
          expected: [2026-11-22-append-path-import-cost]

    \b
    Examples:
      lore eval
      lore eval --queries bench/golden.yaml --json
    """
    problems = ProblemPrinter(sanitizer=book.sanitizer)
    report = book.evaluate(queries_file, modes=modes, on_problem=problems).to_dict()
    problems.finish()
    if as_json:
        click.echo(to_json(report))
    else:
        for warning in report["warnings"]:
            click.echo(warning_line(warning, book.sanitizer), err=True)
        click.echo(eval_text(report))
