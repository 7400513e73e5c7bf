"""Click options from a fast path's option table (`logspec.Opt`), so both parse the same flags."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import click

from ..logspec import Opt
from .common import COUNT


def with_options(
    options: Sequence[Opt],
    defaults: Mapping[str, Any],
    choices: Mapping[str, Sequence[str]] | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A decorator adding `options` as click options, in their order; `defaults` are shown."""

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        for opt in reversed(options):
            extra: dict[str, Any] = {"help": opt.help or None}
            if opt.dest in defaults:
                extra.update(default=defaults[opt.dest], show_default=True)
            if opt.kind == "flag":
                extra["is_flag"] = True
            elif opt.kind == "count":
                extra["type"] = COUNT
            elif opt.kind == "int":
                extra["type"] = int
            elif opt.kind == "choice":
                extra["type"] = click.Choice((choices or {})[opt.dest])
            func = click.option(opt.flag, opt.dest, **extra)(func)
        return func

    return decorate
