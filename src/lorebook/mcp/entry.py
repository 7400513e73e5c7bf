"""`lore mcp [--root PATH] [--list-tools]`: parse the arguments, open the store, serve stdio."""

from __future__ import annotations

import argparse
import sys
from typing import Any, NoReturn

from lorebook import Lorebook, LoreError, error_line, redact_message, store_sanitizer


class _Parser(argparse.ArgumentParser):
    """Usage errors are one line and exit 1, like every other `lore` failure."""

    def error(self, message: str) -> NoReturn:
        raise LoreError("{} (see `lore mcp --help`)", message)


def parser() -> argparse.ArgumentParser:
    found = _Parser(
        prog="lore mcp",
        description=(
            "Serve lorebook's tools over MCP on stdin/stdout (for Claude Code and other "
            "agents). Every call is logged as a tool_call action; see docs/mcp.md."
        ),
    )
    found.add_argument(
        "--root", help="store root (default: LORE_ROOT, else the nearest store from the cwd)"
    )
    found.add_argument(
        "--list-tools",
        action="store_true",
        help="print the tool reference (Markdown, from the tool schemas) and exit",
    )
    return found


def wire_tools(server: Any) -> list[dict[str, Any]]:
    """The tools as `tools/list` sends them (camelCase keys, no nulls)."""
    import anyio

    tools = anyio.run(server.list_tools)
    return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]


def main(argv: list[str]) -> int:
    """Run `lore mcp`; returns the exit code (1 with one stderr line on any failure)."""
    root = None  # until the arguments are read: LORE_ROOT, else the nearest store
    try:
        args = parser().parse_args(argv)
        root = args.root
        if args.list_tools:
            from .reference import reference
            from .server import LoreServer

            sys.stdout.write(reference(wire_tools(LoreServer(None))))
            return 0
        book = Lorebook.open(args.root)
        book.install_subscribers()  # acting for an agent: its logs draft and learn as `lore`'s do
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
