"""`lore check`."""

from __future__ import annotations

from typing import Any

from ... import Lorebook
from ...cmdline.spec import JSON, Command, Opt
from ...render.maintenance import check_text
from ..output import to_json

CHECK = Command(
    "check",
    "commands.check_cmd:check",
    options=(
        Opt(
            "--fix",
            "fix",
            "First repair what loses no record (drop exact repeated shard lines); report the rest.",
            kind="flag",
        ),
        JSON,
    ),
    help="""Validate the store; exit 1 with file:line findings when anything is wrong.

Checks every action-log line against schema v1, duplicate ids, torn lines, records in the
wrong shard, and secrets or PII that are still present; every learning and draft (front
matter schema, id = file name, folder matches status, duplicate ids, `supersedes` naming a
learning that exists, secrets); and every .expertise/*.yaml (schema, <= 1000 lines,
secrets). Suitable for pre-commit and CI. An exact repeat of a shard line (git's union
merge makes them) is counted, not a finding; `--fix` drops it.
""",
)


def check(book: Lorebook, values: dict[str, Any]) -> int:
    report = book.check(fix=values["fix"]).to_dict()
    print(to_json(report) if values["as_json"] else check_text(report))
    return 0 if report["ok"] else 1
