"""docs/cli.md's synopses and option tables, generated from the commands' declarations: the
CLI's command table and the entries of the skins the launcher hands commands to (`lore mcp`,
`lore tui`, `lore hooks`, `lore hook`, `lore import`). It sits beside the launcher, above every
skin.

Each command has one block in the reference, between `<!-- lore NAME: generated -->` and
`<!-- end of lore NAME -->`; the prose around the blocks is written by hand. `update` rewrites
the blocks from the table (tests/test_cli_doc.py fails when they differ), so adding an option
means adding it to the table and running:

    python -m lorebook.docgen docs/cli.md
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path

from .cli.table import TABLE, entry, summary
from .cmdline.parser import argument_help, build, metavar, option_help
from .cmdline.spec import Command, Group

WIDTH = 100
_BLOCK = re.compile(
    r"<!-- (?P<name>lore [a-z -]+): generated -->\n.*?<!-- end of (?P=name) -->\n", re.DOTALL
)


def skins() -> dict[str, Command | Group]:
    """The entries the other skins declare, by command name."""
    from .hooks.admin import HOOK, HOOKS
    from .hooks.importer.command import IMPORT
    from .mcp.entry import MCP
    from .tui.entry import TUI

    return {"mcp": MCP, "tui": TUI, "hooks": HOOKS, "hook": HOOK, "import": IMPORT}


def commands() -> Iterator[tuple[str, Command, str]]:
    """Every command declared: ("lore a b", its entry, its summary), the CLI's table first."""
    declared: dict[str, Command | Group | None] = {name: entry(name) for name in TABLE}
    declared.update(skins())
    for name, found in declared.items():
        if isinstance(found, Group):
            if found.own is not None:
                yield f"lore {name}", found.own, summary(name)
            for sub in found.commands:
                yield f"lore {name} {sub.name}", sub, sub.summary
        elif found is not None:
            yield f"lore {name}", found, summary(name)


def block(prog: str, command: Command, text: str) -> str:
    """The generated block of one command: its summary, synopsis and table of options."""
    usage = build(command, prog, "", WIDTH).format_usage().replace("[-h] ", "")
    usage = "\n".join(line[len("usage: ") :] for line in usage.rstrip().splitlines())
    lines = [f"<!-- {prog}: generated -->", text, "", "```", usage, "```"]
    rows = [(f"`{arg.name.upper()}`", argument_help(arg)) for arg in command.args if arg.help]
    for opt in command.options:
        names = f"{opt.short}, {opt.flag}" if opt.short else opt.flag
        if opt.kind == "switch":
            names = f"{opt.flag} / {opt.off}"
        elif opt.kind == "optional":
            names = f"{names} [{metavar(opt)}]"
        elif opt.takes_value:
            names = f"{names} {metavar(opt)}"
        rows.append((f"`{names}`", option_help(opt)))
    if rows:
        lines += ["", "| argument or option | meaning |", "| --- | --- |"]
        lines += [f"| {_cell(name)} | {_cell(help_text)} |" for name, help_text in rows]
    lines.append(f"<!-- end of {prog} -->")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ") or "—"


def update(doc: str) -> tuple[str, list[str]]:
    """`doc` with every command's block regenerated, and the commands that have no block."""
    wanted = {prog: block(prog, command, text) for prog, command, text in commands()}
    seen: set[str] = set()

    def fresh(match: re.Match[str]) -> str:
        name = match.group("name")
        seen.add(name)
        return wanted.get(name, "")  # a command that is gone loses its block

    return _BLOCK.sub(fresh, doc), [prog for prog in wanted if prog not in seen]


def main(argv: list[str]) -> int:
    """Rewrite the blocks of the reference at argv[0]; exit 1 naming commands with no block."""
    path = Path(argv[0] if argv else "docs/cli.md")
    text, missing = update(path.read_text(encoding="utf-8"))
    path.write_text(text, encoding="utf-8")
    for prog in missing:
        print(
            f"{path}: no block for `{prog}`: add `<!-- {prog}: generated -->` and "
            f"`<!-- end of {prog} -->` under its heading, then run this again",
            file=sys.stderr,
        )
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
