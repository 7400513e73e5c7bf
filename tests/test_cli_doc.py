"""docs/cli.md's synopses and option tables are generated from the command table: every command
has its block, and every block is what the table gives today (`python -m lorebook.docgen
docs/cli.md` rewrites them). The prose around the blocks is written by hand."""

from __future__ import annotations

from pathlib import Path

from conftest import lore
from lorebook import docgen
from lorebook.cli.table import SKIN_COMMANDS, TABLE

DOC = Path(__file__).resolve().parents[1] / "docs" / "cli.md"


def test_every_command_has_its_generated_block_and_each_is_current() -> None:
    doc = DOC.read_text(encoding="utf-8")
    fresh, missing = docgen.update(doc)
    assert missing == [], "run `python -m lorebook.docgen docs/cli.md`"
    assert fresh == doc, "docs/cli.md drifted: run `python -m lorebook.docgen docs/cli.md`"


def test_a_drifted_option_and_a_missing_command_are_caught() -> None:
    doc = DOC.read_text(encoding="utf-8")
    row = next(line for line in doc.splitlines() if line.startswith("| `--outcome OUTCOME`"))
    drifted = doc.replace(row + "\n", "", 1)
    assert docgen.update(drifted)[0] == doc  # the row comes back: the check would fail on it
    start = doc.index("<!-- lore stale: generated -->")
    end = doc.index("<!-- end of lore stale -->") + len("<!-- end of lore stale -->\n")
    assert docgen.update(doc[:start] + doc[end:])[1] == ["lore stale"]


def test_every_option_of_every_command_is_in_its_block() -> None:
    doc = DOC.read_text(encoding="utf-8")
    for prog, command, _ in docgen.commands():
        start = doc.index(f"<!-- {prog}: generated -->")
        text = doc[start : doc.index(f"<!-- end of {prog} -->", start)]
        for opt in command.options:
            assert f"`{opt.flag}" in text or f"{opt.short}, {opt.flag}" in text, (prog, opt.flag)


def test_lore_help_lists_every_command() -> None:
    result = lore("--help")
    assert result.code == 0, result.err
    listed = result.out.split("commands:", 1)[1]
    for name in [*TABLE, *SKIN_COMMANDS]:
        assert f"\n  {name} " in listed, name


def test_a_new_option_is_added_in_one_place() -> None:
    """A newcomer adds an `Opt` to a command's entry and nothing else: the parser takes it, --help
    shows it and the docs' block for the command changes (so the doc check asks for a rerun)."""
    from lorebook.cmdline.parser import build
    from lorebook.cmdline.spec import Command, Opt

    doc = DOC.read_text(encoding="utf-8")
    prog, command, text = next(found for found in docgen.commands() if found[0] == "lore stale")
    added = Opt("--newcomer", "newcomer", kind="int", help="an option added by a newcomer")
    grown = Command(
        command.name,
        command.body,
        summary=command.summary,
        args=command.args,
        options=(*command.options, added),
        help=command.help,
        book=command.book,
        quick=command.quick,
    )
    parser = build(grown, prog, text)
    assert "--newcomer" in parser.format_help() and "a newcomer" in parser.format_help()
    assert vars(parser.parse_args(["--newcomer", "3"]))["newcomer"] == 3
    before, after = docgen.block(prog, command, text), docgen.block(prog, grown, text)
    assert before in doc and "`--newcomer INTEGER`" in after and after not in doc
