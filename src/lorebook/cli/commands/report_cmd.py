"""`lore report`, `lore report daily`, `lore report weekly`."""

from __future__ import annotations

import os
from typing import Any

import click

from ... import Lorebook
from ...render.maintenance import report_written
from ..app import root_of
from ..output import to_json
from ..queryspec import REPORT_DEFAULTS, REPORT_GROUPS, REPORT_HELP, REPORT_OPTIONS, run_report
from .common import json_option, pass_book
from .specopts import with_options


@click.group("report", invoke_without_command=True, help=REPORT_HELP)
@with_options(REPORT_OPTIONS, REPORT_DEFAULTS, {"group_by": REPORT_GROUPS})
@click.pass_context
def report(ctx: click.Context, /, **values: Any) -> None:
    if ctx.invoked_subcommand is not None:
        return
    click.echo(run_report(values, os.environ, root=root_of(ctx)))


def _written(result: dict[str, object], as_json: bool) -> None:
    click.echo(to_json(result) if as_json else report_written(result))


@report.command("daily")
@click.option("--date", "day", help="UTC day YYYY-MM-DD (default: yesterday).")
@click.option("--project")
@click.option("--agent")
@json_option
@pass_book
def daily(
    book: Lorebook, day: str | None, project: str | None, agent: str | None, as_json: bool
) -> None:
    """Write docs/reports/daily/<date>.md with a Mermaid chart of actions per hour.

    Idempotent: re-running it for a date rewrites the same content.

    \b
    Example (cron, 09:00 UTC every day):
      0 9 * * *  cd /path/to/repo && lore report daily
    """
    _written(
        book.write_report("daily", when=day, project=project, agent=agent),
        as_json,
    )


@report.command("weekly")
@click.option("--week", help="ISO week like 2026-W47 (default: the last complete week).")
@click.option("--project")
@click.option("--agent")
@json_option
@pass_book
def weekly(
    book: Lorebook, week: str | None, project: str | None, agent: str | None, as_json: bool
) -> None:
    """Write docs/reports/weekly/<iso-week>.md with a Mermaid chart of actions per day.

    \b
    Example:
      lore report weekly --week 2026-W47
    """
    _written(
        book.write_report("weekly", when=week, project=project, agent=agent),
        as_json,
    )


@report.command("kpis")
@click.option("--days", type=int, help="The last N days (default 30).")
@json_option
@pass_book
def kpis(book: Lorebook, days: int | None, as_json: bool) -> None:
    """The seed's success metrics, from the action log: search before planning, learning
    extraction, learning reuse, logging coverage, resume success, logging overhead, log size.

    Each shows its numerator, denominator and target; "n/a" when the log cannot tell.

    \b
    Examples:
      lore report kpis
      lore report kpis --days 90 --json
    """
    from ...render.kpis import kpis_text

    data = book.kpis(days=days)
    click.echo(to_json(data) if as_json else kpis_text(data))
