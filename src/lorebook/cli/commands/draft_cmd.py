"""`lore draft from-epic` / `lore draft from-issue`: extractive drafts from the action log."""

from __future__ import annotations

from typing import Any

from ... import Lorebook, format_ts, parse_when
from ...cmdline.spec import JSON, Arg, Command, Group, Opt
from ...render.learnings import draft_outcome
from ..output import to_json

DRAFT = Group(
    "draft",
    (
        Command(
            "from-epic",
            "commands.draft_cmd:from_epic",
            summary="Draft a learning from an epic's failures, fixes and timing.",
            args=(Arg("epic", "The epic's id."),),
            options=(
                Opt(
                    "--since",
                    "since",
                    "Read the epic's actions since (default: drafts.lookback_days).",
                ),
                Opt(
                    "--force",
                    "force",
                    "Write another draft of an epic drafted before.",
                    kind="flag",
                ),
                JSON,
            ),
            help="""Draft a learning from an epic's failures, fixes and timing (once per epic: an
epic drafted before, by hand or automatically, needs --force for another).

Example:
  lore draft from-epic epic-012 --since 60d
""",
        ),
        Command(
            "from-issue",
            "commands.draft_cmd:from_issue",
            summary="Draft a learning from an issue's latest `issue_resolved` action.",
            args=(Arg("issue", "The issue's id."),),
            options=(
                Opt(
                    "--force",
                    "force",
                    "Write another draft of an issue drafted before.",
                    kind="flag",
                ),
                JSON,
            ),
            help="""Draft a learning from an issue's latest `issue_resolved` action (once per issue,
as from-epic).

Example:
  lore log issue_resolved --issue 42 --context '{"labels": ["bug"], "resolution": "..."}'
  lore draft from-issue 42
""",
        ),
    ),
    help="""Draft learnings from what the action log shows (LLM-free, extractive).

Drafts are also written automatically: on `epic_complete`, on an epic's 3rd failed
`validate`, and on `issue_resolved` with a `bug` label and a long resolution.
""",
)


def describe(outcome: Any, book: Lorebook) -> str:
    """One line for people: where the draft went, or which learning it duplicates."""
    return draft_outcome(outcome.to_dict(), book.root)


def from_epic(book: Lorebook, values: dict[str, Any]) -> str:
    since = values["since"]
    start = format_ts(parse_when(since, option="--since")) if since else None
    outcome = book.knowledge.draft_from_epic(values["epic"], since=start, force=values["force"])
    return to_json(outcome.to_dict()) if values["as_json"] else describe(outcome, book)


def from_issue(book: Lorebook, values: dict[str, Any]) -> str:
    outcome = book.knowledge.draft_from_issue(values["issue"], force=values["force"])
    return to_json(outcome.to_dict()) if values["as_json"] else describe(outcome, book)
