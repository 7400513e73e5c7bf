"""The options of `lore log`, declared once for the stdlib fast path and the click command
(and the parser the fast paths share)."""

from __future__ import annotations


class Opt:
    """One option of `lore log` (a plain class: no dataclasses import on the append path)."""

    __slots__ = ("choices", "dest", "flag", "help", "kind", "metavar")

    def __init__(
        self,
        flag: str,
        dest: str,
        help: str,
        kind: str = "str",
        metavar: str = "TEXT",
        choices: tuple[str, ...] = (),
    ) -> None:
        self.flag = flag
        self.dest = dest
        self.help = help
        # str | float | fraction (a float from 0 to 1) | count (an int >= 1) | flag
        # | many (a str, repeatable: a tuple)
        self.kind = kind
        self.metavar = metavar
        self.choices = choices  # when given, the only values a str option takes


LOG_OPTIONS = (
    Opt(
        "--context",
        "context",
        "Action context: a JSON object, @FILE holding one, or - for stdin.",
        metavar="JSON|@FILE|-",
    ),
    Opt(
        "--outcome",
        "outcome",
        "success (default), failure, blocked or in_progress.",
        metavar="OUTCOME",
    ),
    Opt("--epic", "epic", "The epic this action belongs to.", metavar="EPIC"),
    Opt("--issue", "issue", "The issue this action belongs to.", metavar="ISSUE"),
    Opt(
        "--parent",
        "parent",
        "Id of the action this one follows up (e.g. its in_progress start).",
        metavar="ID",
    ),
    Opt(
        "--duration",
        "duration",
        "How long the action took, in seconds.",
        kind="float",
        metavar="SECONDS",
    ),
    Opt("--error", "error", "Error text (redacted before it is written)."),
    Opt("--category", "category", "Category; inferred from TYPE when absent.", metavar="CATEGORY"),
    Opt("--agent", "agent", "Agent name (else LORE_AGENT, config, 'agent').", metavar="AGENT"),
    Opt(
        "--project",
        "project",
        "Project (else LORE_PROJECT, config, repository name).",
        metavar="PROJECT",
    ),
    Opt(
        "--session",
        "session",
        "Session id (else LORE_SESSION, else the automatic session).",
        metavar="ID",
    ),
    Opt("--json", "json", "Print the stored action as JSON instead of its id.", kind="flag"),
)

LOG_HELP = """Append one action of TYPE to the action log and print its id.

TYPE is a lowercase word: commit, push, pr, deploy, plan, validate, spawn, search, tool_call, ...
The context, error text and metadata are redacted (secrets, PII) before they reach disk.

\b
Examples:
  lore log commit --context '{"files": ["src/auth.py"], "commit_hash": "a1b2c3d"}' --epic epic-012
  lore log validate --outcome failure --error "2 acceptance criteria failed" --epic epic-012
  echo '{"agent_id": "abc123"}' | lore log spawn --outcome in_progress --context -
"""


def parse_fast(args: list[str]) -> dict[str, object] | None:
    """Parse `log` arguments the simple way; None means "let the full CLI handle it"."""
    return parse_simple(args, LOG_OPTIONS, ("type",))


def parse_simple(
    args: list[str],
    options: tuple[Opt, ...],
    positional_names: tuple[str, ...],
    rest: str | None = None,
) -> dict[str, object] | None:
    """`--flag value`, `--flag=value` and exactly the named positionals (with `rest`: one or
    more words, as a tuple under that name); None for anything else (help, `--`, unknown or
    repeated options, a bad number or choice): click then answers it."""
    by_flag = {opt.flag: opt for opt in options}
    values: dict[str, object] = {}
    positional: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        index += 1
        if arg == "--" or arg in ("-h", "--help"):
            return None
        if rest is not None and arg.startswith("-") and not arg.startswith("--") and arg != "-":
            return None  # click decides what `-x` means among words
        if not arg.startswith("--") or arg == "-":
            positional.append(arg)
            continue
        flag, eq, inline = arg.partition("=")
        opt = by_flag.get(flag)
        if opt is None or (opt.dest in values and opt.kind != "many"):
            return None
        if opt.kind == "flag":
            if eq:
                return None
            values[opt.dest] = True
            continue
        if eq:
            raw = inline
        elif index < len(args):
            raw = args[index]
            index += 1
        else:
            return None
        if opt.kind in ("float", "fraction"):
            try:
                number = float(raw)
            except ValueError:
                return None
            if opt.kind == "fraction" and not 0 <= number <= 1:  # also refuses NaN
                return None
            values[opt.dest] = number
        elif opt.kind == "count":
            if not raw.isdigit() or int(raw) < 1:
                return None
            values[opt.dest] = int(raw)
        elif opt.choices and raw not in opt.choices:
            return None
        elif opt.kind == "many":
            values[opt.dest] = (*values.get(opt.dest, ()), raw)  # type: ignore[misc]
        else:
            values[opt.dest] = raw
    if rest is not None:
        if len(positional) <= len(positional_names):
            return None
        values[rest] = tuple(positional[len(positional_names) :])
        positional = positional[: len(positional_names)]
    if len(positional) != len(positional_names):
        return None
    values.update(zip(positional_names, positional, strict=True))
    return values
