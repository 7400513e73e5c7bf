"""The action catalog built in a child process, for a server that must answer at once.

On a fresh clone of a long log there is no catalog, and building one reads and parses every
shard: seconds to minutes of Python that, in a thread of `lore mcp`, would hold the GIL while
the server answers its calls. A child process (`python -c CHILD ROOT`, the same interpreter
and `lorebook`) builds it instead; the caller keeps its own catalog view disabled until the
child is done, so its reads go to the shards and never wait on the child's write lock.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping
from pathlib import Path

# a `LoreError` is one line on stderr and exit 1 (the message is the library's); anything
# else is a traceback, whose last line is kept
CHILD = """\
import sys
from lorebook import Lorebook, LoreError
try:
    Lorebook.open(sys.argv[1]).sync_catalog()
except LoreError as exc:
    sys.exit(str(exc))
"""


class CatalogJob:
    """One build of the catalog of the store at `root` in a child process."""

    def __init__(
        self,
        root: Path,
        env: Mapping[str, str],
        *,
        redact: Callable[[str], str],
        warn: Callable[[str], None],
        done: Callable[[], None],
    ) -> None:
        self.root = root
        self.env = env
        self.redact = redact
        self.warn = warn
        self.done = done
        self.finished = threading.Event()
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start the child and a thread that waits for it; `done` is called when it ends,
        failed or not (a failure is passed to `warn` in one redacted line)."""
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-c", CHILD, str(self.root)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                env={**os.environ, **self.env},  # the interpreter's path, the store's settings
                cwd=self.root,
            )
        except OSError as exc:  # reads go on without a catalog, as before
            self._end(f"the action catalog could not be built ({exc.strerror or exc})")
            return
        threading.Thread(target=self._wait, name="lore-catalog-build", daemon=True).start()

    @property
    def building(self) -> bool:
        return not self.finished.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        return self.finished.wait(timeout)

    def _wait(self) -> None:
        assert self.process is not None
        problem = None
        try:
            text = self.process.communicate()[1].decode("utf-8", "replace").strip()
            if self.process.returncode:
                line = text.splitlines()[-1] if text else f"exit {self.process.returncode}"
                problem = f"the action catalog could not be built ({self.redact(line)})"
        finally:
            self._end(problem)

    def _end(self, problem: str | None) -> None:
        try:
            if problem is not None:
                self.warn(problem)
        finally:
            self.done()
            self.finished.set()
