"""`lore index`."""

from __future__ import annotations

import sys
from typing import Any

import click

from ... import Lorebook
from ...render.maintenance import index_text
from ..output import ProblemPrinter, to_json, warning_line
from .common import json_option, pass_book

BAR_FROM = 100  # files: smaller updates finish before a bar would be worth drawing


def warn(message: str) -> None:
    click.echo(warning_line(message), err=True)


class _Bar:
    """A click progress bar on stderr, opened only for long work."""

    def __init__(self) -> None:
        self.bar: Any = None
        self.shown = 0

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None:
            if total < BAR_FROM:
                return
            self.bar = click.progressbar(length=total, label="Indexing", file=sys.stderr)
            self.bar.__enter__()
        self.bar.update(done - self.shown)
        self.shown = done

    def close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)


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
    searcher.on_warning(warn)
    problems = ProblemPrinter()
    bar = _Bar()
    try:
        report = searcher.update(rebuild=rebuild, progress=bar, on_problem=problems)
    finally:
        bar.close()
    problems.finish()
    model = searcher.embedder()
    data = report.to_dict()
    data["model"] = model.name if model else None
    click.echo(to_json(data) if as_json else index_text(data, data["model"]))
