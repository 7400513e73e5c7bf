"""`lore search`: the click face of the fast path (help, odd argument forms)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import click

from ..app import root_of
from ..logspec import Opt
from ..searchspec import SEARCH_HELP, SEARCH_OPTIONS, run_search
from .common import COUNT, FRACTION


def with_options(options: tuple[Opt, ...]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Click options from a fast path's option table (the one declaration of both)."""
    kinds: dict[str, Any] = {"count": COUNT, "fraction": FRACTION, "float": click.FLOAT}

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        for opt in reversed(options):
            if opt.kind == "flag":
                option = click.option(opt.flag, opt.dest, is_flag=True, help=opt.help)
            elif opt.choices:
                option = click.option(
                    opt.flag, opt.dest, type=click.Choice(opt.choices), help=opt.help
                )
            else:
                option = click.option(
                    opt.flag,
                    opt.dest,
                    type=kinds.get(opt.kind),
                    multiple=opt.kind == "many",
                    metavar=opt.metavar,
                    help=opt.help,
                )
            func = option(func)
        return func

    return decorate


@click.command("search", help=SEARCH_HELP)
@click.argument("query", nargs=-1, required=True)
@with_options(SEARCH_OPTIONS)
@click.pass_context
def search(ctx: click.Context, /, **values: Any) -> None:
    click.echo(run_search(values, os.environ, root=root_of(ctx)))
