"""`lore sync`."""

from __future__ import annotations

import click

from ... import Lorebook
from ...render.sync import sync_text
from ..output import to_json
from .common import json_option, pass_book


@click.command("sync")
@click.option("--no-push", is_flag=True, help="Commit and pull, do not push.")
@click.option("--message", "-m", default=None, help="The commit subject (replaces the counts).")
@json_option
@pass_book
def sync(book: Lorebook, no_push: bool, message: str | None, as_json: bool) -> None:
    """Commit the store's new and changed files, pull, push.

    Only the store is committed (action-log shards, learnings and drafts, .expertise/, reports),
    with a message counting them; staged changes outside the store make it refuse. Then
    `git pull --no-rebase` (shards merge by union) and `git push`. Without a remote or an
    upstream it commits only; a conflict on pull aborts the merge and keeps the commit.
    """
    result = book.sync(push=not no_push, message=message)
    click.echo(to_json(result) if as_json else sync_text(result, push=not no_push))
