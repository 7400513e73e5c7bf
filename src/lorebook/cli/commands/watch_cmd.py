"""`lore watch`."""

from __future__ import annotations

import signal
import threading
from types import FrameType

import click

from ... import Lorebook
from .common import SECONDS, pass_book
from .index_cmd import warn


@click.command("watch")
@click.option(
    "--debounce",
    type=SECONDS,
    default=None,
    help="Seconds of quiet before a batch is indexed (default: watch.debounce_seconds, 2).",
)
@pass_book
def watch(book: Lorebook, debounce: float | None) -> None:
    """Keep the search index fresh: index learnings as they are saved, until interrupted.

    Created and modified files are (re)indexed, deleted ones leave the index, renames move;
    each file indexed prints `Indexed <path>`. Stop it with Ctrl-C (or SIGTERM).

    \b
    Example:
      lore watch                 # in a second terminal, or as a background service
      lore watch --debounce 0.5
    """

    def warned(message: str) -> None:
        warn(message, book.sanitizer)

    book.index.on_warning(warned)
    stop = threading.Event()

    def stop_on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, stop_on_signal)
    signal.signal(signal.SIGINT, stop_on_signal)

    def echo(line: str) -> None:
        click.echo(line)

    book.watch(stop, debounce=debounce, echo=echo, warn=warned, ready=echo)
    click.echo("Stopped watching")
