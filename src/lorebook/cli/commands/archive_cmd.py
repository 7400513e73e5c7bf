"""`lore archive` and `lore prune`: the retention policy (90 days live, a year archived)."""

from __future__ import annotations

from typing import Any

from ... import Lorebook, LoreError
from ...cmdline.spec import JSON, Command, Opt
from ...render.retention import first_failure, retention_text
from ..output import to_json

ARCHIVE = Command(
    "archive",
    "commands.archive_cmd:archive",
    options=(
        Opt("--older-than", "older_than", "Age like 90d or 12w (default retention.archive_days)."),
        Opt("--dry-run", "dry_run", "List what would be archived; change nothing.", kind="flag"),
        JSON,
    ),
    help="""Move shards of days older than the cut-off to actionlog/archive/YYYY/MM/ as gzip.

Each archive is decompressed and compared with the shard before the shard is removed; a
corrupt existing archive is reported and the shard kept. Queries, reports and export read
archives with --include-archive.

Examples:
  lore archive --dry-run
  lore archive --older-than 90d --json
""",
)

PRUNE = Command(
    "prune",
    "commands.archive_cmd:prune",
    options=(
        Opt("--older-than", "older_than", "Age like 365d (default retention.prune_days)."),
        Opt("--dry-run", "dry_run", "List what would be deleted; change nothing.", kind="flag"),
        JSON,
    ),
    help="""Delete archived shards of days older than the cut-off (live shards are never touched).

Example:
  lore prune --older-than 365d --dry-run
""",
)


def _show(result: dict[str, Any], as_json: bool) -> None:
    print(to_json(result) if as_json else retention_text(result))
    failure = first_failure(result)
    if failure:
        raise LoreError(failure)


def archive(book: Lorebook, values: dict[str, Any]) -> None:
    result = book.archive(values["older_than"] or None, dry_run=values["dry_run"])
    _show(result.to_dict(), values["as_json"])


def prune(book: Lorebook, values: dict[str, Any]) -> None:
    result = book.prune(values["older_than"] or None, dry_run=values["dry_run"])
    _show(result.to_dict(), values["as_json"])
