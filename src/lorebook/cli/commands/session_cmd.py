"""`lore session start|end`."""

from __future__ import annotations

from typing import Any

from ... import END_REASONS, Lorebook
from ...cmdline.spec import JSON, Command, Group, Opt
from ...render.actions import session_ended
from ..output import to_json

SESSION = Group(
    "session",
    (
        Command(
            "start",
            "commands.session_cmd:start",
            summary="Write a start event and print the new session id.",
            options=(
                Opt("--agent", "agent", "Agent name (else LORE_AGENT, config, 'agent')."),
                Opt(
                    "--project", "project", "Project (else LORE_PROJECT, config, repository name)."
                ),
                Opt("--type", "session_type", "cli, browser, mcp or hook.", default="cli"),
                Opt(
                    "--id",
                    "session_id",
                    "Use this id instead of a new ULID (e.g. the agent's own).",
                ),
                JSON,
            ),
        ),
        Command(
            "end",
            "commands.session_cmd:end",
            summary="Write an end event for the session.",
            options=(
                Opt("--session", "session_id", "Session to end (else LORE_SESSION)."),
                Opt(
                    "--reason",
                    "reason",
                    f"Why it ended: {', '.join(END_REASONS)}, or another lowercase word.",
                    default="normal",
                ),
                Opt("--agent", "agent", "Agent name recorded on the end event."),
                Opt("--project", "project", "Project recorded on the end event."),
                JSON,
            ),
        ),
    ),
    help="""Start or end a session (a run of one agent; actions are logged into it).

Example:
  export LORE_SESSION=$(lore session start --agent PS --project consilio)
  lore log plan --epic epic-012
  lore session end --reason normal
""",
)


def start(book: Lorebook, values: dict[str, Any]) -> str:
    session_type = values["session_type"]
    current = book.start_session(
        agent=values["agent"],
        project=values["project"],
        session_type=session_type,
        session_id=values["session_id"],
    )
    if values["as_json"]:
        return to_json(
            {
                "session": current.id,
                "agent": current.agent,
                "project": current.project,
                "session_type": session_type,
            }
        )
    return current.id


def end(book: Lorebook, values: dict[str, Any]) -> str:
    record = book.end_session(
        values["session_id"],
        reason=values["reason"],
        agent=values["agent"],
        project=values["project"],
    )
    return to_json(record) if values["as_json"] else session_ended(record)
