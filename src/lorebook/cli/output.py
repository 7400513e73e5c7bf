"""Output shared by every entry point: JSON, one-line errors, skipped-line warnings.

Error and warning lines echo what the user typed or what a file holds, and end up in CI logs
(disk too): they are redacted like the log before they are printed, with the store's own
sanitizer (its `redaction.extra_patterns` and keys) whenever there is a store (`notices`).

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import json
import os
import sys

from .. import (
    LoreError,
    Notice,
    error_line,
    redact_message,
    store_sanitizer,
    warn,
    warning_line,
)

TYPE_CHECKING = False  # typing costs milliseconds on the append path; mypy still sees it
if TYPE_CHECKING:
    from typing import Any, TextIO

    from .. import Problem, Sanitizer


# for the commands
__all__ = ["error_line", "redact_message", "store_sanitizer", "warn", "warning_line"]


def to_json(value: Any, *, tty: bool | None = None) -> str:
    """`--json` output: indented for a person at a terminal, compact when stdout is a pipe or a
    file (a program parses it: half the bytes to write and read). `tty` defaults to whether
    stdout is a terminal."""
    if tty is None:
        tty = stdout_is_terminal()
    if tty:
        return json.dumps(value, ensure_ascii=False, indent=2, default=str)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def stdout_is_terminal() -> bool:
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):  # replaced or closed stdout: not a person
        return False


def report_error(
    exc: LoreError | str,
    *,
    as_json: bool,
    stream: TextIO | None = None,
    sanitizer: Sanitizer | None = None,
) -> int:
    """Print the one error line, redacted with `sanitizer` (the store's), and return 1."""
    print(error_line(exc, as_json=as_json, sanitizer=sanitizer), file=stream or sys.stderr)
    return 1


def closed_pipe() -> int:
    """The reader of stdout went away (`lore actions --json | head -c1`): stop quietly, as `cat`
    and `git log` do, with a non-zero status so `set -o pipefail` sees the cut.
    stdout now points at /dev/null, so the interpreter's final flush cannot raise again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no real stdout (embedded, captured): nothing to flush
        pass
    return 1


class ProblemPrinter:
    """Collects skipped lines and prints the first few as warnings on stderr."""

    def __init__(
        self, shown: int = 10, stream: TextIO | None = None, sanitizer: Sanitizer | None = None
    ) -> None:
        self.shown = shown
        self.count = 0
        self.stream = stream
        self.sanitizer = sanitizer  # the store's: the warnings echo what its files hold

    def __call__(self, problem: Problem) -> None:
        self.count += 1
        if self.count <= self.shown:
            from ..render.problems import skipped

            warn(skipped(problem), self.stream, self.sanitizer)

    def finish(self) -> None:
        if self.count > self.shown:
            warn(
                Notice(
                    "{} more lines skipped (run `lore check` for all findings)",
                    self.count - self.shown,
                ),
                self.stream,
            )
