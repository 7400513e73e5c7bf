"""`lore index`."""

from __future__ import annotations

import click

from ... import Lorebook, Sanitizer
from ...render.maintenance import index_text
from ..output import ProblemPrinter, to_json, warning_line
from .common import json_option, pass_book


def warn(message: str, sanitizer: Sanitizer | None = None) -> None:
    """A warning on stderr, redacted with `sanitizer` (the store's)."""
    click.echo(warning_line(message, sanitizer), err=True)


@click.command("index")
@click.option("--rebuild", is_flag=True, help="Drop the index and build it again from the files.")
@json_option
@pass_book
def index(book: Lorebook, rebuild: bool, as_json: bool) -> None:
    """Bring the search index up to date with learnings/ (incremental by content hash).

    The index lives under .lore/cache/index/ and is derived: delete it any time and it is
    rebuilt. Unchanged files are never embedded again; deleted files leave the index; files
    that cannot be parsed are skipped with file:line.

    \b
    Example:
      lore index             # added / updated / removed / unchanged
      lore index --rebuild --json
    """
    searcher = book.index
    searcher.on_warning(lambda message: warn(message, book.sanitizer))
    problems = ProblemPrinter(sanitizer=book.sanitizer)
    report = searcher.update(rebuild=rebuild, on_problem=problems)
    problems.finish()
    model = searcher.embedder()
    data = report.to_dict()
    data["model"] = model.name if model else None
    click.echo(to_json(data) if as_json else index_text(data, data["model"]))
