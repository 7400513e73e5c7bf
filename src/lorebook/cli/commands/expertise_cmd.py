"""`lore expertise classify|learn|validate|improve|history|list|show|prompt`."""

from __future__ import annotations

import sys
from typing import Any

from ... import Lorebook, UsageError
from ...cmdline.spec import JSON, Arg, Command, Group, Opt
from ...render import expertise as render
from ..output import ProblemPrinter, to_json, warning_line

NO_COMMIT = Opt("--no-commit", "no_commit", "Write the file but do not commit it.", kind="flag")

_LEARN_HELP = """\
Learn from a session: failures, tool patterns, modified files, a technique; commit.

Example:
  lore expertise learn --session 01JD8Z... --json
"""

_VALIDATE_HELP = """\
Drop deleted core files and stale failure lessons; commit only when something changed.

Example:
  lore expertise validate --all
"""

_IMPROVE_HELP = """\
Add files matching the domain's globs (20 per glob at most); commit when any was added.

Example:
  lore expertise improve testing
"""

_PROMPT_HELP = """\
The Markdown block to put in an agent's prompt (redacted), framed as quoted data.

Example:
  lore expertise prompt --task "rotate refresh tokens"
"""

EXPERTISE = Group(
    "expertise",
    (
        Command(
            "list",
            "commands.expertise_cmd:list_",
            summary="Every domain with its file's size, entry counts and last validation.",
            options=(JSON,),
            help="""Every domain with its file's size, entry counts and last validation.

Example:
  lore expertise list --json
""",
        ),
        Command(
            "show",
            "commands.expertise_cmd:show",
            summary="Print a domain's expertise file (redacted).",
            args=(Arg("domain", "The domain (the file's name without .yaml)."),),
            options=(JSON,),
            help="""Print a domain's expertise file (redacted).

Example:
  lore expertise show security
""",
        ),
        Command(
            "classify",
            "commands.expertise_cmd:classify",
            summary="The domain of a task: keyword scores plus file-path hints.",
            args=(Arg("text", "The task, in words."),),
            options=(
                Opt(
                    "--files",
                    "files",
                    "A path the task touches (repeat, or separate with commas).",
                    kind="many",
                ),
                JSON,
            ),
            help="""The domain of a task: keyword scores plus file-path hints, else `general`.

Example:
  lore expertise classify "add a migration for the users table" --files db/schema.sql
""",
        ),
        Command(
            "learn",
            "commands.expertise_cmd:learn",
            summary="Learn from a session: failures, tool patterns, modified files; commit.",
            options=(
                Opt(
                    "--session",
                    "session",
                    "The session to learn from (see lore sessions).",
                    required=True,
                ),
                Opt(
                    "--domain",
                    "domain",
                    "Update this domain instead of the one the session classifies as.",
                ),
                NO_COMMIT,
                JSON,
            ),
            help=_LEARN_HELP,
        ),
        Command(
            "validate",
            "commands.expertise_cmd:validate",
            summary="Drop deleted core files and stale failure lessons.",
            args=(Arg("domain", "The domain to validate (or --all).", nargs="?"),),
            options=(
                Opt("--all", "all_", "Validate every domain that has a file.", kind="flag"),
                NO_COMMIT,
                JSON,
            ),
            help=_VALIDATE_HELP,
        ),
        Command(
            "improve",
            "commands.expertise_cmd:improve",
            summary="Add files matching the domain's globs; commit when any was added.",
            args=(Arg("domain", "The domain to improve."),),
            options=(NO_COMMIT, JSON),
            help=_IMPROVE_HELP,
        ),
        Command(
            "history",
            "commands.expertise_cmd:history",
            summary="The git history of a domain's file, with the changes of each update.",
            args=(Arg("domain", "The domain."),),
            options=(JSON,),
            help="""The git history of a domain's file, with the changes each update listed.

Example:
  lore expertise history security --json
""",
        ),
        Command(
            "prompt",
            "commands.expertise_cmd:prompt",
            summary="The Markdown block to put in an agent's prompt (redacted).",
            args=(Arg("domain", "The domain (or --task).", nargs="?"),),
            options=(Opt("--task", "task", "Classify this task and use its domain."), JSON),
            help=_PROMPT_HELP,
        ),
    ),
    help="""Per-domain expertise files in .expertise/<domain>.yaml that learn from the log.

Example:
  lore expertise classify "add an index to the orders table"
  lore expertise learn --session 01JD...
  lore expertise prompt --task "fix the login form"
""",
)


def _commit(values: dict[str, Any]) -> bool | None:
    """--no-commit: False; otherwise the config decides (None)."""
    return False if values["no_commit"] else None


def _warn(book: Lorebook, result: dict[str, object]) -> None:
    for warning in result.get("warnings") or []:  # type: ignore[attr-defined]
        print(warning_line(warning, book.sanitizer), file=sys.stderr)


def list_(book: Lorebook, values: dict[str, Any]) -> str:
    rows = book.expertise.list_domains()
    for row in rows:
        if row.get("problem"):
            print(f"{row['path']}: {row['problem']}", file=sys.stderr)
    return to_json(rows) if values["as_json"] else render.table(rows)


def show(book: Lorebook, values: dict[str, Any]) -> str | None:
    domain = values["domain"]
    content = book.expertise.get(domain)
    if values["as_json"]:
        return to_json(content)
    text = book.expertise.path(domain).read_text(encoding="utf-8")
    print(book.sanitizer.redact_text(text)[0], end="")
    return None


def classify(book: Lorebook, values: dict[str, Any]) -> str:
    paths = [p.strip() for value in values["files"] for p in value.split(",") if p.strip()]
    found = book.expertise.classify(values["text"], paths).to_dict()
    return to_json(found) if values["as_json"] else render.classification(found)


def learn(book: Lorebook, values: dict[str, Any]) -> None:
    problems = ProblemPrinter(sanitizer=book.sanitizer)
    result = book.expertise.learn(
        values["session"], domain=values["domain"], commit=_commit(values), on_problem=problems
    )
    print(to_json(result) if values["as_json"] else render.update(result, "learned"))
    _warn(book, result)
    problems.finish()


def validate(book: Lorebook, values: dict[str, Any]) -> None:
    domain = values["domain"]
    if (domain is None) == (not values["all_"]):
        raise UsageError("give a DOMAIN or --all (not both)")
    results = book.expertise.validate(domain, commit=_commit(values))
    print(to_json(results) if values["as_json"] else render.validated(results))
    for result in results:
        _warn(book, result)


def improve(book: Lorebook, values: dict[str, Any]) -> None:
    result = book.expertise.improve(values["domain"], commit=_commit(values))
    print(to_json(result) if values["as_json"] else render.update(result, "nothing new"))
    _warn(book, result)


def history(book: Lorebook, values: dict[str, Any]) -> str:
    entries = book.expertise.history(values["domain"])
    return to_json(entries) if values["as_json"] else render.history(entries)


def prompt(book: Lorebook, values: dict[str, Any]) -> str | None:
    from ...render.framing import frame_data

    result = book.expertise.prompt(values["domain"], values["task"])
    result["prompt"] = frame_data(result["prompt"]) + "\n"
    if values["as_json"]:
        return to_json(result)
    print(result["prompt"], end="")
    return None
