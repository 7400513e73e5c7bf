"""`lore report`, `lore report daily`, `lore report weekly`."""

from __future__ import annotations

import click

from ... import REPORT_GROUPS, Lorebook
from ...render.maintenance import report_written
from ...render.report import render_text
from ..output import to_json
from .common import json_option, pass_book

archive_option = click.option(
    "--include-archive", is_flag=True, help="Also read shards archived by `lore archive`."
)


@click.group("report", invoke_without_command=True)
@click.option("--days", type=int, help="The last N days (default 7).")
@click.option("--since", help="Start: 7d, 24h, YYYY-MM-DD or an ISO timestamp.")
@click.option("--until", help="End (exclusive); same forms; default now.")
@click.option("--project")
@click.option("--agent")
@click.option(
    "--group-by", type=click.Choice(REPORT_GROUPS), default="day", show_default=True,
    help="Breakdown by day, action type or outcome.",
)  # fmt: skip
@archive_option
@click.option(
    "--include-internal", is_flag=True,
    help="Also count lorebook's own bookkeeping (drafts, reviews, applications, searches).",
)  # fmt: skip
@json_option
@click.pass_context
def report(
    ctx: click.Context,
    days: int | None,
    since: str | None,
    until: str | None,
    project: str | None,
    agent: str | None,
    group_by: str,
    include_archive: bool,
    include_internal: bool,
    as_json: bool,
) -> None:
    """Activity report: totals, success rate, busiest day, deployments, failures, durations.

    lorebook's own bookkeeping (learning_draft, learning_promoted, learning_rejected,
    apply_learning, occurrence, search) is left out unless --include-internal.

    \b
    Examples:
      lore report --days 7 --group-by type
      lore report --since 2026-11-01 --until 2026-11-08 --project consilio --json
      lore report daily                 write docs/reports/daily/<yesterday>.md
      lore report weekly --week 2026-W47
    """
    if ctx.invoked_subcommand is not None:
        return
    from .common import open_book

    book = open_book(ctx)
    data = book.report(
        days=days, since=since, until=until, project=project, agent=agent, group_by=group_by,
        include_archive=include_archive, include_internal=include_internal,
    )  # fmt: skip
    click.echo(to_json(data) if as_json else render_text(data))


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
