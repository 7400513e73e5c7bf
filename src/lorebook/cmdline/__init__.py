"""Commands as data: `spec` declares a command (arguments, options, help, body) and `parser`
builds the one parser from a declaration. Every skin's commands are declared this way: the CLI's
in its command table, `lore mcp`, `lore tui` and `lore hooks` in their own entry modules.

Core module: standard library only, see docs/architecture.md#core.
"""
