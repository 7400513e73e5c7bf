"""`lore export`: training data with a manifest."""

from __future__ import annotations

import os

import click

from ... import EXPORT_FORMATS, Lorebook
from ...render.maintenance import exported
from ..output import to_json
from .common import json_option, pass_book


@click.command("export")
@click.option(
    "--format", "fmt", type=click.Choice(EXPORT_FORMATS), default="jsonl", show_default=True
)
@click.option("--since", help="7d, 24h, YYYY-MM-DD or an ISO timestamp.")
@click.option("--until", help="Same forms; exclusive.")
@click.option("--project")
@click.option("--type", "action_type", help="Only actions of this type.")
@click.option("--outcome", help="Only actions with this outcome (success, failure, ...).")
@click.option("--agent", help="Only actions of this agent.")
@click.option("--no-context", is_flag=True, help="Leave the action context out.")
@click.option(
    "--include-archive", is_flag=True, help="Also read shards archived by `lore archive`."
)
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False),
    help="File to write: outside the repository, or inside its export folder (default "
    "docs/training-data/training-data-<timestamp>.<format>).",
)  # fmt: skip
@json_option
@pass_book
def export_cmd(
    book: Lorebook,
    fmt: str,
    since: str | None,
    until: str | None,
    project: str | None,
    action_type: str | None,
    outcome: str | None,
    agent: str | None,
    no_context: bool,
    include_archive: bool,
    output: str | None,
    as_json: bool,
) -> None:
    """Export actions as training records (input/output/metadata), streamed, with a manifest.

    Failed actions keep their (redacted) error text in output.error. Context is sanitized
    again on the way out; CSV holds it as JSON text. The manifest (<file>.manifest.json)
    records the filters, record count, source commit and redactions.

    \b
    Examples:
      lore export --format jsonl --since 30d
      lore export --format csv --project consilio --no-context -o /tmp/actions.csv
      lore export --outcome failure --type deploy --agent PS
    """
    result = book.export_training_data(
        fmt,
        os.path.abspath(output) if output else None,
        since=since or None,
        until=until or None,
        project=project,
        type=action_type,
        outcome=outcome,
        agent=agent,
        with_context=not no_context,
        include_archive=include_archive,
    )
    click.echo(to_json(result) if as_json else exported(result))
