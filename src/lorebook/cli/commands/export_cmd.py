"""`lore export`: training data with a manifest."""

from __future__ import annotations

from pathlib import Path

import click

from ...book import Lorebook
from ...errors import UsageError
from ...log.export import FORMATS, default_path
from ...log.export import export as write_export
from ...timeutil import format_ts, parse_when, utcnow
from ..output import to_json
from .common import json_option, pass_book


@click.command("export")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="jsonl", show_default=True)
@click.option("--since", help="7d, 24h, YYYY-MM-DD or an ISO timestamp.")
@click.option("--until", help="Same forms; exclusive.")
@click.option("--project")
@click.option("--no-context", is_flag=True, help="Leave the action context out.")
@click.option(
    "--include-archive", is_flag=True, help="Also read shards archived by `lore archive`."
)
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False),
    help="File to write (default docs/training-data/training-data-<timestamp>.<format>).",
)  # fmt: skip
@json_option
@pass_book
def export_cmd(
    book: Lorebook,
    fmt: str,
    since: str | None,
    until: str | None,
    project: str | None,
    no_context: bool,
    include_archive: bool,
    output: str | None,
    as_json: bool,
) -> None:
    """Export actions as training records (input/output/metadata), streamed, with a manifest.

    Context is sanitized again on the way out; CSV holds it as JSON text. The manifest
    (<file>.manifest.json) records the filters, record count, source commit and redactions.

    \b
    Examples:
      lore export --format jsonl --since 30d
      lore export --format csv --project consilio --no-context -o /tmp/actions.csv
    """
    now = utcnow()
    start = parse_when(since, now=now, option="--since") if since else None
    end = parse_when(until, now=now, option="--until") if until else None
    if start is not None and start > now:
        raise UsageError(f"--since {since} is in the future (now is {format_ts(now)})")
    if start is not None and end is not None and start >= end:
        raise UsageError(f"--since {format_ts(start)} is not before --until {format_ts(end)}")
    path = Path(output).resolve() if output else default_path(book, fmt, now)
    result = write_export(
        book,
        fmt=fmt,
        path=path,
        since=format_ts(start) if start else None,
        until=format_ts(end) if end else None,
        project=project,
        with_context=not no_context,
        include_archive=include_archive,
    )
    if as_json:
        click.echo(to_json(result))
    else:
        click.echo(
            f"exported {result['record_count']} record(s) to {result['path']} "
            f"(manifest {result['manifest']}; {result['redactions']['values']} value(s) redacted)"
        )
