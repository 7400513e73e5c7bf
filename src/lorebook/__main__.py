"""`python -m lorebook` is the `lore` command."""

from .launch import console

console()
