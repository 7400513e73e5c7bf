"""`lore draft from-epic` / `lore draft from-issue`: extractive drafts from the action log."""

from __future__ import annotations

from typing import Any

import click

from ... import Lorebook, format_ts, parse_when
from ...render.learnings import draft_outcome
from ..output import to_json
from .common import json_option, pass_book


def describe(outcome: Any, book: Lorebook) -> str:
    """One line for people: where the draft went, or which learning it duplicates."""
    return draft_outcome(outcome.to_dict(), book.root)


@click.group("draft")
def draft() -> None:
    """Draft learnings from what the action log shows (LLM-free, extractive).

    \b
    Drafts are also written automatically: on `epic_complete`, on an epic's 3rd failed
    `validate`, and on `issue_resolved` with a `bug` label and a long resolution.
    """


@draft.command("from-epic")
@click.argument("epic")
@click.option("--since", help="Read the epic's actions since (default: drafts.lookback_days).")
@click.option("--force", is_flag=True, help="Write another draft of an epic drafted before.")
@json_option
@pass_book
def from_epic(book: Lorebook, epic: str, since: str | None, force: bool, as_json: bool) -> None:
    """Draft a learning from an epic's failures, fixes and timing (once per epic: an epic
    drafted before, by hand or automatically, needs --force for another).

    \b
    Example:
      lore draft from-epic epic-012 --since 60d
    """
    start = format_ts(parse_when(since, option="--since")) if since else None
    outcome = book.knowledge.draft_from_epic(epic, since=start, force=force)
    click.echo(to_json(outcome.to_dict()) if as_json else describe(outcome, book))


@draft.command("from-issue")
@click.argument("issue")
@click.option("--force", is_flag=True, help="Write another draft of an issue drafted before.")
@json_option
@pass_book
def from_issue(book: Lorebook, issue: str, force: bool, as_json: bool) -> None:
    """Draft a learning from an issue's latest `issue_resolved` action (once per issue, as
    from-epic).

    \b
    Example:
      lore log issue_resolved --issue 42 --context '{"labels": ["bug"], "resolution": "..."}'
      lore draft from-issue 42
    """
    outcome = book.knowledge.draft_from_issue(issue, force=force)
    click.echo(to_json(outcome.to_dict()) if as_json else describe(outcome, book))
