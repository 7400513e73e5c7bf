"""`lore mcp [--root PATH] [--list-tools]`: parse the arguments, open the store, serve stdio."""

from __future__ import annotations

import sys
from typing import Any

from lorebook import Lorebook, LoreError, error_line, redact_message, store_sanitizer
from lorebook.cmdline.parser import Shown, parse
from lorebook.cmdline.spec import STORE_ROOT, Command, Opt

MCP = Command(
    "mcp",
    "",  # served by this skin: the launcher hands `lore mcp` over before the CLI loads
    options=(
        STORE_ROOT,
        Opt(
            "--list-tools",
            "list_tools",
            "Print the tool reference (Markdown, from the tool schemas) and exit.",
            kind="flag",
        ),
    ),
    help=(
        "Serve lorebook's tools over MCP on stdin/stdout (for Claude Code and other agents).\n\n"
        "Every call is logged as a tool_call action; see docs/mcp.md."
    ),
    book=False,
)


def wire_tools(server: Any) -> list[dict[str, Any]]:
    """The tools as `tools/list` sends them (camelCase keys, no nulls)."""
    import anyio

    tools = anyio.run(server.list_tools)
    return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]


def main(argv: list[str]) -> int:
    """Run `lore mcp`; returns the exit code (1 with one stderr line on any failure)."""
    root = None  # until the arguments are read: LORE_ROOT, else the nearest store
    try:
        args = parse(MCP, argv, "lore mcp", MCP.help)
        root = args["root"]
        if args["list_tools"]:
            from .reference import reference
            from .server import LoreServer

            sys.stdout.write(reference(wire_tools(LoreServer(None))))
            return 0
        book = Lorebook.open(root)
        book.install_subscribers()  # acting for an agent: its logs draft and learn as `lore`'s do
    except Shown as shown:  # --help
        return shown.code
    except LoreError as exc:  # redacted with the store's rules (its extra patterns too)
        print(error_line(exc, sanitizer=store_sanitizer(root)), file=sys.stderr)
        return 1
    return serve(book)


def serve(book: Lorebook) -> int:
    """Serve until the client closes stdin; end the session this server started."""
    from .server import LoreServer

    server = LoreServer(book)
    server.start_index()
    reason = "normal"
    stopped = _on_sigterm()
    try:
        server.run()
    except KeyboardInterrupt:
        reason = "normal" if stopped else "user_exit"
    finally:
        try:
            server.end(reason)
        except LoreError as exc:
            shown = redact_message(exc, book.sanitizer)
            print(f"lore mcp: warning: session end not logged: {shown}", file=sys.stderr)
    return 0


def _on_sigterm() -> list[int]:
    """Stop on SIGTERM (how a client stops a server it no longer needs) as on Ctrl-C, so the
    session this server started still gets its end; the list fills when it came."""
    import signal

    came: list[int] = []

    def stop(signum: int, frame: object) -> None:
        came.append(signum)
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    return came
