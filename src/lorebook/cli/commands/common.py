"""Helpers shared by the click commands."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import click

from ... import Lorebook
from ..app import root_of
from ..longwork import catalog_hint, status_line

json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON (stable contract).")


class Bounded(click.ParamType):  # type: ignore[type-arg]
    """A finite int or float from `low` to `high` (click's ranges let NaN through)."""

    def __init__(self, kind: type[int] | type[float], low: float, high: float | None = None):
        self.kind = kind
        self.low = low
        self.high = high
        self.name = "integer" if kind is int else "number"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = (click.INT if self.kind is int else click.FLOAT).convert(value, param, ctx)
        finite = isinstance(number, int) or math.isfinite(number)  # (a huge int is no float)
        if finite and number >= self.low and (self.high is None or number <= self.high):
            return number
        kind = "an integer" if self.kind is int else "a number"
        span = f"of at least {self.low:g}"
        if self.high is not None:
            span = f"from {self.low:g} to {self.high:g}"
        self.fail(f"{value}: expected {kind} {span}")


COUNT = Bounded(int, 1)  # --limit
FRACTION = Bounded(float, 0, 1)  # --threshold
SECONDS = Bounded(float, 0)  # --debounce


def open_book(ctx: click.Context) -> Lorebook:
    """The store of the command, with its subscribers (automatic drafts, RCA lessons, learning
    on session end): the CLI acts for the user, so what they log has its usual effects."""
    book = Lorebook.open(root_of(ctx))
    book.install_subscribers()
    return book


def pass_book(func: Callable[..., Any]) -> Callable[..., Any]:
    """Open the store for the command (one line telling the user to `lore init` if missing).
    On a terminal, and without --json, long work shows a status line on stderr."""

    @click.pass_context
    def wrapper(ctx: click.Context, /, *args: Any, **kwargs: Any) -> Any:
        book = open_book(ctx)
        with status_line(book, bool(kwargs.get("as_json"))):
            result = func(book, *args, **kwargs)
        catalog_hint(book)
        return result

    wrapper.__name__ = func.__name__
    wrapper.__doc__ = func.__doc__
    return wrapper
