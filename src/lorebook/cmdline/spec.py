"""The command table's vocabulary: a command is data (its arguments, options, help and the body
to call), so one parser, `lore --help` and docs/cli.md are all built from the same entries.

Plain classes with `__slots__`: the table is read on every `lore log`, where dataclasses and
typing would cost milliseconds.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs milliseconds on the append path; mypy still sees it
if TYPE_CHECKING:
    from typing import Any

# what an option's value is; each kind has one converter in `parser` (and one row in the docs)
KINDS = (
    "str",  # any text
    "int",  # any integer
    "float",  # any finite number
    "count",  # an integer >= 1 (--limit)
    "fraction",  # a finite number from 0 to 1 (--threshold)
    "seconds",  # a finite number >= 0 (--debounce)
    "days",  # an integer >= 1 (--days)
    "flag",  # present or not: True / False
    "switch",  # --yes / --no pair: True, False, or None when neither is given
    "many",  # text, repeatable: a tuple in the order given
    "optional",  # text, or "" when the flag is given alone (--branch [NAME])
)


class Opt:
    """One option: `--flag VALUE` stored under `dest`."""

    __slots__ = (
        "choices",
        "default",
        "dest",
        "flag",
        "help",
        "kind",
        "metavar",
        "off",
        "required",
        "short",
    )

    def __init__(
        self,
        flag: str,
        dest: str,
        help: str = "",
        kind: str = "str",
        metavar: str = "",
        choices: tuple[str, ...] = (),
        default: Any = None,
        short: str = "",
        required: bool = False,
        off: str = "",
    ) -> None:
        assert kind in KINDS, kind
        assert flag.startswith("--"), flag
        self.flag = flag
        self.dest = dest
        self.help = help
        self.kind = kind
        self.metavar = metavar  # shown in help; derived from the flag when empty
        self.choices = choices  # when given, the only values the option takes
        self.default = default  # shown in help when not None
        self.short = short  # a one-letter alias such as "-o"
        self.required = required
        self.off = off  # the negative flag of a `switch` ("--failure" for "--success")

    @property
    def takes_value(self) -> bool:
        return self.kind not in ("flag", "switch")


class Arg:
    """One positional argument: `nargs` is "1", "?" (optional) or "+" (one or more words,
    stored as a tuple)."""

    __slots__ = ("choices", "help", "name", "nargs")

    def __init__(
        self, name: str, help: str = "", nargs: str = "1", choices: tuple[str, ...] = ()
    ) -> None:
        assert nargs in ("1", "?", "+"), nargs
        self.name = name  # the value's key; shown upper-cased in help
        self.help = help
        self.nargs = nargs
        self.choices = choices  # when given, the only values it takes


class Command:
    """One command: what it takes, its help and the body that answers it.

    `body` is "module:function" under `lorebook.cli`, imported only when the command runs. A body
    with `book=True` is called as `body(book, values)` with the store opened for the user (its
    subscribers installed, long work shown on a status line); otherwise as
    `body(values, env, root)`. A body returns the text to print, an exit code, or None.
    """

    __slots__ = ("args", "body", "book", "help", "name", "options", "quick", "summary")

    def __init__(
        self,
        name: str,
        body: str,
        *,
        summary: str = "",
        args: tuple[Arg, ...] = (),
        options: tuple[Opt, ...] = (),
        help: str = "",
        book: bool = True,
        quick: bool = False,
    ) -> None:
        self.name = name
        # one line in the list of a group's commands (a top-level command's is in `table`)
        self.summary = summary
        self.body = body
        self.args = args
        self.options = options
        self.help = help  # shown by --help under the summary (examples, details)
        self.book = book
        # the body closes all it opens: the process may skip interpreter shutdown (~5-8 ms)
        self.quick = quick

    def option(self, dest: str) -> Opt | None:
        for opt in self.options:
            if opt.dest == dest:
                return opt
        return None


class Group:
    """Commands under one name (`lore report daily`). A group with a `body` also runs on its own
    (`lore report`), with its own options; otherwise it prints its help."""

    __slots__ = ("commands", "help", "name", "own")

    def __init__(
        self,
        name: str,
        commands: tuple[Command, ...],
        *,
        help: str = "",
        own: Command | None = None,
    ) -> None:
        self.name = name
        self.commands = commands
        self.help = help
        self.own = own  # the command `lore NAME` runs without a subcommand

    def command(self, name: str) -> Command | None:
        for command in self.commands:
            if command.name == name:
                return command
        return None


JSON = Opt("--json", "as_json", "Print JSON (stable contract).", kind="flag")
# options many commands share, declared once
SCOPE = (
    Opt("--project", "project", "Only this project."),
    Opt("--agent", "agent", "Only this agent."),
)
PUBLISH = Opt("--publish", "publish", "Publish directly instead of writing a draft.", kind="flag")
STORE_ROOT = Opt(
    "--root",
    "root",
    "Store root (default: LORE_ROOT, else the nearest store from the cwd).",
    metavar="PATH",
)
