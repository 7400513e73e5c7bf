"""`lore watch`."""

from __future__ import annotations

import signal
import threading
from types import FrameType
from typing import Any

from ... import Lorebook
from ...cmdline.spec import Command, Opt
from ..output import warn

WATCH = Command(
    "watch",
    "commands.watch_cmd:watch",
    options=(
        Opt(
            "--debounce",
            "debounce",
            "Seconds of quiet before a batch is indexed (default: watch.debounce_seconds, 2).",
            kind="seconds",
        ),
    ),
    help="""Keep the search index fresh: index learnings as they are saved, until interrupted.

Created and modified files are (re)indexed, deleted ones leave the index, renames move;
each file indexed prints `Indexed <path>`. Stop it with Ctrl-C (or SIGTERM).

Example:
  lore watch                 # in a second terminal, or as a background service
  lore watch --debounce 0.5
""",
)


def watch(book: Lorebook, values: dict[str, Any]) -> str:
    def warned(message: str) -> None:
        warn(message, None, book.sanitizer)

    book.index.on_warning(warned)
    stop = threading.Event()

    def stop_on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, stop_on_signal)
    signal.signal(signal.SIGINT, stop_on_signal)

    def echo(line: str) -> None:
        print(line, flush=True)  # a line as it happens: the reader may be a pipe

    book.watch(stop, debounce=values["debounce"], echo=echo, warn=warned, ready=echo)
    return "Stopped watching"
