"""`lore log`: the click face of the fast path (help, odd argument forms)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import click

from ..app import root_of
from ..logcore import run_log
from ..logspec import LOG_HELP, LOG_OPTIONS


def _with_options(func: Callable[..., Any]) -> Callable[..., Any]:
    for opt in reversed(LOG_OPTIONS):
        if opt.kind == "flag":
            func = click.option(opt.flag, opt.dest, is_flag=True, help=opt.help)(func)
        else:
            kind = float if opt.kind == "float" else str
            func = click.option(opt.flag, opt.dest, type=kind, metavar=opt.metavar, help=opt.help)(
                func
            )
    return func


@click.command("log", help=LOG_HELP)
@click.argument("type")
@_with_options
@click.pass_context
def log(ctx: click.Context, /, **values: Any) -> None:
    click.echo(run_log(values, os.environ, root=root_of(ctx)))
