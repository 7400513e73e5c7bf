"""`lore hook <event>` (the handlers: kept cold-fast, no CLI, nothing but `os`, `sys` and
`time` before a capture hook detaches), `lore hooks install|uninstall|status` and `lore import`.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing costs milliseconds on the capture path; mypy still sees it
if TYPE_CHECKING:
    from .failopen import Hook

EVENTS = (  # `lore hook` events, as handlers.HANDLERS serves them (imported only when run)
    "session-start", "user-prompt-submit", "post-tool-use", "post-tool-use-failure",
    "subagent-start", "subagent-stop", "pre-compact", "stop", "session-end",
)  # fmt: skip


def main(argv: list[str]) -> int:
    """`argv` starts with `hook`, `hooks` or `import`; returns the exit code."""
    command, args = argv[0], argv[1:]
    if command == "hook":
        return hook(args)
    if command == "import":
        from .importer.command import main as import_main

        return import_main(args)
    from .admin import main as admin

    return admin(args)


CLIENT_NAMES = ("codex", "gemini", "copilot", "cline", "cursor", "opencode")  # hooks.clients


def hook(args: list[str]) -> int:
    """Run one event's handler; fails open (always 0) once the event is known. `lore hook
    EVENT` serves Claude Code; `lore hook CLIENT EVENT` another agent, EVENT in its own name."""
    if len(args) == 2 and args[0] in CLIENT_NAMES:
        from .clients import CLIENTS

        client = CLIENTS[args[0]]
        event = client.events.get(args[1])
        if event is None:
            known = ", ".join(client.events)
            print(f"lore: error: {client.name} has no hook event {args[1]!r}; known: {known}",
                  file=sys.stderr)  # fmt: skip
            return 1
        from .failopen import run

        return run(event, _handle, client=client.name, native=args[1])
    if len(args) != 1 or args[0] not in EVENTS:
        known = ", ".join(EVENTS)
        if args and args[0] in ("-h", "--help"):
            print("usage: lore hook EVENT          (Claude Code's hook JSON on stdin)")
            print(f"events: {known}")
            print("       lore hook CLIENT EVENT   (another agent's; EVENT as that agent names it)")
            print(f"clients: {', '.join(CLIENT_NAMES)}")
            return 0
        print(f"lore: error: `lore hook` takes one event: {known}", file=sys.stderr)
        return 1
    from .failopen import run

    return run(args[0], _handle)


def _handle(hook: Hook) -> str | None:
    """The event's handler, imported only when a payload needs one (the cold path stays lean)."""
    from .handlers import HANDLERS

    return HANDLERS[hook.event](hook)
