"""`lore tui [--root PATH] [--web [--port N] [--grace S]]`: open the store and run the app (or
serve it)."""

from __future__ import annotations

import sys

from lorebook import Lorebook, LoreError, error_line, store_sanitizer
from lorebook.cmdline.parser import Shown, parse
from lorebook.cmdline.spec import STORE_ROOT, Command, Opt

TUI = Command(
    "tui",
    "",  # served by this skin: the launcher hands `lore tui` over before the CLI loads
    options=(
        STORE_ROOT,
        Opt(
            "--web",
            "web",
            "Serve the same app on http://127.0.0.1:8000 behind a per-run token.",
            kind="flag",
        ),
        Opt("--port", "port", "Port for --web (0 picks a free one).", kind="int", default=8000),
        Opt(
            "--grace",
            "grace",
            "With --web, exit this long after the last browser tab closes.",
            kind="seconds",
            default=30.0,
        ),
    ),
    help=(
        "Browse sessions and actions, review drafts, search learnings, read reports and "
        "expertise\nin the terminal (see docs/tui.md)."
    ),
    book=False,
)


def main(argv: list[str]) -> int:
    """Run `lore tui`; returns the exit code (1 with one stderr line on any failure)."""
    root = None  # until the arguments are read: LORE_ROOT, else the nearest store
    try:
        args = parse(TUI, argv, "lore tui", TUI.help)
        root = args["root"]
        if not 0 <= args["port"] <= 65535:
            raise LoreError("--port {} is not a port (0-65535)", args["port"])
        book = Lorebook.open(root)
        if args["web"]:
            from .web import serve

            app = [sys.executable, "-m", "lorebook", "tui", "--root", str(book.root)]
            return serve(app, port=args["port"], grace=args["grace"])
        from .app import make_app

        make_app(book).run()
    except Shown as shown:  # --help
        return shown.code
    except LoreError as exc:  # redacted with the store's rules (its extra patterns too)
        print(error_line(exc, sanitizer=store_sanitizer(root)), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0
