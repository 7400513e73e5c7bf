"""One parser for every command: the standard library's argparse, built from a command's table
entry only when that command runs (~2 ms after what lorebook loads anyway; click cost ~35 ms).

Usage errors are `UsageError`s (one line, exit 1, like every other failure); `--help` prints
the help and raises `Shown`. An option that takes a value takes the next word whatever it looks
like (`--error "-x failed"`), as git and click do: argparse alone would read `-x` as an option.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import argparse
import math

from ..errors import UsageError
from .spec import Arg, Command, Group, Opt

TYPE_CHECKING = False  # typing costs milliseconds on the append path; mypy still sees it
if TYPE_CHECKING:
    from typing import Any, NoReturn

HELP_FLAGS = ("-h", "--help")


class Shown(Exception):
    """Help (or the version) was printed: the command ends here with `code`."""

    def __init__(self, code: int = 0) -> None:
        super().__init__(code)
        self.code = code


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError("{} (see `{} --help`)", message, self.prog)

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if message:  # argparse only exits by itself after printing help
            raise UsageError("{}", message.strip())
        raise Shown(status)


def _formatter(width: int) -> Any:
    """A formatter class of a fixed width: argparse would ask the terminal (importing shutil)
    for every parser it builds, help or not."""

    class Formatter(argparse.RawDescriptionHelpFormatter):
        def __init__(self, prog: str) -> None:
            super().__init__(prog, width=width, max_help_position=30)

    return Formatter


def help_width() -> int:
    """The terminal's width for help text, between 60 and 100 columns."""
    import shutil

    return max(60, min(100, shutil.get_terminal_size().columns))


