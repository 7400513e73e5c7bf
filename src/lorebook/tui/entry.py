"""`lore tui [--root PATH] [--web [--port N] [--grace S]]`: open the store and run the app (or
serve it)."""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

from lorebook import Lorebook, LoreError, error_line, store_sanitizer


class _Parser(argparse.ArgumentParser):
    """Usage errors are one line and exit 1, like every other `lore` failure."""

    def error(self, message: str) -> NoReturn:
        raise LoreError("{} (see `lore tui --help`)", message)


def parser() -> argparse.ArgumentParser:
    found = _Parser(
        prog="lore tui",
        description="Browse sessions and actions, review drafts, search learnings, read "
        "reports and expertise in the terminal (see docs/tui.md).",
    )
    found.add_argument(
        "--root", help="store root (default: LORE_ROOT, else the nearest store from the cwd)"
    )
    found.add_argument(
        "--web",
        action="store_true",
        help="serve the same app on http://127.0.0.1:8000 behind a per-run token",
    )
    found.add_argument(
        "--port", type=int, default=8000, help="port for --web (default 8000; 0 picks a free one)"
    )
    found.add_argument(
        "--grace",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="with --web, exit this long after the last browser tab closes (default 30)",
    )
    return found


def main(argv: list[str]) -> int:
    """Run `lore tui`; returns the exit code (1 with one stderr line on any failure)."""
    root = None  # until the arguments are read: LORE_ROOT, else the nearest store
    try:
        args = parser().parse_args(argv)
        root = args.root
        if not 0 <= args.port <= 65535:
            raise LoreError("--port {} is not a port (0-65535)", args.port)
        if not 0 <= args.grace < float("inf"):
            raise LoreError("--grace {} is not a number of seconds (0 or more)", args.grace)
        book = Lorebook.open(args.root)
        if args.web:
            from .web import serve

            app = [sys.executable, "-m", "lorebook", "tui", "--root", str(book.root)]
            return serve(app, port=args.port, grace=args.grace)
        from .app import make_app

        make_app(book).run()
    except LoreError as exc:  # redacted with the store's rules (its extra patterns too)
        print(error_line(exc, sanitizer=store_sanitizer(root)), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0
