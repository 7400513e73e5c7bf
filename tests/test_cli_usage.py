"""A usage error in any store command (init, session, sessions, check, demo, catalog, export,
archive, prune, eval, index, watch, sync) is one line on stderr, exit 1, and writes nothing:
the real `lore` in a subprocess."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import assert_one_error_line, clean_env, git, lore


def snapshot(root: Path) -> tuple[str, list[tuple[str, int, int]]]:
    """HEAD and every file outside .git/ with its size and mtime: what a command could change."""
    files = sorted(
        (str(path.relative_to(root)), path.stat().st_size, path.stat().st_mtime_ns)
        for path in root.rglob("*")
        if ".git" not in path.relative_to(root).parts and path.is_file()
    )
    return git(root, "rev-parse", "HEAD").strip(), files


CASES = [
    (["init", "a", "b"], ["unrecognized arguments: b", "lore init --help"]),
    (["session", "stop"], ["no such command 'stop'", "start, end"]),
    (["session", "start", "--type"], ["argument --type: expected one argument"]),
    (["session", "end", "--reason"], ["argument --reason: expected one argument"]),
    (["sessions", "--status"], ["argument --status: expected one argument"]),
    (["check", "--fix", "now"], ["unrecognized arguments: now", "lore check --help"]),
    (["demo", "a", "b"], ["unrecognized arguments: b", "lore demo --help"]),
    (["catalog", "--rebuild", "x"], ["unrecognized arguments: x"]),
    (["export", "--format", "xml"], ["argument --format: invalid choice: 'xml'", "jsonl"]),
    (["export", "-o"], ["argument -o/--output: expected one argument"]),
    (["archive", "--older-than"], ["argument --older-than: expected one argument"]),
    (["prune", "--dry-run", "x"], ["unrecognized arguments: x", "lore prune --help"]),
    (["eval", "--mode", "fuzzy"], ["argument --mode: invalid choice: 'fuzzy'", "keyword"]),
    (["index", "--rebuld"], ["unrecognized arguments: --rebuld", "lore index --help"]),
    (["watch", "--debounce", "-1"], ["argument --debounce", "-1: expected a number of at least 0"]),
    (["watch", "--debounce", "nan"], ["nan: expected a number of at least 0"]),
    (["sync", "--message"], ["argument -m/--message: expected one argument"]),
]


@pytest.mark.parametrize(("args", "needles"), CASES, ids=[" ".join(a) for a, _ in CASES])
def test_a_usage_error_is_one_line_and_writes_nothing(
    store: Path, args: list[str], needles: list[str]
) -> None:
    before = snapshot(store)
    result = lore(*args, cwd=store, env=clean_env(store))
    assert_one_error_line(result, *needles)
    assert snapshot(store) == before


def test_a_usage_error_under_json_is_a_json_object(store: Path) -> None:
    result = lore("export", "--format", "xml", "--json", env=clean_env(store))
    assert result.code == 1 and result.out == ""
    assert result.err.startswith('{"error": ') and "invalid choice: 'xml'" in result.err
