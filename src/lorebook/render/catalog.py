"""`lore catalog` for people: what the sync did and what the catalog holds (pure)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def catalog_text(result: Mapping[str, Any]) -> str:
    """Two lines from `Lorebook.sync_catalog()`: the sync (or rebuild), then the contents."""
    sync = result["sync"]
    what = f"rebuilt ({sync['reason']})" if sync["rebuilt"] else "synced"
    return (
        f"{what} in {sync['seconds']:.2f} s: read {sync['shards_read']} shard(s), "
        f"{sync['bytes_read']:,} bytes, {sync['records_added']:,} new record(s)\n"
        f"{result['path']}: {result['actions']:,} actions in {result['records']:,} records, "
        f"{result['shards']:,} shards ({result['archived_shards']:,} archived), "
        f"{result['sessions']:,} sessions, {result['skipped_lines']:,} skipped line(s), "
        f"{result['bytes'] / 1e6:.1f} MB"
    )


def catalog_note(reason: str) -> str:
    """The one-line note when a query scanned the shards because no catalog exists yet."""
    return f"note: scanned the shards: {reason}"
