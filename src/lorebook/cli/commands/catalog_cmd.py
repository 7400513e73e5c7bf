"""`lore catalog`: sync or rebuild the action catalog (a derived cache under .lore/cache/)."""

from __future__ import annotations

import click

from ...book import Lorebook
from ...errors import LoreError
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
    view = book.catalog
    if not view.enabled:
        raise LoreError("the action catalog is disabled (catalog.enabled: false in config)")
    conn = view.open(full=True, rebuild=rebuild, create=True)
    if conn is None:
        raise LoreError(f"the action catalog cannot be used: {view.unavailable}")
    conn.close()
    assert view.last_sync is not None
    result = {**view.status(), "sync": view.last_sync.to_dict()}
    result["path"] = book.layout.rel(view.catalog.path)
    if as_json:
        click.echo(to_json(result))
        return
    sync = view.last_sync
    what = f"rebuilt ({sync.reason})" if sync.rebuilt else "synced"
    click.echo(
        f"{what} in {sync.seconds:.2f} s: read {sync.shards_read} shard(s), "
        f"{sync.bytes_read:,} bytes, {sync.records_added:,} new record(s)"
    )
    click.echo(
        f"{result['path']}: {result['actions']:,} actions in {result['records']:,} records, "
        f"{result['shards']:,} shards ({result['archived_shards']:,} archived), "
        f"{result['sessions']:,} sessions, {result['skipped_lines']:,} skipped line(s), "
        f"{result['bytes'] / 1e6:.1f} MB"
    )
