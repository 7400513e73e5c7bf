"""`lore apply`: log that a learning was applied, and whether it worked."""

from __future__ import annotations

import click

from ... import Lorebook
from ..output import to_json
from .common import json_option, pass_book


@click.command("apply")
@click.argument("learning_id", metavar="ID")
@click.option(
    "--outcome", required=True, type=click.Choice(["success", "failure"]), help="Did it work?"
)
@click.option("--epic", help="The epic it was applied in.")
@click.option("--note", help="A short note (redacted like every logged text).")
@click.option("--session", help="Log into this session (else LORE_SESSION, else automatic).")
@json_option
@pass_book
def apply(
    book: Lorebook,
    learning_id: str,
    outcome: str,
    epic: str | None,
    note: str | None,
    session: str | None,
    as_json: bool,
) -> None:
    """Record that learning ID was applied (an `apply_learning` action); prints the action id.

    \b
    Example:
      lore apply 2026-11-22-rls-policy-blocks-insert-k3x9qa --outcome success --epic epic-012
      lore stats 2026-11-22-rls-policy-blocks-insert-k3x9qa
    """
    action = book.knowledge.apply(
        learning_id, outcome=outcome, epic=epic, note=note, session=session
    )
    click.echo(to_json(action) if as_json else action["id"])
