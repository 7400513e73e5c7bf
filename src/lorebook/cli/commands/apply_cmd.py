"""`lore apply`: log that a learning was applied, and whether it worked."""

from __future__ import annotations

from typing import Any

from ... import Lorebook
from ...cmdline.spec import JSON, Arg, Command, Opt
from ..output import to_json

APPLY = Command(
    "apply",
    "commands.apply_cmd:apply",
    args=(Arg("id", "The learning (its id or a unique prefix)."),),
    options=(
        Opt("--outcome", "outcome", "Did it work?", choices=("success", "failure"), required=True),
        Opt("--epic", "epic", "The epic it was applied in."),
        Opt("--note", "note", "A short note (redacted like every logged text)."),
        Opt("--session", "session", "Log into this session (else LORE_SESSION, else automatic)."),
        JSON,
    ),
    help="""Record that learning ID was applied (an `apply_learning` action); prints the action id.

Example:
  lore apply 2026-11-22-rls-policy-blocks-insert-k3x9qa --outcome success --epic epic-012
  lore stats 2026-11-22-rls-policy-blocks-insert-k3x9qa
""",
)


def apply(book: Lorebook, values: dict[str, Any]) -> str:
    action = book.knowledge.apply(
        values["id"],
        outcome=values["outcome"],
        epic=values["epic"],
        note=values["note"],
        session=values["session"],
    )
    return to_json(action) if values["as_json"] else str(action["id"])
