"""`lore pattern new|record` and `lore extract retro`: issue patterns and their occurrences."""

from __future__ import annotations

import click

from ... import Lorebook, read_input
from ...render.learnings import pattern_written
from ..output import to_json
from .common import json_option, pass_book
from .draft_cmd import describe


def _tags(raw: str | None) -> list[str]:
    return [t.strip() for t in (raw or "").split(",") if t.strip()]


@click.group("pattern")
def pattern() -> None:
    """Issue patterns: proven solutions with ids, prevention checklists, occurrences."""


@pattern.command("new")
@click.option("--title", required=True, help="The issue, e.g. 'RLS policy blocks INSERT'.")
@click.option("--solution", "solutions", multiple=True, help="A proven solution (repeatable).")
@click.option("--prevention", multiple=True, help="A prevention checklist item (repeatable).")
@click.option("--problem", default="", help="What goes wrong (default: the title).")
@click.option("--category")
@click.option("--severity", type=click.Choice(["high", "medium", "low"]))
@click.option("--tags", help="Comma-separated tags.")
@click.option("--publish", is_flag=True, help="Publish directly instead of writing a draft.")
@json_option
@pass_book
def new(
    book: Lorebook,
    title: str,
    solutions: tuple[str, ...],
    prevention: tuple[str, ...],
    problem: str,
    category: str | None,
    severity: str | None,
    tags: str | None,
    publish: bool,
    as_json: bool,
) -> None:
    """Create a pattern (a draft unless --publish); solutions get ids s1, s2, ...

    \b
    Example:
      lore pattern new --title "RLS policy blocks INSERT" --category database \\
        --solution "Use the service-role key for admin mutations" \\
        --prevention "Check RLS policies before using the anon key"
    """
    learning = book.knowledge.new_pattern(
        title=title,
        solutions=solutions,
        prevention=prevention,
        problem=problem,
        category=category,
        severity=severity,
        tags=_tags(tags),
        publish=publish,
    )
    data = learning.to_dict()
    click.echo(to_json(data) if as_json else pattern_written(data, book.root))


@pattern.command("record")
@click.argument("pattern_id", metavar="ID")
@click.option("--solution", required=True, help="The solution id applied (s1, s2, ...).")
@click.option("--success/--failure", "success", default=None, help="Did it resolve the issue?")
@click.option("--minutes", type=float, help="Minutes it took to resolve.")
@click.option("--via-search", is_flag=True, help="The pattern was found through search.")
@click.option("--epic")
@click.option("--note")
@click.option("--session", help="Log into this session (else LORE_SESSION, else automatic).")
@json_option
@pass_book
def record(
    book: Lorebook,
    pattern_id: str,
    solution: str,
    success: bool | None,
    minutes: float | None,
    via_search: bool,
    epic: str | None,
    note: str | None,
    session: str | None,
    as_json: bool,
) -> None:
    """Record one occurrence of pattern ID (an `occurrence` action); prints the action id.

    \b
    Example:
      lore pattern record 2026-11-22-rls-policy-blocks-insert-k3x9qa --solution s1 \\
        --success --minutes 8 --via-search
    """
    if success is None:
        raise click.UsageError("say whether it worked: --success or --failure")
    action = book.knowledge.record(
        pattern_id,
        solution=solution,
        success=success,
        minutes=minutes,
        via_search=via_search,
        epic=epic,
        note=note,
        session=session,
    )
    click.echo(to_json(action) if as_json else action["id"])


@click.group("extract")
def extract() -> None:
    """Mine documents into drafts."""


@extract.command("retro")
@click.argument("file", metavar="FILE|-")
@json_option
@pass_book
def retro(book: Lorebook, file: str, as_json: bool) -> None:
    """Pattern drafts from a retrospective (YAML, JSON or Markdown).

    failure_patterns become patterns, key_learnings / lessons_learned their solutions,
    what_went_well / success_patterns their prevention checklists.

    \b
    Example:
      lore extract retro docs/retros/epic-012.md
    """
    text, source = read_input(file)
    outcomes = book.knowledge.extract_retro(text, source)
    if as_json:
        click.echo(to_json([o.to_dict() for o in outcomes]))
    else:
        click.echo("\n".join(describe(o, book) for o in outcomes))
