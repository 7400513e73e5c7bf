"""`lore` entry point: `lore log` is served by a stdlib-only fast path; the rest loads click."""

from __future__ import annotations

import os
import sys


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "log":
        from .logspec import parse_fast

        values = parse_fast(args[1:])
        if values is not None:
            from .. import LoreError
            from .logcore import run_log
            from .output import report_error

            try:
                print(run_log(values, os.environ))
            except LoreError as exc:
                return report_error(exc, as_json=bool(values.get("json")))
            return 0
    from .app import run

    return run(args)


def console() -> None:
    """The `lore` executable: run `main` and exit with its code.

    After a successful fast-path `lore log` nothing is left to clean up (the shard is closed, the
    line written), so the process skips interpreter shutdown (~5-8 ms of a ~50 ms call) once its
    output is flushed. Every other command exits normally.
    """
    args = sys.argv[1:]
    try:
        code = main(args)
        sys.stdout.flush()  # here, not at exit: a closed pipe is still ours to handle
    except BrokenPipeError:
        from .output import closed_pipe

        code = closed_pipe()
    if args and args[0] == "log" and "click" not in sys.modules:
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)