# -- values -----------------------------------------------------------------------------------
def _number(raw: str, kind: str, low: float | None, high: float | None) -> int | float:
    """`raw` as a number of `kind`. A bounded kind also refuses NaN and infinity; a plain `float`
    passes them on, so that what a value may be is said once, by the library that takes it
    (`lore log --duration inf`: the appender's own error)."""
    try:
        number: int | float = int(raw) if kind == "int" else float(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{raw}: expected {_expected(kind, low, high)}") from None
    if low is None and high is None:
        return number
    finite = isinstance(number, int) or math.isfinite(number)
    if finite and (low is None or number >= low) and (high is None or number <= high):
        return number
    raise argparse.ArgumentTypeError(f"{raw}: expected {_expected(kind, low, high)}")


def _expected(kind: str, low: float | None, high: float | None) -> str:
    what = "an integer" if kind == "int" else "a number"
    if low is not None and high is not None:
        what += f" from {low:g} to {high:g}"
    elif low is not None:
        what += f" of at least {low:g}"
    return what


# kind -> (argparse type, metavar): each kind converts and says what it expects in one place
_BOUNDS: dict[str, tuple[str, float | None, float | None, str]] = {
    "int": ("int", None, None, "INTEGER"),
    "float": ("float", None, None, "NUMBER"),
    "count": ("int", 1, None, "N"),
    "days": ("int", 1, None, "DAYS"),
    "fraction": ("float", 0, 1, "FLOAT"),
    "seconds": ("float", 0, None, "SECONDS"),
}


def convert(opt: Opt, raw: str) -> Any:
    """The value of `opt` given as `raw` (the same conversion argparse applies)."""
    bounds = _BOUNDS.get(opt.kind)
    if bounds is None:
        return raw
    kind, low, high, _ = bounds
    return _number(raw, kind, low, high)


def metavar(opt: Opt) -> str:
    if opt.metavar:
        return opt.metavar
    if opt.choices:
        return "|".join(opt.choices) if len(opt.choices) <= 4 else "CHOICE"
    bounds = _BOUNDS.get(opt.kind)
    return bounds[3] if bounds else opt.flag.lstrip("-").replace("-", "_").upper()


def argument_help(arg: Arg) -> str:
    """An argument's help line: its text and the values it takes, when they are few."""
    if not arg.choices:
        return arg.help
    return f"{arg.help} One of: {', '.join(arg.choices)}.".strip()


def option_help(opt: Opt) -> str:
    """An option's help line: its text, its choices when the metavar hides them, its default."""
    text = opt.help
    if opt.choices and len(opt.choices) > 4 and not opt.metavar:
        text = f"{text} One of: {', '.join(opt.choices)}.".strip()
    if opt.default is not None and opt.kind not in ("flag", "many"):
        text = f"{text} [default: {opt.default}]".strip()
    if opt.required:
        text = f"{text} [required]".strip()
    return text


# -- building ---------------------------------------------------------------------------------
def build(
    command: Command, prog: str, description: str, width: int = 80
) -> argparse.ArgumentParser:
    """The argparse parser of one command."""
    parser = _Parser(
        prog=prog,
        description=description,
        formatter_class=_formatter(width),
        allow_abbrev=False,
    )
    for arg in command.args:
        _add_arg(parser, arg)
    for opt in command.options:
        _add_opt(parser, opt)
    return parser


def _add_arg(parser: argparse.ArgumentParser, arg: Arg) -> None:
    nargs = {"1": None, "?": "?", "+": "+"}[arg.nargs]
    parser.add_argument(
        arg.name,
        nargs=nargs,
        metavar=arg.name.upper(),
        help=argument_help(arg) or None,
        choices=arg.choices or None,
    )


def _add_opt(parser: argparse.ArgumentParser, opt: Opt) -> None:
    names = [opt.short, opt.flag] if opt.short else [opt.flag]
    help_text = option_help(opt) or None
    if opt.kind == "flag":
        parser.add_argument(*names, dest=opt.dest, action="store_true", help=help_text)
        return
    if opt.kind == "switch":
        group = parser.add_mutually_exclusive_group()
        group.add_argument(opt.flag, dest=opt.dest, action="store_true", help=help_text)
        group.add_argument(
            opt.off, dest=opt.dest, action="store_false", help=f"The opposite of {opt.flag}."
        )
        parser.set_defaults(**{opt.dest: None})
        return
    extra: dict[str, Any] = {"dest": opt.dest, "metavar": metavar(opt), "help": help_text}
    if opt.choices:
        extra["choices"] = opt.choices
    if opt.kind in _BOUNDS:
        bounds = _BOUNDS[opt.kind]

        def typed(raw: str, bounds: tuple[str, float | None, float | None, str] = bounds) -> Any:
            return _number(raw, bounds[0], bounds[1], bounds[2])

        typed.__name__ = opt.kind
        extra["type"] = typed
    if opt.kind == "many":
        extra["action"] = "append"
    if opt.kind == "optional":
        extra["nargs"], extra["const"] = "?", ""
    if opt.required:
        extra["required"] = True
    parser.add_argument(*names, **extra)


# -- parsing ----------------------------------------------------------------------------------
def glued(options: tuple[Opt, ...], args: list[str]) -> list[str]:
    """`--opt VALUE` as `--opt=VALUE` (and `-o VALUE` as `-oVALUE`) for every option that takes
    a value, so a value that starts with `-` is still that option's value; `--` ends options."""
    takes = {
        name
        for opt in options
        if opt.takes_value and opt.kind != "optional"  # its value is never the next option
        for name in (opt.flag, opt.short)
        if name
    }
    out: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        index += 1
        if arg == "--":
            out.extend(args[index - 1 :])
            break
        if arg in takes and index < len(args):
            value = args[index]
            index += 1
            out.append(f"{arg}={value}" if arg.startswith("--") else arg + value)
            continue
        out.append(arg)
    return out


def parse(command: Command, args: list[str], prog: str, description: str) -> dict[str, Any]:
    """The values of `command` given `args`: every option's dest and every argument's name (a
    tuple for "+" arguments and repeatable options; None or False when absent)."""
    width = help_width() if any(a in HELP_FLAGS for a in args) else 80
    parser = build(command, prog, description, width)
    words = glued(command.options, args)
    if any(arg.nargs == "+" for arg in command.args):
        found = parser.parse_intermixed_args(words)
    else:
        found = parser.parse_args(words)
    values = vars(found)
    for arg in command.args:
        if arg.nargs == "+":
            values[arg.name] = tuple(values[arg.name])
    for opt in command.options:
        if opt.kind == "many":
            values[opt.dest] = tuple(values[opt.dest] or ())
        elif opt.default is not None and values[opt.dest] is None:
            values[opt.dest] = opt.default
    return values


def split_group(group: Group, args: list[str]) -> tuple[Command | None, list[str]]:
    """The subcommand `args` name (None: none) and the words for it: options given before the
    subcommand's name go to it too (`lore report --json daily`)."""
    own = group.own.options if group.own is not None else ()
    takes = {opt.flag for opt in own if opt.takes_value}
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--":
            break
        if arg.startswith("-") and arg != "-":
            index += 2 if arg in takes else 1
            continue
        command = group.command(arg)
        if command is None:
            if group.own is None:
                known = ", ".join(c.name for c in group.commands)
                raise UsageError(
                    "no such command '{}' (one of: {}; see `lore {} --help`)",
                    arg,
                    known,
                    group.name,
                )
            break
        return command, args[:index] + args[index + 1 :]
    return None, args


# -- groups -----------------------------------------------------------------------------------
def describe(*parts: str) -> str:
    """Help text from its non-empty parts, a blank line between them."""
    return "\n\n".join(part.strip("\n") for part in parts if part.strip())


def group_listing(group: Group) -> str:
    """The subcommands of `group` as help text."""
    width = max(len(c.name) for c in group.commands) + 2
    rows = [f"  {c.name.ljust(width)}{c.summary}" for c in group.commands]
    return "commands:\n" + "\n".join(rows)


def no_subcommand(group: Group, words: list[str], summary: str) -> NoReturn:
    """`lore GROUP` given no subcommand, for a group that does nothing on its own: its help when
    asked for (or given nothing), else a usage error."""
    prog = f"lore {group.name}"
    if words and not any(word in HELP_FLAGS for word in words):
        names = ", ".join(c.name for c in group.commands)
        raise UsageError("`{}` needs a command: {} (see `{} --help`)", prog, names, prog)
    print(f"usage: {prog} COMMAND [ARGS]...\n")
    print(describe(group.help or summary, group_listing(group)))
    print(f"\n`{prog} COMMAND --help` shows a command's options.")
    raise Shown(0)
