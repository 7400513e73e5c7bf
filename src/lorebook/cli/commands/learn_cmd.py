"""`lore learn new`, `lore learnings`, `lore show`, `lore drafts`, `lore stale`."""

from __future__ import annotations

import contextlib
import sys
from typing import Any

import click

from ...book import Lorebook
from ...errors import LoreError, UsageError
from ..output import ProblemPrinter, to_json
from .common import json_option, pass_book

KINDS = ("lesson", "pattern", "rca", "guide")
SEVERITIES = ("high", "medium", "low")
STATUSES = ("draft", "published", "superseded", "retired")


def _read_body(body_file: str | None) -> str:
    if body_file is None:
        return ""
    if body_file == "-":
        return sys.stdin.read()
    try:
        with open(body_file, encoding="utf-8") as handle:
            return handle.read()
    except UnicodeDecodeError:
        raise UsageError(f"{body_file}: not UTF-8 text") from None
    except OSError as exc:
        raise UsageError(f"{body_file}: cannot read the body ({exc.strerror or exc})") from None


def _row(learning: Any) -> str:
    flags = " [stale]" if learning.stale else ""
    kind = learning.kind if learning.kind != "lesson" else ""
    return f"{learning.id}  {learning.status:<9} {kind:<7} {learning.title}{flags}".rstrip()


def _table(learnings: list[Any], empty: str) -> str:
    return "\n".join(_row(x) for x in learnings) if learnings else empty


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
    if as_json:
        click.echo(to_json(learning.to_dict()))
    else:
        where = book.layout.rel(learning.path) if learning.path else learning.id
        click.echo(f"{learning.status} {learning.id}: {where}")


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
    problems = ProblemPrinter()
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
        click.echo(_table(found, "no learnings match"))
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
    problems = ProblemPrinter()
    found = book.learnings.drafts(on_problem=problems)
    if as_json:
        click.echo(to_json([x.to_dict() for x in found]))
    else:
        click.echo(_table(found, "no drafts"))
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
    if as_json:
        click.echo(to_json(learning.to_dict()))
        return
    click.echo(f"{learning.title}\n")
    facts = [
        ("id", learning.id),
        ("status", learning.status + (" (stale)" if learning.stale else "")),
        ("kind", learning.kind),
        ("category", learning.category),
        ("severity", learning.severity),
        ("tags", ", ".join(learning.tags)),
        ("created", learning.created.isoformat()),
        ("anchors", ", ".join(learning.anchors)),
        ("supersedes", ", ".join(learning.supersedes)),
        ("file", book.layout.rel(learning.path) if learning.path else None),
    ]
    for name, value in facts:
        if value:
            click.echo(f"{name + ':':<12}{value}")
    for solution in learning.solutions:
        click.echo(f"{'solution:':<12}{solution.id}: {solution.text}")
    for item in learning.prevention:
        click.echo(f"{'prevention:':<12}{item}")
    click.echo(f"\n{learning.body.rstrip()}")


@click.command("stale")
@json_option
@pass_book
def stale(book: Lorebook, as_json: bool) -> None:
    """List learnings whose anchors changed or vanished after the learning's last commit.

    An anchor is a path (file or folder) or `path#symbol`; then only changes that mention
    the symbol count. Review each: update the learning, or retire it.

    \b
    Example:
      lore stale --json
    """
    problems = ProblemPrinter()
    reports = book.learnings.stale(on_problem=problems)
    if as_json:
        click.echo(to_json([r.to_dict() for r in reports]))
    elif not reports:
        click.echo("no stale learnings")
    else:
        for report in reports:
            click.echo(f"{report.id}  {report.title}")
            for change in report.anchors:
                commits = f" ({', '.join(change.commits[:5])})" if change.commits else ""
                click.echo(f"  {change.anchor}: {change.reason}{commits}")
    problems.finish()
