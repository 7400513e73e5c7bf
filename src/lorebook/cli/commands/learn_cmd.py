"""`lore learn new`, `lore learnings`, `lore show`, `lore drafts`, `lore stale`."""

from __future__ import annotations

import contextlib
from typing import Any

from ... import Lorebook, LoreError, read_input
from ...cmdline.spec import JSON, PUBLISH, Arg, Command, Group, Opt
from ...render import learnings as render
from ..output import ProblemPrinter, to_json

KINDS = ("lesson", "pattern", "rca", "guide")
SEVERITIES = ("high", "medium", "low")
STATUSES = ("draft", "published", "superseded", "retired")

LEARN = Group(
    "learn",
    (
        Command(
            "new",
            "commands.learn_cmd:new",
            summary="Write a learning file: a draft under learnings/drafts/ unless --publish.",
            options=(
                Opt("--title", "title", "One line: what was learned.", required=True),
                Opt("--kind", "kind", "What kind of learning.", choices=KINDS, default="lesson"),
                Opt("--category", "category", "e.g. database, build, git."),
                Opt("--severity", "severity", "How much it matters.", choices=SEVERITIES),
                Opt("--tags", "tags", "Comma-separated: rls,supabase."),
                Opt("--body-file", "body_file", "Markdown body from a file, or - for stdin."),
                Opt("--anchor", "anchors", "PATH or PATH#symbol (repeatable).", kind="many"),
                PUBLISH,
                JSON,
            ),
            help="""Write a learning file: a draft under learnings/drafts/ unless --publish.

A body without `## ` sections goes under Problem, with empty Root Cause, Solution and Key
Takeaway sections to fill in. Secrets and PII are redacted before the file is written.

Examples:
  lore learn new --title "RLS blocks INSERT with the anon key" --category database \\
      --severity high --tags rls,supabase --anchor supabase/policies.sql
  git log -1 --format=%B | lore learn new --title "Pin torch" --body-file -
""",
        ),
    ),
    help="Create learnings (drafts by default, reviewed with `lore promote`).",
)

LEARNINGS = Command(
    "learnings",
    "commands.learn_cmd:learnings",
    options=(
        Opt("--status", "status", "Only learnings of this status.", choices=STATUSES),
        Opt("--kind", "kind", "Only learnings of this kind.", choices=KINDS),
        Opt("--category", "category", "Only learnings of this category."),
        Opt("--tag", "tags", "Only learnings with this tag (repeatable).", kind="many"),
        Opt("--stale", "stale", "Only learnings whose anchors changed since.", kind="flag"),
        JSON,
    ),
    help="""List learnings and drafts, by id (dated, so oldest first).

Examples:
  lore learnings --status published --tag rls
  lore learnings --stale --json
""",
)

_ID = Arg("id", "The learning (its id or a unique prefix).")

SHOW = Command(
    "show",
    "commands.learn_cmd:show",
    args=(_ID,),
    options=(JSON,),
    help="""Show one learning or draft: its front matter and body.

Example:
  lore show 2026-11-22-rls-policy-blocks-insert-kqzmtdr --json
""",
)

DRAFTS = Command(
    "drafts",
    "commands.learn_cmd:drafts",
    options=(JSON,),
    help="""List drafts awaiting review (promote with `lore promote ID`, reject with `lore reject`).

Example:
  lore drafts --json
""",
)

STALE = Command(
    "stale",
    "commands.learn_cmd:stale",
    options=(JSON,),
    help="""List learnings whose anchors changed or vanished after the learning's last commit.

An anchor is a path (file or folder) or `path#symbol`; then only changes that mention
the symbol count. Review each: update the learning, or retire it. Exits 1 when any
learning is stale, so that CI can gate on it.

Example:
  lore stale --json
""",
)


def _read_body(body_file: str | None) -> str:
    if body_file is None:
        return ""
    return read_input(body_file)[0]  # a regular file (or stdin) of at most 1 MiB


def new(book: Lorebook, values: dict[str, Any]) -> str:
    learning = book.learnings.new(
        title=values["title"],
        kind=values["kind"],
        category=values["category"],
        severity=values["severity"],
        tags=[t.strip() for t in (values["tags"] or "").split(",") if t.strip()],
        body=_read_body(values["body_file"]),
        anchors=values["anchors"],
        publish=values["publish"],
    )
    data = learning.to_dict()
    return to_json(data) if values["as_json"] else render.written(data, book.root)


def learnings(book: Lorebook, values: dict[str, Any]) -> None:
    problems = ProblemPrinter(sanitizer=book.sanitizer)
    found = book.learnings.query(
        status=values["status"],
        kind=values["kind"],
        category=values["category"],
        tags=values["tags"],
        stale=True if values["stale"] else None,
        on_problem=problems,
    )
    if values["as_json"]:
        print(to_json([x.to_dict() for x in found]))
    else:
        print(render.learnings_table([x.to_dict() for x in found], "no learnings match"))
    problems.finish()


def drafts(book: Lorebook, values: dict[str, Any]) -> None:
    problems = ProblemPrinter(sanitizer=book.sanitizer)
    found = book.learnings.drafts(on_problem=problems)
    if values["as_json"]:
        print(to_json([x.to_dict() for x in found]))
    else:
        print(render.learnings_table([x.to_dict() for x in found], "no drafts"))
    problems.finish()


def show(book: Lorebook, values: dict[str, Any]) -> str:
    learning = book.learnings.get(values["id"])
    with contextlib.suppress(LoreError):  # outside a git repository nothing can be stale
        book.learnings.mark_stale([learning])
    data = learning.to_dict()
    return to_json(data) if values["as_json"] else render.learning_text(data, book.root)


def stale(book: Lorebook, values: dict[str, Any]) -> int:
    """Exit 1 when any learning is stale (CI gates on it)."""
    problems = ProblemPrinter(sanitizer=book.sanitizer)
    reports = book.learnings.stale(on_problem=problems)
    data = [r.to_dict() for r in reports]
    print(to_json(data) if values["as_json"] else render.stale_text(data))
    problems.finish()
    return 1 if data else 0
