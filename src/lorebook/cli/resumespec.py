"""`lore resume`'s table entry and body. An agent calls it at every session start: standard
library only, as the append path.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

from ..cmdline.spec import JSON, Command, Opt

TYPE_CHECKING = False  # typing costs milliseconds on the cold path; mypy still sees it
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, TextIO

RESUME_OPTIONS = (
    Opt("--project", "project", "Only sessions of this project.", metavar="PROJECT"),
    Opt("--agent", "agent", "Only sessions of this agent.", metavar="AGENT"),
    Opt("--session", "session", "Resume this session instead of choosing one.", metavar="ID"),
    Opt("--limit", "limit", "Recent actions to show.", kind="count", default=20),
    JSON,
)

RESUME_HELP = """Where the last session left off, and what to do next (offline, from the files).

Picks the most recent session (of PROJECT/AGENT) that did not end normally, else the most
recent one, and prints a Markdown brief to paste into a prompt: work in progress, actions
never closed, failed validations, suggested next steps, the learnings relevant to that work,
git state and the last actions.

Example:
  lore resume --project consilio --json
"""


def run_resume(
    values: Mapping[str, Any],
    env: Mapping[str, str],
    root: str | None = None,
    stderr: TextIO | None = None,
) -> str:
    """The state of the session to resume, as JSON or a Markdown brief (warnings on stderr)."""
    from .. import Lorebook
    from .output import ProblemPrinter, to_json

    book = Lorebook.open(root, env=env)
    problems = ProblemPrinter(stream=stderr, sanitizer=book.sanitizer)
    try:
        state = book.resume(
            project=values.get("project"),
            agent=values.get("agent"),
            session=values.get("session"),
            limit=int(values.get("limit") or 20),
            on_problem=problems,
            exclude=(own,) if (own := env.get("LORE_SESSION")) else (),  # never the caller's own
        )
    finally:  # the process ends without interpreter shutdown: close SQLite cleanly first
        book.close()
    problems.finish()
    if values.get("as_json"):
        return to_json(state)
    from ..render.actions import resume_brief

    return resume_brief(state)


RESUME = Command(
    "resume",
    "resumespec:run_resume",
    options=RESUME_OPTIONS,
    help=RESUME_HELP,
    book=False,
    quick=True,
)
