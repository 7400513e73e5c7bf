"""`lore archive` and `lore prune`: the retention policy (90 days live, a year archived)."""

from __future__ import annotations

import click

from ...book import Lorebook
from ...errors import LoreError
from ...log.retention import RetentionResult, archive_shards, prune_archives
from ...timeutil import parse_age, utcnow
from ..output import to_json
from .common import json_option, pass_book


def _show(result: RetentionResult, as_json: bool) -> None:
    if as_json:
        click.echo(to_json(result.to_dict()))
    else:
        verb = {"archive": "archived", "prune": "deleted"}[result.action]
        if result.dry_run:
            verb = f"would be {verb}"
        for entry in result.done:
            click.echo(f"{entry.get('shard') or entry['archive']}")
        click.echo(
            f"{len(result.done)} shard(s) {verb} (days before {result.cutoff})"
            + (f"; {len(result.failed)} failed" if result.failed else "")
        )
    if result.failed:
        first = result.failed[0]
        more = f" (and {len(result.failed) - 1} more)" if len(result.failed) > 1 else ""
        raise LoreError(f"{first.get('shard') or first['archive']}: {first['error']}{more}")


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
    days = (
        parse_age(older_than, "--older-than", units="dw").days
        if older_than
        else int(book.config.section("retention").get("archive_days", 90))
    )
    result = archive_shards(
        book.layout.actionlog, book.root, days=days, now=utcnow(), dry_run=dry_run
    )
    _show(result, as_json)


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
    days = (
        parse_age(older_than, "--older-than", units="dw").days
        if older_than
        else int(book.config.section("retention").get("prune_days", 365))
    )
    result = prune_archives(
        book.layout.actionlog, book.root, days=days, now=utcnow(), dry_run=dry_run
    )
    _show(result, as_json)
