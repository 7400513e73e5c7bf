"""`lore actions` and `lore sessions`."""

from __future__ import annotations

import click

from ... import SESSION_STATUSES, Lorebook, format_ts, parse_when
from ...render.actions import actions_table, sessions_table
from ..output import ProblemPrinter, to_json
from .common import COUNT, json_option, pass_book


@click.command("actions")
@click.option("--type", "action_type", help="Only actions of this type (commit, deploy, ...).")
@click.option("--outcome", help="success, failure, blocked or in_progress.")
@click.option("--project")
@click.option("--agent")
@click.option("--epic")
@click.option("--issue")
@click.option("--session")
@click.option("--category")
@click.option("--since", help="7d, 24h, 30m, 2w, YYYY-MM-DD or an ISO timestamp.")
@click.option("--until", help="Same forms as --since; exclusive.")
@click.option("--limit", type=COUNT, default=50, show_default=True)
@click.option(
    "--include-archive", is_flag=True, help="Also read shards archived by `lore archive`."
)
@json_option
@pass_book
def actions(
    book: Lorebook,
    action_type: str | None,
    outcome: str | None,
    project: str | None,
    agent: str | None,
    epic: str | None,
    issue: str | None,
    session: str | None,
    category: str | None,
    since: str | None,
    until: str | None,
    limit: int,
    include_archive: bool,
    as_json: bool,
) -> None:
    """List actions, newest first.

    \b
    Examples:
      lore actions --type deploy --outcome failure --since 7d
      lore actions --epic epic-012 --json
    """
    problems = ProblemPrinter()
    found = book.actions(
        type=action_type,
        outcome=outcome,
        project=project,
        agent=agent,
        epic=epic,
        issue=issue,
        session=session,
        category=category,
        since=format_ts(parse_when(since, option="--since")) if since else None,
        until=format_ts(parse_when(until, option="--until")) if until else None,
        limit=limit,
        on_problem=problems,
        include_archive=include_archive,
    )
    click.echo(to_json(found) if as_json else actions_table(found))
    problems.finish()


@click.command("sessions")
@click.option("--project")
@click.option("--agent")
@click.option("--status", help=f"One of: {', '.join(SESSION_STATUSES)}.")
@json_option
@pass_book
def sessions(
    book: Lorebook, project: str | None, agent: str | None, status: str | None, as_json: bool
) -> None:
    """List sessions, most recently active first.

    A session is `ended` after its end event, `disconnected` when it has none and has been silent
    longer than sessions.idle_minutes (30), else `active`.
    """
    problems = ProblemPrinter()
    found = [
        s.to_dict()
        for s in book.sessions(project=project, agent=agent, status=status, on_problem=problems)
    ]
    click.echo(to_json(found) if as_json else sessions_table(found))
    problems.finish()
