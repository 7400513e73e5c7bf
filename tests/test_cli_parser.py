"""The one parser: each option kind converts and refuses in one place, and every command's entry
builds a parser whose help names every option (a rule a test tells you)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import assert_one_error_line, clean_env, lore
from lorebook import UsageError, docgen
from lorebook.cmdline.parser import Shown, build, glued, parse, split_group
from lorebook.cmdline.spec import KINDS, Arg, Command, Group, Opt

TOY = Command(
    "toy",
    "x:y",
    args=(Arg("word"), Arg("rest", nargs="+")),
    options=(
        Opt("--text", "text"),
        Opt("--int", "int_", kind="int"),
        Opt("--float", "float_", kind="float"),
        Opt("--count", "count", kind="count", default=5),
        Opt("--fraction", "fraction", kind="fraction"),
        Opt("--seconds", "seconds", kind="seconds"),
        Opt("--days", "days", kind="days"),
        Opt("--flag", "flag", kind="flag"),
        Opt("--yes", "yes", kind="switch", off="--no"),
        Opt("--many", "many", kind="many"),
        Opt("--pick", "pick", choices=("a", "b"), default="a"),
        Opt("--output", "output", short="-o"),
        Opt("--opt", "opt", kind="optional"),
    ),
)

GOOD = [  # (kind, arguments, dest, value)
    ("str", ["--text", "-x starts with a dash"], "text", "-x starts with a dash"),
    ("str", ["--text=a=b"], "text", "a=b"),
    ("int", ["--int", "-3"], "int_", -3),
    ("float", ["--float", "2.5"], "float_", 2.5),
    ("float", ["--float", "inf"], "float_", float("inf")),  # the library says what may be
    ("count", [], "count", 5),
    ("count", ["--count", "1"], "count", 1),
    ("fraction", ["--fraction", "0"], "fraction", 0.0),
    ("fraction", ["--fraction", "1"], "fraction", 1.0),
    ("seconds", ["--seconds", "0"], "seconds", 0.0),
    ("days", ["--days", "36500"], "days", 36500),
    ("flag", ["--flag"], "flag", True),
    ("flag", [], "flag", False),
    ("switch", ["--yes"], "yes", True),
    ("switch", ["--no"], "yes", False),
    ("switch", [], "yes", None),
    ("many", ["--many", "a", "--many", "--b"], "many", ("a", "--b")),
    ("many", [], "many", ()),
    ("str", ["--pick", "b"], "pick", "b"),
    ("str", ["-o", "out.csv"], "output", "out.csv"),
    ("optional", ["--opt=x"], "opt", "x"),
    ("optional", ["--opt", "--flag"], "opt", ""),
    ("optional", [], "opt", None),
]

BAD = [  # (kind, arguments, what the one line says)
    ("int", ["--int", "1.5"], "1.5: expected an integer"),
    ("float", ["--float", "1e"], "1e: expected a number"),
    ("fraction", ["--fraction", "nan"], "nan: expected a number from 0 to 1"),
    ("seconds", ["--seconds", "inf"], "inf: expected a number of at least 0"),
    ("count", ["--count", "0"], "0: expected an integer of at least 1"),
    ("fraction", ["--fraction", "1.5"], "1.5: expected a number from 0 to 1"),
    ("seconds", ["--seconds", "-1"], "-1: expected a number of at least 0"),
    ("days", ["--days", "x"], "x: expected an integer of at least 1"),
    ("flag", ["--flag=yes"], "ignored explicit argument"),
    ("switch", ["--yes", "--no"], "not allowed with argument"),
    ("str", ["--pick", "c"], "invalid choice: 'c'"),
    ("str", ["--text"], "expected one argument"),
    ("str", ["--nosuch"], "unrecognized arguments: --nosuch"),
    ("str", ["--tex", "abbreviated"], "unrecognized arguments"),
]


def test_every_kind_is_tested_here() -> None:
    assert {kind for kind, *_ in GOOD} | {"str"} == set(KINDS)
    assert {kind for kind, *_ in BAD} | {"many", "optional"} == set(KINDS)


@pytest.mark.parametrize(("kind", "args", "dest", "value"), GOOD)
def test_good_values(kind: str, args: list[str], dest: str, value: object) -> None:
    values = parse(TOY, ["w", "r1", *args, "r2"], "lore toy", "")
    assert values[dest] == value
    assert (values["word"], values["rest"]) == ("w", ("r1", "r2"))


@pytest.mark.parametrize(("kind", "args", "needle"), BAD)
def test_bad_values_are_one_usage_error(kind: str, args: list[str], needle: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse(TOY, ["w", "r", *args], "lore toy", "")
    message = str(caught.value)
    assert needle in message and message.endswith("(see `lore toy --help`)"), message
    assert "\n" not in message


def test_missing_arguments_and_help() -> None:
    with pytest.raises(UsageError, match="required: WORD, REST"):
        parse(TOY, [], "lore toy", "")
    with pytest.raises(Shown) as shown:
        parse(TOY, ["--help"], "lore toy", "what it does")
    assert shown.value.code == 0


def test_double_dash_ends_options() -> None:
    assert glued(TOY.options, ["--text", "a", "--", "--text", "b"]) == [
        "--text=a",
        "--",
        "--text",
        "b",
    ]
    values = parse(TOY, ["w", "--", "--flag"], "lore toy", "")
    assert values["rest"] == ("--flag",) and values["flag"] is False


GROUP = Group(
    "toys",
    (Command("one", "x:y", summary="One."), Command("two", "x:y", summary="Two.")),
    own=Command(
        "toys",
        "x:z",
        options=(Opt("--days", "days", kind="days"), Opt("--json", "as_json", kind="flag")),
    ),
)


def test_a_group_splits_at_its_subcommand() -> None:
    assert split_group(GROUP, ["--days", "3"]) == (None, ["--days", "3"])
    sub, words = split_group(GROUP, ["--days", "one", "two"])  # "one" is the value of --days
    assert sub is not None and sub.name == "two" and words == ["--days", "one"]
    sub, words = split_group(GROUP, ["--json", "two", "--x"])
    assert sub is not None and sub.name == "two" and words == ["--json", "--x"]
    plain = Group("plain", GROUP.commands)
    with pytest.raises(UsageError, match="no such command 'three'"):
        split_group(plain, ["three"])


def test_every_entry_builds_and_its_help_names_every_option() -> None:
    for prog, command, text in docgen.commands():
        assert text, f"{prog} has no summary"
        shown = build(command, prog, text).format_help()
        for opt in command.options:
            assert opt.flag in shown, (prog, opt.flag)
            assert opt.help, f"{prog} {opt.flag}: every option says what it does"


def test_usage_errors_through_the_real_executable(store: Path) -> None:
    run = lore("actions", "--limit", "0", env=clean_env(store))
    assert_one_error_line(run, "--limit", "an integer of at least 1", "lore actions --help")
    run = lore("report", "--group-by", "week", env=clean_env(store))
    assert_one_error_line(run, "invalid choice: 'week'")
    run = lore("nosuch", env=clean_env(store))
    assert_one_error_line(run, "no such command 'nosuch'", "lore --help")
    run = lore("--nosuch", env=clean_env(store))
    assert_one_error_line(run, "no such option: --nosuch")
    run = lore("actions", "--json", "--limit", "x", env=clean_env(store))
    assert run.code == 1 and run.out == ""
    assert re.fullmatch(r'\{"error": ".*x: expected an integer.*"\}\n', run.err), run.err


def test_lore_hook_checks_by_hand_the_events_it_declares() -> None:
    """`lore hook EVENT` is declared (help, docs) but checked by hand on the capture path: the
    two lists are one."""
    from lorebook.hooks.admin import HOOK
    from lorebook.hooks.entry import EVENTS

    assert HOOK.args[0].choices == EVENTS
