"""`lore preflight`: the click face of the fast path (help, odd argument forms)."""

from __future__ import annotations

import os
from typing import Any

import click

from ..app import root_of
from ..searchspec import PREFLIGHT_HELP, PREFLIGHT_OPTIONS, run_preflight
from .search_cmd import with_options


@click.command("preflight", help=PREFLIGHT_HELP)
@click.argument("task", nargs=-1, required=True)
@with_options(PREFLIGHT_OPTIONS)
@click.pass_context
def preflight(ctx: click.Context, /, **values: Any) -> None:
    click.echo(run_preflight(values, os.environ, root=root_of(ctx)))
