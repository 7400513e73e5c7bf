"""Helpers shared by the click commands."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from ...book import Lorebook
from ..app import root_of

json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON (stable contract).")


def open_book(ctx: click.Context) -> Lorebook:
    return Lorebook.open(root_of(ctx))


def pass_book(func: Callable[..., Any]) -> Callable[..., Any]:
    """Open the store for the command (one line telling the user to `lore init` if missing)."""

    @click.pass_context
    def wrapper(ctx: click.Context, /, *args: Any, **kwargs: Any) -> Any:
        book = open_book(ctx)
        result = func(book, *args, **kwargs)
        catalog_hint(book)
        return result

    wrapper.__name__ = func.__name__
    wrapper.__doc__ = func.__doc__
    return wrapper


def catalog_hint(book: Lorebook) -> None:
    """Say once on stderr when a query scanned a long log because no catalog exists yet."""
    view = book.__dict__.get("catalog")  # only when the command used the catalog at all
    reason = getattr(view, "unavailable", None)
    if reason and reason.startswith("no catalog yet"):
        click.echo(f"note: scanned the shards: {reason}", err=True)
