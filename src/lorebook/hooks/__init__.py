"""Claude Code hooks: `lore hook <event>` handlers and `lore hooks install|uninstall|status`.

A skin over `Lorebook`, reached only through `lorebook.launch` (never from the CLI), so a
hook pays for neither the CLI nor the search stack unless its event needs them.

Core module: standard library only, see docs/architecture.md#core.
"""
