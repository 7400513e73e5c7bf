"""What the catalog's opening and its sync share: the file, the schema version, the hot days,
a sync's figures, and the day directories (their own module so neither imports the other).

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator

SCHEMA_VERSION = 7  # 5: free-text columns are redacted; 6: records keep `parent`; 7: day roll-ups
FILE_NAME = "catalog.sqlite"
HOT_DAYS = 2

TYPE_CHECKING = False  # typing costs milliseconds on cold paths; mypy still sees it
if TYPE_CHECKING:
    from ..contracts.records import CatalogSync


class CatalogUnavailable(Exception):
    """The catalog cannot be used right now (locked, unwritable, corrupt): scan instead."""


_STATS = ("rebuilt", "reason", "shards_checked", "shards_read", "shards_reindexed",
          "shards_removed", "bytes_read", "records_added", "seconds")  # fmt: skip


class SyncStats:
    """What one sync did (a plain class: `dataclasses` costs every cold read ~10 ms)."""

    __slots__ = _STATS

    def __init__(self, *, rebuilt: bool = False, reason: str = "") -> None:
        self.rebuilt = rebuilt
        self.reason = reason
        self.shards_checked = 0
        self.shards_read = 0
        self.shards_reindexed = 0
        self.shards_removed = 0
        self.bytes_read = 0
        self.records_added = 0
        self.seconds = 0.0

    def to_dict(self) -> CatalogSync:
        return {
            "rebuilt": self.rebuilt,
            "reason": self.reason,
            "shards_checked": self.shards_checked,
            "shards_read": self.shards_read,
            "shards_reindexed": self.shards_reindexed,
            "shards_removed": self.shards_removed,
            "bytes_read": self.bytes_read,
            "records_added": self.records_added,
            "seconds": self.seconds,
        }

    def __repr__(self) -> str:
        return f"SyncStats({', '.join(f'{k}={v!r}' for k, v in self.to_dict().items())})"


def meta(conn: sqlite3.Connection, key: str) -> str | None:
    """A value of the catalog's `meta` table (None when unset)."""
    row = conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
    return str(row[0]) if row else None


def _numbered(path: str, width: int) -> list[str]:
    try:
        with os.scandir(path) as entries:
            return sorted(
                e.name for e in entries if len(e.name) == width and e.name.isdigit() and e.is_dir()
            )
    except OSError:
        return []


def day_names(root: str, *, first: str | None = None) -> Iterator[str]:
    """`YYYY-MM-DD` of every live day directory (from day `first` on), oldest first (the
    archive is not one); earlier years and months are not listed."""
    low = first or ""
    for year in _numbered(root, 4):
        if year < low[:4]:
            continue
        for month in _numbered(f"{root}/{year}", 2):
            if f"{year}-{month}" < low[:7]:
                continue
            for day in _numbered(f"{root}/{year}/{month}", 2):
                if f"{year}-{month}-{day}" >= low:
                    yield f"{year}-{month}-{day}"
