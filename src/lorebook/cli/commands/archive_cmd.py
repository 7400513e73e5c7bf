"""`lore archive` and `lore prune`: the retention policy (90 days live, a year archived)."""

from __future__ import annotations

from typing import Any

import click

from ... import Lorebook, LoreError
from ...render.retention import first_failure, retention_text
from ..output import to_json
from .common import json_option, pass_book


def _show(result: dict[str, Any], as_json: bool) -> None:
    click.echo(to_json(result) if as_json else retention_text(result))
    failure = first_failure(result)
    if failure:
        raise LoreError(failure)


@click.command("archive")
@click.option("--older-than", help="Age like 90d or 12w (default retention.archive_days).")
@click.option("--dry-run", is_flag=True, help="List what would be archived; change nothing.")
@json_option
@pass_book
def archive(book: Lorebook, older_than: str | None, dry_run: bool, as_json: bool) -> None:
    """Move shards of days older than the cut-off to actionlog/archive/YYYY/MM/ as gzip.

    Each archive is decompressed and compared with the shard before the shard is removed; a
    corrupt existing archive is reported and the shard kept. Queries, reports and export read
    archives with --include-archive.

    \b
    Examples:
      lore archive --dry-run
      lore archive --older-than 90d --json
    """
    _show(book.archive(older_than or None, dry_run=dry_run).to_dict(), as_json)


@click.command("prune")
@click.option("--older-than", help="Age like 365d (default retention.prune_days).")
@click.option("--dry-run", is_flag=True, help="List what would be deleted; change nothing.")
@json_option
@pass_book
def prune(book: Lorebook, older_than: str | None, dry_run: bool, as_json: bool) -> None:
    """Delete archived shards of days older than the cut-off (live shards are never touched).

    \b
    Example:
      lore prune --older-than 365d --dry-run
    """
    _show(book.prune(older_than or None, dry_run=dry_run).to_dict(), as_json)
