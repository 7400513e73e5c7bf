"""`python -m lorebook` is the `lore` command.

Core module: standard library only, see docs/architecture.md#core.
"""

from .launch import console

console()
