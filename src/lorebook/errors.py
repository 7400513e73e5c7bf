"""One error family: every failure a user can act on is a LoreError with a one-line message."""

from __future__ import annotations


class LoreError(Exception):
    """A failure with a message that tells the user what went wrong and what to do."""

    exit_code = 1


class NotInitializedError(LoreError):
    """The store has not been created yet (`lore init`)."""


class UsageError(LoreError):
    """Bad input on the command line or through the API."""
