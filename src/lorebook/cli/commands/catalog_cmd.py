"""`lore catalog`: sync or rebuild the action catalog (a derived cache under .lore/cache/)."""

from __future__ import annotations

import click

from ... import Lorebook
from ...render.catalog import catalog_text
from ..output import to_json
from .common import json_option, pass_book


@click.command("catalog")
@click.option("--rebuild", is_flag=True, help="Rebuild from the shards from scratch.")
@json_option
@pass_book
def catalog(book: Lorebook, rebuild: bool, as_json: bool) -> None:
    """Bring the action catalog up to date (checking every shard) and show what it holds.

    Queries sync the catalog themselves; this command also stats every shard, so it catches an
    in-place edit of an old shard, and `--rebuild` starts over. The catalog is a cache: deleting
    .lore/cache/catalog.sqlite loses nothing.

    \b
    Examples:
      lore catalog
      lore catalog --rebuild --json
    """
    result = book.sync_catalog(rebuild=rebuild)
    click.echo(to_json(result) if as_json else catalog_text(result))
