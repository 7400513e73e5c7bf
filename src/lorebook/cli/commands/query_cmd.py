"""`lore sessions` (`lore actions` is in `queryspec`)."""

from __future__ import annotations

from typing import Any

from ... import SESSION_STATUSES, Lorebook
from ...cmdline.spec import JSON, SCOPE, Command, Opt
from ...render.actions import sessions_table
from ..output import ProblemPrinter, to_json

SESSIONS = Command(
    "sessions",
    "commands.query_cmd:sessions",
    options=(
        *SCOPE,
        Opt("--status", "status", f"One of: {', '.join(SESSION_STATUSES)}."),
        JSON,
    ),
    help="""List sessions, most recently active first.

A session is `ended` after its end event, `disconnected` when it has none and has been silent
longer than sessions.idle_minutes (30), else `active`.
""",
)


def sessions(book: Lorebook, values: dict[str, Any]) -> None:
    problems = ProblemPrinter(sanitizer=book.sanitizer)
    found = [
        s.to_dict()
        for s in book.sessions(
            project=values["project"],
            agent=values["agent"],
            status=values["status"],
            on_problem=problems,
        )
    ]
    print(to_json(found) if values["as_json"] else sessions_table(found))
    problems.finish()
