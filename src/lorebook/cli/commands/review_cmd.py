"""`lore promote`, `lore reject`, `lore history`: reviewing learnings through git."""

from __future__ import annotations

import sys
from typing import Any

from ... import Lorebook
from ...cmdline.spec import JSON, Arg, Command, Opt
from ...render import learnings as render
from ..output import to_json, warning_line

_ID = Arg("id", "The learning (its id or a unique prefix).")

PROMOTE = Command(
    "promote",
    "commands.review_cmd:promote",
    args=(_ID,),
    options=(
        Opt(
            "--branch",
            "branch",
            "Commit on a new branch (default name lore/learning/ID); yours stays as it is.",
            kind="optional",
            metavar="NAME",
        ),
        Opt("--push", "push", "Push the branch the commit went on.", kind="flag"),
        Opt("--pr", "pr", "Push and open a pull request with gh (needs --branch).", kind="flag"),
        Opt("--remote", "remote", "The remote to push to.", default="origin"),
        JSON,
    ),
    help="""Publish a draft: move it to learnings/, set status published, commit.

The commit message is `lore(learning): publish <id>: <title>`. Without --branch the
commit goes on the current branch, and staged changes of other files are refused rather
than mixed in. With --branch it goes on a new branch; your branch, index and working tree
are left exactly as they were.

Examples:
  lore promote 2026-11-22-rls-policy-blocks-insert-kqzmtdr
  lore promote 2026-11-22-rls-policy-blocks-insert-kqzmtdr --branch --pr
""",
)

REJECT = Command(
    "reject",
    "commands.review_cmd:reject",
    args=(_ID,),
    options=(
        Opt("--reason", "reason", "Why the draft is rejected (logged).", required=True),
        JSON,
    ),
    help="""Remove a draft (in a commit when git tracks it) and log the reason.

Example:
  lore reject 2026-11-22-flaky-test-bvtqzhm --reason "duplicate of the retry lesson"
""",
)

HISTORY = Command(
    "history",
    "commands.review_cmd:history",
    args=(_ID,),
    options=(JSON,),
    help="""List the commits of a learning, newest first, from draft to published.

Example:
  lore history 2026-11-22-rls-policy-blocks-insert-kqzmtdr --json
""",
)


def promote(book: Lorebook, values: dict[str, Any]) -> None:
    result = book.learnings.promote(
        values["id"],
        branch=values["branch"],
        push=values["push"],
        pr=values["pr"],
        remote=values["remote"],
    )
    data = result.to_dict()
    print(to_json(data) if values["as_json"] else render.promoted(data))
    if result.warning:
        print(warning_line(result.warning, book.sanitizer), file=sys.stderr)


def reject(book: Lorebook, values: dict[str, Any]) -> str:
    result = book.learnings.reject(values["id"], reason=values["reason"])
    return to_json(result) if values["as_json"] else render.rejected(result)


def history(book: Lorebook, values: dict[str, Any]) -> str:
    entries = book.learnings.history(values["id"])
    data = [e.to_dict() for e in entries]
    return to_json(data) if values["as_json"] else render.history_text(data)
