"""`lore session start|end`."""

from __future__ import annotations

import click

from ... import END_REASONS, Lorebook
from ...render.actions import session_ended
from ..output import to_json
from .common import json_option, pass_book


@click.group("session")
def session() -> None:
    """Start or end a session (a run of one agent; actions are logged into it).

    \b
    Example:
      export LORE_SESSION=$(lore session start --agent PS --project consilio)
      lore log plan --epic epic-012
      lore session end --reason normal
    """


@session.command("start")
@click.option("--agent", help="Agent name (else LORE_AGENT, config, 'agent').")
@click.option("--project", help="Project (else LORE_PROJECT, config, repository name).")
@click.option(
    "--type", "session_type", default="cli", show_default=True, help="cli, browser, mcp or hook."
)
@click.option(
    "--id", "session_id", help="Use this id instead of a new ULID (e.g. the agent's own)."
)
@json_option
@pass_book
def start(
    book: Lorebook,
    agent: str | None,
    project: str | None,
    session_type: str,
    session_id: str | None,
    as_json: bool,
) -> None:
    """Write a start event and print the new session id."""
    current = book.start_session(
        agent=agent, project=project, session_type=session_type, session_id=session_id
    )
    if as_json:
        click.echo(
            to_json(
                {
                    "session": current.id,
                    "agent": current.agent,
                    "project": current.project,
                    "session_type": session_type,
                }
            )
        )
    else:
        click.echo(current.id)


@session.command("end")
@click.option("--session", "session_id", help="Session to end (else LORE_SESSION).")
@click.option(
    "--reason",
    default="normal",
    show_default=True,
    help=f"Why it ended: {', '.join(END_REASONS)}, or another lowercase word.",
)
@click.option("--agent", help="Agent name recorded on the end event.")
@click.option("--project", help="Project recorded on the end event.")
@json_option
@pass_book
def end(
    book: Lorebook,
    session_id: str | None,
    reason: str,
    agent: str | None,
    project: str | None,
    as_json: bool,
) -> None:
    """Write an end event for the session."""
    record = book.end_session(session_id, reason=reason, agent=agent, project=project)
    click.echo(to_json(record) if as_json else session_ended(record))
