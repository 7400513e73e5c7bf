"""`lore check`."""

from __future__ import annotations

import click

from ... import Lorebook
from ...render.maintenance import check_text
from ..output import to_json
from .common import json_option, pass_book


@click.command("check")
@click.option(
    "--fix",
    is_flag=True,
    help="First repair what loses no record (drop exact repeated shard lines); report the rest.",
)
@json_option
@pass_book
def check(book: Lorebook, fix: bool, as_json: bool) -> None:
    """Validate the store; exit 1 with file:line findings when anything is wrong.

    Checks every action-log line against schema v1, duplicate ids, torn lines, records in the
    wrong shard, and secrets or PII that are still present; every learning and draft (front
    matter schema, id = file name, folder matches status, duplicate ids, `supersedes` naming a
    learning that exists, secrets); and every .expertise/*.yaml (schema, <= 1000 lines,
    secrets). Suitable for pre-commit and CI. An exact repeat of a shard line (git's union
    merge makes them) is counted, not a finding; `--fix` drops it.
    """
    report = book.check(fix=fix).to_dict()
    click.echo(to_json(report) if as_json else check_text(report))
    if not report["ok"]:
        click.get_current_context().exit(1)
