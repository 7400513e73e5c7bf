"""`lore export`: training data with a manifest."""

from __future__ import annotations

import os
from typing import Any

from ... import EXPORT_FORMATS, Lorebook
from ...cmdline.spec import JSON, Command, Opt
from ...render.maintenance import exported
from ..output import to_json

EXPORT = Command(
    "export",
    "commands.export_cmd:export_cmd",
    options=(
        Opt("--format", "fmt", "The file format.", choices=EXPORT_FORMATS, default="jsonl"),
        Opt("--since", "since", "7d, 24h, YYYY-MM-DD or an ISO timestamp."),
        Opt("--until", "until", "Same forms; exclusive."),
        Opt("--project", "project", "Only actions of this project."),
        Opt("--type", "action_type", "Only actions of this type."),
        Opt("--outcome", "outcome", "Only actions with this outcome (success, failure, ...)."),
        Opt("--agent", "agent", "Only actions of this agent."),
        Opt("--no-context", "no_context", "Leave the action context out.", kind="flag"),
        Opt(
            "--include-archive",
            "include_archive",
            "Also read shards archived by `lore archive`.",
            kind="flag",
        ),
        Opt(
            "--output",
            "output",
            "File to write: outside the repository, or inside its export folder (default "
            "docs/training-data/training-data-<timestamp>.<format>).",
            metavar="FILE",
            short="-o",
        ),
        JSON,
    ),
    help="""Export actions as training records (input/output/metadata), streamed, with a manifest.

Failed actions keep their (redacted) error text in output.error. Context is sanitized
again on the way out; CSV holds it as JSON text. The manifest (<file>.manifest.json)
records the filters, record count, source commit and redactions.

Examples:
  lore export --format jsonl --since 30d
  lore export --format csv --project consilio --no-context -o /tmp/actions.csv
  lore export --outcome failure --type deploy --agent PS
""",
)


def export_cmd(book: Lorebook, values: dict[str, Any]) -> str:
    output = values["output"]
    result = book.export_training_data(
        values["fmt"],
        os.path.abspath(output) if output else None,
        since=values["since"] or None,
        until=values["until"] or None,
        project=values["project"],
        type=values["action_type"],
        outcome=values["outcome"],
        agent=values["agent"],
        with_context=not values["no_context"],
        include_archive=values["include_archive"],
    )
    return to_json(result) if values["as_json"] else exported(result)
