"""`lore` entry point: `lore log`, `lore resume`, `lore actions`, `lore report`, `lore search`
and `lore preflight` are served by fast paths without click (the commands agents call on every
action, at every session start, every prompt and to look things up); the rest loads click."""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing costs milliseconds on the append path; mypy still sees it
if TYPE_CHECKING:
    from typing import Any


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "log":
        from .logspec import parse_fast

        values = parse_fast(args[1:])
        if values is not None:
            from .logcore import run_log

            return _serve(run_log, values, "json")
    if args and args[0] == "resume":
        from .resumespec import parse_fast as parse_resume

        options = parse_resume(args[1:])
        if options is not None:
            from .resumespec import run_resume

            return _serve(run_resume, options, "as_json")
    if args and args[0] in ("actions", "report"):
        from .queryspec import parse_fast as parse_lookup

        lookup = parse_lookup(args)
        if lookup is not None:
            return _serve(*lookup, "as_json")
    if args and args[0] in ("search", "preflight"):
        from .searchspec import FAST

        parse, answer = FAST[args[0]]
        found = parse(args[1:])
        if found is not None:
            return _serve(answer, found, "as_json")
    from .app import run

    return run(args)


def _serve(run: Any, values: dict[str, Any], json_key: str) -> int:
    """A fast path's answer printed, or its error as one line (JSON with `--json`)."""
    from .. import LoreError
    from .output import report_error, store_sanitizer

    try:
        print(run(values, os.environ))
    except LoreError as exc:
        as_json = bool(values.get(json_key))
        return report_error(exc, as_json=as_json, sanitizer=store_sanitizer(None, os.environ))
    return 0


def console() -> None:
    """The `lore` executable: run `main` and exit with its code.

    After a fast-path `lore log`, `lore resume`, `lore actions` or `lore report` nothing is left
    to clean up (the shard and the catalog are closed, git has answered), so the process skips
    interpreter shutdown (~5-8 ms of a ~50 ms call) once its output is flushed. Every other
    command exits normally.
    """
    args = sys.argv[1:]
    try:
        code = main(args)
        sys.stdout.flush()  # here, not at exit: a closed pipe is still ours to handle
    except BrokenPipeError:
        from .output import closed_pipe

        code = closed_pipe()
    if args and args[0] in ("log", "resume", "actions", "report") and "click" not in sys.modules:
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)
