"""`lore watch`: keep the index fresh as learnings are saved (watchdog events, debounced).

Events only say *which* files to look at; the indexer decides what changed by content hash, so
editor save patterns (temp file + rename), bursts and files that vanish mid-read all reduce to
"update these paths". The first change after a quiet period is indexed almost at once (after
LEADING_QUIET seconds without events, so an editor's write-then-rename is seen whole); changes
that keep coming within `debounce` seconds of each other are batched until `debounce` seconds of
quiet, and a continuous stream is still flushed every `max_delay` seconds.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from watchdog.events import FileSystemEvent, FileSystemEventHandler

from ..notices import Notice

if TYPE_CHECKING:
    from ..paths import Layout
    from .engine import SearchIndex
    from .indexer import IndexReport

LEADING_QUIET = 0.25


class Watcher:
    """Collects changed learning files and indexes them in debounced batches."""

    def __init__(
        self,
        index: SearchIndex,
        folders: list[Path],
        *,
        debounce: float = 2.0,
        echo: Callable[[str], None] = print,
        warn: Callable[[str], None] = print,
    ) -> None:
        self.index = index
        self.folders = [f.resolve() for f in folders]
        self.debounce = max(debounce, 0.0)
        self.max_delay = max(10 * self.debounce, 5.0)
        self.echo = echo
        self.warn = warn
        self.pending: dict[str, None] = {}
        self.rescan = False
        self.first_event = 0.0
        self.last_event = -1e9
        self.leading = False  # this batch started after a quiet period: index it soon
        self.cond = threading.Condition()

    # -- events (watchdog thread) ----------------------------------------------------------
    def wants(self, path: str) -> bool:
        p = Path(path)
        return p.suffix == ".md" and not p.name.startswith(".") and p.parent in self.folders

    def notify(self, paths: list[str], *, directory: bool = False) -> None:
        wanted = [p for p in paths if self.wants(p)]
        if not wanted and not directory:
            return
        with self.cond:
            now = time.monotonic()
            if not self.pending and not self.rescan:
                self.first_event = now
                self.leading = now - self.last_event >= self.debounce
            self.last_event = now
            for p in wanted:
                self.pending[p] = None
            self.rescan = self.rescan or directory
            self.cond.notify()

    # -- batches (main thread) -------------------------------------------------------------
    def _take(self, stop: threading.Event) -> tuple[list[str], bool] | None:
        with self.cond:
            while not stop.is_set():
                if self.pending or self.rescan:
                    now = time.monotonic()
                    wait = min(self.debounce, LEADING_QUIET) if self.leading else self.debounce
                    quiet = now - self.last_event >= wait
                    overdue = now - self.first_event >= self.max_delay
                    if quiet or overdue:
                        batch, rescan = list(self.pending), self.rescan
                        self.pending, self.rescan, self.leading = {}, False, False
                        return batch, rescan
                    self.cond.wait(timeout=max(min(wait - (now - self.last_event), 0.5), 0.01))
                else:
                    self.cond.wait(timeout=0.5)
        return None

    def apply(self, batch: list[str], rescan: bool) -> IndexReport:
        paths = None if rescan else [Path(p) for p in batch]
        report = self.index.update(paths=paths)
        for rel in report.added + report.updated:
            self.echo(f"Indexed {rel}")
        for rel in report.removed:
            self.echo(f"Removed {rel}")
        for problem in report.skipped:
            self.warn(Notice("skipped {}", problem))
        return report

    def run(self, stop: threading.Event, ready: Callable[[], None] | None = None) -> None:
        from watchdog.observers import Observer

        observer = Observer()
        handler = _Handler(self)
        for folder in self.folders:
            folder.mkdir(parents=True, exist_ok=True)
            observer.schedule(handler, str(folder), recursive=True)
        observer.start()
        try:
            self.apply([], True)  # catch up with what changed while nobody watched
            if ready:
                ready()
            while True:
                taken = self._take(stop)
                if taken is None:
                    break
                try:
                    self.apply(*taken)
                except Exception as exc:  # keep watching: the next event retries these files
                    self.warn(
                        Notice("indexing failed ({}: {}); will retry", type(exc).__name__, exc)
                    )
                    self.notify(taken[0], directory=taken[1])
                    stop.wait(self.debounce or 0.5)
        finally:
            observer.stop()
            observer.join(timeout=5)


class _Handler(FileSystemEventHandler):
    """Forwards every file event to the watcher; it decides what to index."""

    def __init__(self, watcher: Watcher) -> None:
        super().__init__()
        self.watcher = watcher

    def dispatch(self, event: FileSystemEvent) -> None:
        kind = getattr(event, "event_type", "")
        if kind in ("opened", "closed_no_write"):
            return
        paths = [_text(event.src_path)]
        dest = getattr(event, "dest_path", "")
        if dest:
            paths.append(_text(dest))
        directory = bool(event.is_directory) and kind in ("moved", "deleted", "created")
        self.watcher.notify(paths, directory=directory)


def _text(path: str | bytes) -> str:
    return path.decode(errors="surrogateescape") if isinstance(path, bytes) else path


def watch_learnings(
    index: SearchIndex,
    layout: Layout,
    stop: threading.Event,
    *,
    debounce: float,
    echo: Callable[[str], None] = print,
    warn: Callable[[str], None] = print,
    ready: Callable[[str], None] | None = None,
) -> None:
    """Index learnings/ and drafts/ as they change until `stop` is set; `ready` gets one line
    saying what is watched once the catch-up pass is done."""
    folders = [layout.learnings, layout.drafts]

    def started() -> None:
        if ready is not None:
            rels = ", ".join(layout.rel(f) + "/" for f in folders)
            ready(f"Watching {rels} (debounce {debounce:g} s); Ctrl-C stops")

    Watcher(index, folders, debounce=debounce, echo=echo, warn=warn).run(stop, started)
