"""`lore rca add`: an RCA report becomes an RCA lesson (once)."""

from __future__ import annotations

import click

from ... import Lorebook, read_input
from ...render.learnings import rca_added
from ..output import to_json
from .common import json_option, pass_book


@click.group("rca")
def rca() -> None:
    """RCA lessons from root-cause analysis reports."""


@rca.command("add")
@click.argument("file", metavar="FILE|-")
@json_option
@pass_book
def add(book: Lorebook, file: str, as_json: bool) -> None:
    """Add an RCA report (YAML or JSON) as a `kind: rca` learning.

    Fields: title, rootCause, failedStrategies, correctiveAction, preventionNotes, tags,
    task_id, epic_id, project_id, created_at. The same report twice gives the same learning
    (matched by the SHA-256 of the lesson text). A draft unless `rca.publish: true`.

    \b
    Example:
      lore rca add reports/deploy-port-conflict.yaml
      cat rca.json | lore rca add -
    """
    text, source = read_input(file)
    result = book.knowledge.add_rca_text(text, source)
    payload = result.learning.to_dict()
    payload["created_now"] = result.created
    click.echo(to_json(payload) if as_json else rca_added(payload, book.root))
