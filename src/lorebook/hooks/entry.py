"""`lore hook <event>` (the handlers, kept cold-fast: no click, no search stack unless the
event needs it) and `lore hooks install|uninstall|status` (administration)."""

from __future__ import annotations

import sys


def main(argv: list[str]) -> int:
    """`argv` starts with `hook` or `hooks`; returns the exit code."""
    command, args = argv[0], argv[1:]
    if command == "hook":
        return hook(args)
    from .admin import main as admin

    return admin(args)


def hook(args: list[str]) -> int:
    """Run one event's handler; fails open (always 0) once the event is known."""
    from .handlers import HANDLERS

    if len(args) != 1 or args[0] not in HANDLERS:
        known = ", ".join(HANDLERS)
        if args and args[0] in ("-h", "--help"):
            print(
                f"usage: lore hook EVENT  (reads Claude Code's hook JSON on stdin)\nevents: {known}"
            )
            return 0
        print(f"lore: error: `lore hook` takes one event: {known}", file=sys.stderr)
        return 1
    from .failopen import run

    return run(args[0], HANDLERS[args[0]])
