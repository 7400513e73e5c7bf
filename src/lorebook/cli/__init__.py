"""`lore` entry point: `lore log` and `lore resume` are served by fast paths without click (the
commands agents call on every action and at every session start); the rest loads click."""

from __future__ import annotations

import os
import sys


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "log":
        from .logspec import parse_fast

        values = parse_fast(args[1:])
        if values is not None:
            from ..errors import LoreError
            from .logcore import run_log
            from .output import report_error

            try:
                print(run_log(values, os.environ))
            except LoreError as exc:
                return report_error(exc, as_json=bool(values.get("json")))
            return 0
    if args and args[0] == "resume":
        from .resumespec import parse_fast as parse_resume

        options = parse_resume(args[1:])
        if options is not None:
            from ..errors import LoreError
            from .output import report_error
            from .resumespec import run_resume

            try:
                print(run_resume(options, os.environ))
            except LoreError as exc:
                return report_error(exc, as_json=bool(options.get("as_json")))
            return 0
    from .app import run

    return run(args)


def console() -> None:
    """The `lore` executable: run `main` and exit with its code.

    After a fast-path `lore log` or `lore resume` nothing is left to clean up (the shard and the
    catalog are closed, git has answered), so the process skips interpreter shutdown (~5-8 ms
    of a ~50 ms call) once its output is flushed. Every other command exits normally.
    """
    args = sys.argv[1:]
    try:
        code = main(args)
        sys.stdout.flush()  # here, not at exit: a closed pipe is still ours to handle
    except BrokenPipeError:
        from .output import closed_pipe

        code = closed_pipe()
    if args and args[0] in ("log", "resume") and "click" not in sys.modules:
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)
