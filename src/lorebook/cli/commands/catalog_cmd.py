"""`lore catalog`: sync or rebuild the action catalog (a derived cache under .lore/cache/)."""

from __future__ import annotations

from typing import Any

from ... import Lorebook
from ...cmdline.spec import JSON, Command, Opt
from ...render.catalog import catalog_text
from ..output import to_json

CATALOG = Command(
    "catalog",
    "commands.catalog_cmd:catalog",
    options=(
        Opt("--rebuild", "rebuild", "Rebuild from the shards from scratch.", kind="flag"),
        JSON,
    ),
    help="""Bring the action catalog up to date (checking every shard) and show what it holds.

Queries sync the catalog themselves; this command also stats every shard, so it catches an
in-place edit of an old shard, and `--rebuild` starts over. The catalog is a cache: deleting
.lore/cache/catalog.sqlite loses nothing.

Examples:
  lore catalog
  lore catalog --rebuild --json
""",
)


def catalog(book: Lorebook, values: dict[str, Any]) -> str:
    result = book.sync_catalog(rebuild=values["rebuild"])
    return to_json(result) if values["as_json"] else catalog_text(result)
