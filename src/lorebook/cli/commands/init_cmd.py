"""`lore init`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ... import Lorebook
from ...cmdline.spec import JSON, Arg, Command
from ..output import to_json

INIT = Command(
    "init",
    "commands.init_cmd:init",
    args=(Arg("directory", nargs="?"),),
    options=(JSON,),
    help="""Create the lorebook store in DIRECTORY (default: this repository's top level).

Creates .lore/ (config template, .gitignore for the cache), actionlog/, learnings/drafts/,
.expertise/ and the .gitattributes union-merge rule for action-log shards. Running it again
only adds what is missing.

Example:
  lore init && git add .lore .gitattributes && git commit -m "lore: init store"
""",
    book=False,
)


def init(values: dict[str, Any], env: Mapping[str, str], root: str | None = None) -> str:
    book = Lorebook.init(values["directory"] or root or None, env=env)
    where, created = book.root, list(book.created)
    if values["as_json"]:
        return to_json({"root": str(where), "created": created})
    if created:
        return "\n".join(
            [f"Initialised lorebook store in {where}"] + [f"  created {path}" for path in created]
        )
    return f"lorebook store in {where} is already complete"
