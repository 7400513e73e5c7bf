"""`python -m lorebook` is the `lore` command."""

from .cli import console

console()
