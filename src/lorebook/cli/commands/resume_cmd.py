"""`lore resume`: the click face of the fast path (help, odd argument forms)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import click

from ..app import root_of
from ..resumespec import RESUME_HELP, RESUME_OPTIONS, run_resume
from .common import COUNT


def _with_options(func: Callable[..., Any]) -> Callable[..., Any]:
    for opt in reversed(RESUME_OPTIONS):
        if opt.kind == "flag":
            func = click.option(opt.flag, opt.dest, is_flag=True, help=opt.help)(func)
        elif opt.kind == "count":
            func = click.option(opt.flag, opt.dest, type=COUNT, default=20, help=opt.help)(func)
        else:
            func = click.option(opt.flag, opt.dest, metavar=opt.metavar, help=opt.help)(func)
    return func


@click.command("resume", help=RESUME_HELP)
@_with_options
@click.pass_context
def resume(ctx: click.Context, /, **values: Any) -> None:
    click.echo(run_resume(values, os.environ, root=root_of(ctx)))
