"""`lore promote`, `lore reject`, `lore history`: reviewing learnings through git."""

from __future__ import annotations

import click

from ... import Lorebook
from ...render import learnings as render
from ..output import to_json, warning_line
from .common import json_option, pass_book


@click.command("promote")
@click.argument("learning_id", metavar="ID")
@click.option(
    "--branch",
    is_flag=False,
    flag_value="",
    default=None,
    metavar="[NAME]",
    help="Commit on a new branch (default name lore/learning/ID); yours stays as it is.",
)
@click.option("--push", is_flag=True, help="Push the branch the commit went on.")
@click.option("--pr", is_flag=True, help="Push and open a pull request with gh (needs --branch).")
@click.option("--remote", default="origin", show_default=True)
@json_option
@pass_book
def promote(
    book: Lorebook,
    learning_id: str,
    branch: str | None,
    push: bool,
    pr: bool,
    remote: str,
    as_json: bool,
) -> None:
    """Publish a draft: move it to learnings/, set status published, commit.

    The commit message is `lore(learning): publish <id>: <title>`. Without --branch the
    commit goes on the current branch, and staged changes of other files are refused rather
    than mixed in. With --branch it goes on a new branch; your branch, index and working tree
    are left exactly as they were.

    \b
    Examples:
      lore promote 2026-11-22-rls-policy-blocks-insert-kqzmtdr
      lore promote 2026-11-22-rls-policy-blocks-insert-kqzmtdr --branch --pr
    """
    result = book.learnings.promote(learning_id, branch=branch, push=push, pr=pr, remote=remote)
    data = result.to_dict()
    click.echo(to_json(data) if as_json else render.promoted(data))
    if result.warning:
        click.echo(warning_line(result.warning, book.sanitizer), err=True)


@click.command("reject")
@click.argument("learning_id", metavar="ID")
@click.option("--reason", required=True, help="Why the draft is rejected (logged).")
@json_option
@pass_book
def reject(book: Lorebook, learning_id: str, reason: str, as_json: bool) -> None:
    """Remove a draft (in a commit when git tracks it) and log the reason.

    \b
    Example:
      lore reject 2026-11-22-flaky-test-bvtqzhm --reason "duplicate of the retry lesson"
    """
    result = book.learnings.reject(learning_id, reason=reason)
    click.echo(to_json(result) if as_json else render.rejected(result))


@click.command("history")
@click.argument("learning_id", metavar="ID")
@json_option
@pass_book
def history(book: Lorebook, learning_id: str, as_json: bool) -> None:
    """List the commits of a learning, newest first, from draft to published.

    \b
    Example:
      lore history 2026-11-22-rls-policy-blocks-insert-kqzmtdr --json
    """
    entries = book.learnings.history(learning_id)
    data = [e.to_dict() for e in entries]
    click.echo(to_json(data) if as_json else render.history_text(data))
