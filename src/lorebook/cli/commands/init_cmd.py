"""`lore init`."""

from __future__ import annotations

import click

from ... import Lorebook
from ..app import root_of
from ..output import to_json
from .common import json_option


@click.command("init")
@click.argument("directory", required=False, type=click.Path())
@json_option
@click.pass_context
def init(ctx: click.Context, directory: str | None, as_json: bool) -> None:
    """Create the lorebook store in DIRECTORY (default: this repository's top level).

    Creates .lore/ (config template, .gitignore for the cache), actionlog/, learnings/drafts/,
    .expertise/ and the .gitattributes union-merge rule for action-log shards. Running it again
    only adds what is missing.

    \b
    Example:
      lore init && git add .lore .gitattributes && git commit -m "lore: init store"
    """
    book = Lorebook.init(directory or root_of(ctx) or None)
    root, created = book.root, list(book.created)
    if as_json:
        click.echo(to_json({"root": str(root), "created": created}))
    elif created:
        click.echo(f"Initialised lorebook store in {root}")
        for path in created:
            click.echo(f"  created {path}")
    else:
        click.echo(f"lorebook store in {root} is already complete")
