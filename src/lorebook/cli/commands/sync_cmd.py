"""`lore sync`."""

from __future__ import annotations

from typing import Any

from ... import Lorebook
from ...cmdline.spec import JSON, Command, Opt
from ...render.sync import sync_text
from ..output import to_json

SYNC = Command(
    "sync",
    "commands.sync_cmd:sync",
    options=(
        Opt("--no-push", "no_push", "Commit and pull, do not push.", kind="flag"),
        Opt("--message", "message", "The commit subject (replaces the counts).", short="-m"),
        JSON,
    ),
    help="""Commit the store's new and changed files, pull, push.

Only the store is committed (action-log shards, learnings and drafts, .expertise/, reports),
with a message counting them; staged changes outside the store make it refuse. Then
`git pull --no-rebase` (shards merge by union) and `git push`. Without a remote or an
upstream it commits only; a conflict on pull aborts the merge and keeps the commit.
""",
)


def sync(book: Lorebook, values: dict[str, Any]) -> str:
    push = not values["no_push"]
    result = book.sync(push=push, message=values["message"])
    return to_json(result) if values["as_json"] else sync_text(result, push=push)
