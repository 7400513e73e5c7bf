"""One error family: every failure a user can act on is a LoreError with a one-line message.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations


class LoreError(Exception):
    """A failure with a message that tells the user what went wrong and what to do.

    `LoreError("--since {!r}: expected a duration", raw)`: with `values`, the message is
    lorebook's own `template` and each `{}` (or `{!r}`) takes one value that came from the
    user or a file. The printers (`lorebook.notices`) redact the values, not the finished
    line, so lorebook's words stay readable (a key named `passwd` followed by a colon is not
    an assignment) while every secret in a value is still caught. A message without values
    is redacted whole when it is printed.

    Every entry point that reports one exits 1 (hooks fail open: exit 0 with a logged warning);
    there is no per-class exit code.
    """

    template: str | None = None
    values: tuple[object, ...] = ()

    def __init__(self, message: object = "", *values: object) -> None:
        if values:
            self.template, self.values = str(message), values
            message = self.template.format(*values)
        super().__init__(message)


class NotInitializedError(LoreError):
    """The store has not been created yet (`lore init`)."""


class UsageError(LoreError):
    """Bad input on the command line or through the API."""
