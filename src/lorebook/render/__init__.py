"""Presentation: pure functions from plain data (what `Lorebook` returns) to text.

The CLI, the MCP server, the hooks and the TUI share these; none of them formats on its own.

Core module: standard library only, see docs/architecture.md#core.
"""
