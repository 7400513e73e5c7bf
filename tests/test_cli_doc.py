"""docs/cli.md documents every command and every option `lore --help` knows: a command has a
heading (or a row of a table) of its own, and each of its long options is named there or in
the text under that heading. The reference is written by hand; this keeps it from drifting."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import click

from lorebook.cli.app import cli

DOC = Path(__file__).resolve().parents[1] / "docs" / "cli.md"


def commands(
    group: click.Group, path: list[str], ctx: click.Context
) -> Iterator[tuple[str, click.Command]]:
    """Every visible leaf command as ("lore a b", command)."""
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is None or command.hidden:
            continue
        sub = click.Context(command, parent=ctx, info_name=name)
        if isinstance(command, click.Group):
            yield from commands(command, [*path, name], sub)
        else:
            yield " ".join(["lore", *path, name]), command


def places(doc: str, name: str) -> list[str]:
    """The headings (with the text under them) and table rows that name `name` in code."""
    mention = re.compile("`" + re.escape(name) + r"[ `|\\]")
    found = []
    for block in re.split(r"(?m)^(?=#{2,3} )", doc):
        heading, _, body = block.partition("\n")
        if mention.search(heading):
            found.append(block)
        found.extend(
            line for line in body.splitlines() if line.startswith("|") and mention.search(line)
        )
    return found


def undocumented(doc: str) -> list[str]:
    missing = []
    for name, command in commands(cli, [], click.Context(cli, info_name="lore")):
        where = places(doc, name)
        if not where:
            missing.append(f"{name}: no heading or table row")
            continue
        text = "\n".join(where)
        for param in command.params:
            if not isinstance(param, click.Option) or param.hidden:
                continue
            longs = [o for o in [*param.opts, *param.secondary_opts] if o.startswith("--")]
            if longs and not any(re.search(re.escape(o) + r"(?![\w-])", text) for o in longs):
                missing.append(f"{name}: {longs[0]}")
    return missing


def test_every_command_and_option_is_in_the_cli_reference() -> None:
    assert undocumented(DOC.read_text(encoding="utf-8")) == []


def test_the_check_catches_a_missing_option_and_a_missing_command() -> None:
    doc = DOC.read_text(encoding="utf-8")
    assert "lore stale: --json" in undocumented(
        doc.replace("## `lore stale [--json]`", "## `lore stale`")
    )
    gone = re.sub(r"(?m)^#{2,3} `lore rca add.*$", "### RCA", doc)
    assert "lore rca add: no heading or table row" in undocumented(gone)
