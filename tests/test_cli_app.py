"""The command group itself: help, version, unknown commands, usage errors as one line."""

from __future__ import annotations

from pathlib import Path

from conftest import assert_one_error_line, clean_env, cli_run, lore


def test_bare_lore_prints_help_and_succeeds() -> None:
    result = cli_run([])
    assert result.code == 0
    assert result.out.startswith("usage: lore [--root DIR] COMMAND [ARGS]...")
    for command in ("init", "log", "session", "actions", "sessions", "resume", "check", "demo"):
        assert f"\n  {command} " in result.out, command
    assert result.err == ""


def test_bare_group_prints_its_help() -> None:
    result = cli_run(["session"])
    assert result.code == 0
    assert "start" in result.out and "end" in result.out


def test_version_in_a_real_process() -> None:
    result = lore("--version")
    assert result.code == 0
    assert result.out.strip() == "lore, version 0.1.0"


def test_unknown_command_is_one_line_and_exit_1() -> None:
    assert_one_error_line(cli_run(["nosuch"]), "no such command 'nosuch'", "lore --help")


def test_usage_errors_are_one_line_and_exit_1(store: Path) -> None:
    result = cli_run(["--root", str(store), "actions", "--limit", "x"])
    assert_one_error_line(
        result, "argument --limit", "x: expected an integer", "lore actions --help"
    )


def test_usage_error_under_json_is_a_json_object(store: Path) -> None:
    result = lore("actions", "--limit", "x", "--json", env=clean_env(store))
    assert result.code == 1
    assert result.out == ""
    assert result.err.startswith('{"error": ') and "--limit" in result.err
