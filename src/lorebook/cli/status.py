"""Long work on a terminal: one status line on stderr, redrawn in place with a carriage return
and cleared when the work ends, so that what the command prints next starts on a clean line.

Only for a person: a pipe, a file, `TERM=dumb` or `--json` get nothing (`for_terminal`).
`NO_COLOR` keeps the line plain. Work that counts (files, shards) is drawn at once, at most
`every` seconds apart; a task of one long step (exporting the model) only once it has lasted
`delay` seconds; a small thread keeps the time spent up to date between reports. While the line
shows, `sys.stderr` clears it before anything else is written there (a warning): no mixed lines.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import os
import sys
import time

from ..render.progress import progress_line

TYPE_CHECKING = False
if TYPE_CHECKING:
    import threading
    from collections.abc import Mapping
    from typing import Any, TextIO

_CLEAR = "\r\x1b[K"


def for_terminal(
    as_json: bool, stream: Any = None, env: Mapping[str, str] | None = None
) -> StatusLine | None:
    """A status line on `stream` (stderr) when a person watches it, else None."""
    environ = os.environ if env is None else env
    stream = sys.stderr if stream is None else stream
    if as_json or environ.get("TERM") == "dumb":
        return None
    try:
        if not stream.isatty():
            return None
    except (AttributeError, ValueError):  # replaced or closed: not a person
        return None
    return StatusLine(stream, color=not environ.get("NO_COLOR"))


class StatusLine:
    """A `lorebook.progress.Progress` that draws on a terminal; `close()` clears what is left."""

    def __init__(
        self, stream: TextIO, *, color: bool = False, delay: float = 0.4, every: float = 0.1
    ) -> None:
        import threading

        self.stream = stream
        self.color = color
        self.delay = delay
        self.every = every
        self.lock = threading.RLock()
        self.task: str | None = None
        self.done = self.total = 0
        self.started = self.drawn_at = 0.0
        self.shown = False
        self.ticker: threading.Event | None = None  # set: the task's ticker stops
        self.proxy: _ClearingStream | None = None

    def __call__(self, task: str, done: int, total: int) -> None:
        now = time.monotonic()
        with self.lock:
            if task != self.task or done < self.done:
                self._stop_ticker()
                self.task, self.started = task, now
            self.done, self.total = done, total
            if done >= total:  # finished: leave a clean line for what comes next
                self._stop_ticker()
                self._clear()
                self.task = None
                self.done = 0
                return
            if self.ticker is None:
                self._start_ticker(self.delay if total <= 1 else 1.0)
            if total > 1 and (not self.shown or now - self.drawn_at >= self.every):
                self._draw(now)

    def close(self) -> None:
        """Clear the line (work that failed never reported its end) and restore stderr."""
        with self.lock:
            self._stop_ticker()
            self._clear()
            self.task = None

    # -- drawing ---------------------------------------------------------------------------
    def _draw(self, now: float) -> None:
        if self.task is None:
            return
        line = progress_line(
            self.task,
            self.done,
            self.total,
            now - self.started,
            width=self._width(),
            color=self.color,
        )
        self.stream.write(f"{_CLEAR}{line}")
        self.stream.flush()
        self.shown, self.drawn_at = True, now
        if self.proxy is None and sys.stderr is self.stream:
            self.proxy = _ClearingStream(self)
            sys.stderr = self.proxy

    def _clear(self) -> None:
        if self.shown:
            self.stream.write(_CLEAR)
            self.stream.flush()
            self.shown = False
        if self.proxy is not None:
            if sys.stderr is self.proxy:
                sys.stderr = self.stream
            self.proxy = None

    def _width(self) -> int:
        try:
            return os.get_terminal_size(self.stream.fileno()).columns or 80
        except (AttributeError, ValueError, OSError):
            return 80

    # -- the time spent, kept up to date by a thread between reports ----------------------
    def _start_ticker(self, first: float) -> None:
        import threading

        stop = threading.Event()
        self.ticker = stop
        task, started = self.task, self.started

        def tick() -> None:
            wait = first
            while not stop.wait(wait):
                with self.lock:
                    if stop.is_set() or self.task != task or self.started != started:
                        return
                    now = time.monotonic()
                    if now - self.drawn_at >= 0.9:
                        self._draw(now)
                wait = 1.0

        threading.Thread(target=tick, name="lore-status", daemon=True).start()

    def _stop_ticker(self) -> None:
        if self.ticker is not None:
            self.ticker.set()
            self.ticker = None


class _ClearingStream:
    """stderr while the status line shows: anything written clears the line first (the next
    update draws it again below)."""

    def __init__(self, owner: StatusLine) -> None:
        self._owner = owner
        self._stream = owner.stream

    def write(self, text: str) -> int:
        if text:
            with self._owner.lock:
                if self._owner.shown:
                    self._stream.write(_CLEAR)
                    self._owner.shown = False
                return self._stream.write(text)
        return self._stream.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
