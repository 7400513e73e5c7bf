"""`lore` entry point: the global options, then the command's table entry (`table`), parsed by
the one parser (`parser`) and answered by the entry's body. Nothing but the command that runs
is imported: `lore log` reads its own entry and its body, no other.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing costs milliseconds on the append path; mypy still sees it
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from ..cmdline.spec import Command


def main(argv: list[str] | None = None) -> int:
    """Run one `lore` command in this process and return its exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    return run(args, os.environ)[0]


def run(args: list[str], env: Mapping[str, str]) -> tuple[int, bool]:
    """The exit code of `lore ARGS`, and whether the process may end without interpreter
    shutdown (the command closed all it opened). Every failure is one line on stderr."""
    from .. import LoreError
    from ..cmdline.parser import Shown
    from .output import report_error, store_sanitizer

    root: str | None = None
    as_json = "--json" in args
    try:
        root, rest = _globals(args)
        if not rest:
            _print_help()
            return 0, False
        command, values = _resolve(rest[0], rest[1:])
        return _call(command, values, root, env), command.quick
    except Shown as shown:
        return shown.code, False
    except LoreError as exc:
        return report_error(exc, as_json=as_json, sanitizer=store_sanitizer(root, env)), False
    except KeyboardInterrupt:
        print("lore: aborted", file=sys.stderr)
        return 1, False


def _globals(args: list[str]) -> tuple[str | None, list[str]]:
    """`--root DIR`, `--version` and `--help` before the command; the rest of `args`."""
    from .. import UsageError
    from ..cmdline.parser import Shown

    root = None
    index = 0
    while index < len(args) and args[index].startswith("-") and args[index] != "-":
        arg = args[index]
        if arg in ("-h", "--help"):
            _print_help()
            raise Shown(0)
        if arg == "--version":
            from importlib.metadata import version

            print(f"lore, version {version('lorebook')}")
            raise Shown(0)
        if arg == "--root" and index + 1 < len(args):
            root, index = args[index + 1], index + 2
        elif arg.startswith("--root="):
            root, index = arg.partition("=")[2], index + 1
        else:
            raise UsageError("no such option: {} (see `lore --help`)", arg)
    return root, args[index:]


def _print_help() -> None:
    from ..cmdline.parser import help_width
    from .table import top_help

    print(top_help(help_width()), end="")


def _resolve(name: str, args: list[str]) -> tuple[Command, dict[str, Any]]:
    """The command `name ARGS` runs and its parsed values."""
    from .. import UsageError
    from ..cmdline.parser import describe, group_listing, no_subcommand, parse, split_group
    from ..cmdline.spec import Group
    from .table import entry, summary

    found = entry(name)
    if found is None:
        from .table import SKIN_COMMANDS

        if name in SKIN_COMMANDS:  # `lore.cli.main(["mcp"])`: only the launcher serves it
            raise UsageError("`lore {}` is served by the `lore` executable, not this CLI", name)
        raise UsageError("no such command '{}' (see `lore --help`)", name)
    prog = f"lore {name}"
    if not isinstance(found, Group):
        return found, parse(found, args, prog, found.help or summary(name))
    sub, words = split_group(found, args)
    if sub is not None:
        description = sub.help or sub.summary
        return sub, parse(sub, words, f"{prog} {sub.name}", description)
    if found.own is None:
        no_subcommand(found, words, summary(name))
    description = describe(found.help or summary(name), group_listing(found))
    return found.own, parse(found.own, words, prog, description)


def _call(
    command: Command, values: dict[str, Any], root: str | None, env: Mapping[str, str]
) -> int:
    """Run the entry's body; print what it returns (text), return its exit code."""
    from .table import load

    module, _, function = command.body.partition(":")
    body = getattr(load(module), function)
    if command.book:
        from .longwork import run_with_book

        result = run_with_book(body, values, root)
    else:
        result = body(values, env, root=root)
    if isinstance(result, str):
        print(result)
        return 0
    return int(result or 0)


def console() -> None:
    """The `lore` executable: run the command and exit with its code.

    After a command whose body closed all it opened (`lore log`, `resume`, `actions`, `report`:
    the shard and the catalog are closed, git has answered) the process skips interpreter
    shutdown (~5-8 ms of a ~50 ms call) once its output is flushed.
    """
    args = sys.argv[1:]
    quick = False
    try:
        code, quick = run(args, os.environ)
        sys.stdout.flush()  # here, not at exit: a closed pipe is still ours to handle
    except BrokenPipeError:
        from .output import closed_pipe

        code = closed_pipe()
    if quick:
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)
