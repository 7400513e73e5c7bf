"""`lore rca add`: an RCA report becomes an RCA lesson (once)."""

from __future__ import annotations

from typing import Any

from ... import Lorebook, read_input
from ...cmdline.spec import JSON, Arg, Command, Group
from ...render.learnings import rca_added
from ..output import to_json

RCA = Group(
    "rca",
    (
        Command(
            "add",
            "commands.rca_cmd:add",
            summary="Add an RCA report (YAML or JSON) as a `kind: rca` learning.",
            args=(Arg("file", "The report's file, or - for stdin."),),
            options=(JSON,),
            help="""Add an RCA report (YAML or JSON) as a `kind: rca` learning.

Fields: title, rootCause, failedStrategies, correctiveAction, preventionNotes, tags,
task_id, epic_id, project_id, created_at. The same report twice gives the same learning
(matched by the SHA-256 of the lesson text). A draft unless `rca.publish: true`.

Example:
  lore rca add reports/deploy-port-conflict.yaml
  cat rca.json | lore rca add -
""",
        ),
    ),
    help="RCA lessons from root-cause analysis reports.",
)


def add(book: Lorebook, values: dict[str, Any]) -> str:
    text, source = read_input(values["file"])
    result = book.knowledge.add_rca_text(text, source)
    payload = result.learning.to_dict()
    payload["created_now"] = result.created
    return to_json(payload) if values["as_json"] else rca_added(payload, book.root)
