"""`lore pattern new|record` and `lore extract retro`: issue patterns and their occurrences."""

from __future__ import annotations

from typing import Any

from ... import Lorebook, UsageError, read_input
from ...cmdline.spec import JSON, PUBLISH, Arg, Command, Group, Opt
from ...render.learnings import pattern_written
from ..output import to_json
from .draft_cmd import describe

_RECORD_HELP = """\
Record one occurrence of pattern ID (an `occurrence` action); prints the action id.

Example:
  lore pattern record 2026-11-22-rls-policy-blocks-insert-k3x9qa --solution s1 \\
    --success --minutes 8 --via-search
"""

PATTERN = Group(
    "pattern",
    (
        Command(
            "new",
            "commands.pattern_cmd:new",
            summary="Create a pattern (a draft unless --publish).",
            options=(
                Opt(
                    "--title",
                    "title",
                    "The issue, e.g. 'RLS policy blocks INSERT'.",
                    required=True,
                ),
                Opt("--solution", "solutions", "A proven solution (repeatable).", kind="many"),
                Opt(
                    "--prevention",
                    "prevention",
                    "A prevention checklist item (repeatable).",
                    kind="many",
                ),
                Opt("--problem", "problem", "What goes wrong (default: the title)."),
                Opt("--category", "category", "e.g. database, build, git."),
                Opt(
                    "--severity",
                    "severity",
                    "How much it matters.",
                    choices=("high", "medium", "low"),
                ),
                Opt("--tags", "tags", "Comma-separated tags."),
                PUBLISH,
                JSON,
            ),
            help="""Create a pattern (a draft unless --publish); solutions get ids s1, s2, ...

Example:
  lore pattern new --title "RLS policy blocks INSERT" --category database \\
    --solution "Use the service-role key for admin mutations" \\
    --prevention "Check RLS policies before using the anon key"
""",
        ),
        Command(
            "record",
            "commands.pattern_cmd:record",
            summary="Record one occurrence of a pattern; prints the action id.",
            args=(Arg("id", "The pattern (its id or a unique prefix)."),),
            options=(
                Opt(
                    "--solution",
                    "solution",
                    "The solution id applied (s1, s2, ...).",
                    required=True,
                ),
                Opt(
                    "--success",
                    "success",
                    "Did it resolve the issue?",
                    kind="switch",
                    off="--failure",
                ),
                Opt("--minutes", "minutes", "Minutes it took to resolve.", kind="float"),
                Opt(
                    "--via-search",
                    "via_search",
                    "The pattern was found through search.",
                    kind="flag",
                ),
                Opt("--epic", "epic", "The epic it happened in."),
                Opt("--note", "note", "A short note (redacted like every logged text)."),
                Opt(
                    "--session",
                    "session",
                    "Log into this session (else LORE_SESSION, else automatic).",
                ),
                JSON,
            ),
            help=_RECORD_HELP,
        ),
    ),
    help="Issue patterns: proven solutions with ids, prevention checklists, occurrences.",
)

EXTRACT = Group(
    "extract",
    (
        Command(
            "retro",
            "commands.pattern_cmd:retro",
            summary="Pattern drafts from a retrospective (YAML, JSON or Markdown).",
            args=(Arg("file", "The retrospective's file, or - for stdin."),),
            options=(JSON,),
            help="""Pattern drafts from a retrospective (YAML, JSON or Markdown).

failure_patterns become patterns, key_learnings / lessons_learned their solutions,
what_went_well / success_patterns their prevention checklists.

Example:
  lore extract retro docs/retros/epic-012.md
""",
        ),
    ),
    help="Mine documents into drafts.",
)


def _tags(raw: str | None) -> list[str]:
    return [t.strip() for t in (raw or "").split(",") if t.strip()]


def new(book: Lorebook, values: dict[str, Any]) -> str:
    learning = book.knowledge.new_pattern(
        title=values["title"],
        solutions=values["solutions"],
        prevention=values["prevention"],
        problem=values["problem"] or "",
        category=values["category"],
        severity=values["severity"],
        tags=_tags(values["tags"]),
        publish=values["publish"],
    )
    data = learning.to_dict()
    return to_json(data) if values["as_json"] else pattern_written(data, book.root)


def record(book: Lorebook, values: dict[str, Any]) -> str:
    success = values["success"]
    if success is None:
        raise UsageError(
            "say whether it worked: --success or --failure (see `lore pattern record --help`)"
        )
    action = book.knowledge.record(
        values["id"],
        solution=values["solution"],
        success=success,
        minutes=values["minutes"],
        via_search=values["via_search"],
        epic=values["epic"],
        note=values["note"],
        session=values["session"],
    )
    return to_json(action) if values["as_json"] else str(action["id"])


def retro(book: Lorebook, values: dict[str, Any]) -> str:
    text, source = read_input(values["file"])
    outcomes = book.knowledge.extract_retro(text, source)
    if values["as_json"]:
        return to_json([o.to_dict() for o in outcomes])
    return "\n".join(describe(o, book) for o in outcomes)
