"""`lore learn new`, `lore learnings`, `lore show`, `lore drafts`, `lore stale`."""

from __future__ import annotations

import contextlib

import click

from ... import Lorebook, LoreError, read_input
from ...render import learnings as render
from ..output import ProblemPrinter, to_json
from .common import json_option, pass_book

KINDS = ("lesson", "pattern", "rca", "guide")
SEVERITIES = ("high", "medium", "low")
STATUSES = ("draft", "published", "superseded", "retired")


def _read_body(body_file: str | None) -> str:
    if body_file is None:
        return ""
    return read_input(body_file)[0]  # a regular file (or stdin) of at most 1 MiB


@click.group("learn")
def learn() -> None:
    """Create learnings (drafts by default, reviewed with `lore promote`)."""


@learn.command("new")
@click.option("--title", required=True, help="One line: what was learned.")
@click.option("--kind", type=click.Choice(KINDS), default="lesson", show_default=True)
@click.option("--category", help="e.g. database, build, git.")
@click.option("--severity", type=click.Choice(SEVERITIES))
@click.option("--tags", default="", help="Comma-separated: rls,supabase.")
@click.option("--body-file", help="Markdown body from a file, or - for stdin.")
@click.option("--anchor", "anchors", multiple=True, help="PATH or PATH#symbol (repeatable).")
@click.option("--publish", is_flag=True, help="Publish directly instead of writing a draft.")
@json_option
@pass_book
def new(
    book: Lorebook,
    title: str,
    kind: str,
    category: str | None,
    severity: str | None,
    tags: str,
    body_file: str | None,
    anchors: tuple[str, ...],
    publish: bool,
    as_json: bool,
) -> None:
    """Write a learning file: a draft under learnings/drafts/ unless --publish.

    A body without `## ` sections goes under Problem, with empty Root Cause, Solution and Key
    Takeaway sections to fill in. Secrets and PII are redacted before the file is written.

    \b
    Examples:
      lore learn new --title "RLS blocks INSERT with the anon key" --category database \\
          --severity high --tags rls,supabase --anchor supabase/policies.sql
      git log -1 --format=%B | lore learn new --title "Pin torch" --body-file -
    """
    learning = book.learnings.new(
        title=title,
        kind=kind,
        category=category,
        severity=severity,
        tags=[t.strip() for t in tags.split(",") if t.strip()],
        body=_read_body(body_file),
        anchors=anchors,
        publish=publish,
    )
    data = learning.to_dict()
    click.echo(to_json(data) if as_json else render.written(data, book.root))


@click.command("learnings")
@click.option("--status", type=click.Choice(STATUSES))
@click.option("--kind", type=click.Choice(KINDS))
@click.option("--category")
@click.option("--tag", "tags", multiple=True, help="Only learnings with this tag (repeatable).")
@click.option("--stale", is_flag=True, help="Only learnings whose anchors changed since.")
@json_option
@pass_book
def learnings(
    book: Lorebook,
    status: str | None,
    kind: str | None,
    category: str | None,
    tags: tuple[str, ...],
    stale: bool,
    as_json: bool,
) -> None:
    """List learnings and drafts, by id (dated, so oldest first).

    \b
    Examples:
      lore learnings --status published --tag rls
      lore learnings --stale --json
    """
    problems = ProblemPrinter(sanitizer=book.sanitizer)
    found = book.learnings.query(
        status=status,
        kind=kind,
        category=category,
        tags=tags,
        stale=True if stale else None,
        on_problem=problems,
    )
    if as_json:
        click.echo(to_json([x.to_dict() for x in found]))
    else:
        click.echo(render.learnings_table([x.to_dict() for x in found], "no learnings match"))
    problems.finish()


@click.command("drafts")
@json_option
@pass_book
def drafts(book: Lorebook, as_json: bool) -> None:
    """List drafts awaiting review (promote with `lore promote ID`, reject with `lore reject`).

    \b
    Example:
      lore drafts --json
    """
    problems = ProblemPrinter(sanitizer=book.sanitizer)
    found = book.learnings.drafts(on_problem=problems)
    if as_json:
        click.echo(to_json([x.to_dict() for x in found]))
    else:
        click.echo(render.learnings_table([x.to_dict() for x in found], "no drafts"))
    problems.finish()


@click.command("show")
@click.argument("learning_id", metavar="ID")
@json_option
@pass_book
def show(book: Lorebook, learning_id: str, as_json: bool) -> None:
    """Show one learning or draft: its front matter and body.

    \b
    Example:
      lore show 2026-11-22-rls-policy-blocks-insert-kqzmtdr --json
    """
    learning = book.learnings.get(learning_id)
    with contextlib.suppress(LoreError):  # outside a git repository nothing can be stale
        book.learnings.mark_stale([learning])
    data = learning.to_dict()
    click.echo(to_json(data) if as_json else render.learning_text(data, book.root))


@click.command("stale")
@json_option
@pass_book
def stale(book: Lorebook, as_json: bool) -> None:
    """List learnings whose anchors changed or vanished after the learning's last commit.

    An anchor is a path (file or folder) or `path#symbol`; then only changes that mention
    the symbol count. Review each: update the learning, or retire it. Exits 1 when any
    learning is stale, so that CI can gate on it.

    \b
    Example:
      lore stale --json
    """
    problems = ProblemPrinter(sanitizer=book.sanitizer)
    reports = book.learnings.stale(on_problem=problems)
    data = [r.to_dict() for r in reports]
    click.echo(to_json(data) if as_json else render.stale_text(data))
    problems.finish()
    if data:
        click.get_current_context().exit(1)
