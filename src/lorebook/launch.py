"""The `lore` executable: hands each command to the skin that serves it.

The skins (the CLI, the MCP server, the Claude Code hooks, the TUI) never import each
other; this launcher sits above them all and imports only the one a command needs, so a hook
never pays for the CLI and `lore log` never pays for anything but its own command.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import sys

# commands served by a skin other than the CLI
OTHER_SKINS: frozenset[str] = frozenset({"mcp", "hook", "hooks", "import", "tui"})


def main(argv: list[str] | None = None) -> int:
    """Run one `lore` command in-process and return its exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "mcp":
        from .mcp.entry import main as mcp_main

        return mcp_main(args[1:])
    if args and args[0] in ("hook", "hooks", "import"):
        from .hooks.entry import main as hooks_main

        return hooks_main(args)
    if args and args[0] == "tui":
        from .tui.entry import main as tui_main

        return tui_main(args[1:])
    from .cli import main as cli_main

    return cli_main(args)


def console() -> None:
    """The `lore` console script."""
    args = sys.argv[1:]
    if args and args[0] in OTHER_SKINS:
        sys.exit(main(args))
    from .cli import console as cli_console

    cli_console()
