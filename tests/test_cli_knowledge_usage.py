"""Usage errors of the knowledge commands (learn, learnings, show, drafts, stale, promote,
reject, history, draft, pattern, extract, apply, stats, rca, expertise) through the real `lore`:
one line on stderr, exit 1, nothing on stdout, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import assert_one_error_line, clean_env, git, lore
from lorebook import Lorebook


def _files(root: Path) -> dict[str, bytes]:
    """Every file of the store but git's own and the disposable cache."""
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and not {".git", "cache"} & set(path.relative_to(root).parts)
    }


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["learn", "new"], "the following arguments are required: --title"),
        (["learn", "bogus"], "no such command 'bogus'"),
        (["learnings", "--status", "asleep"], "invalid choice: 'asleep'"),
        (["show"], "the following arguments are required: ID"),
        (["drafts", "extra"], "unrecognized arguments: extra"),
        (["stale", "--limit", "3"], "unrecognized arguments: --limit"),
        (["promote"], "the following arguments are required: ID"),
        (["reject", "{lesson}"], "the following arguments are required: --reason"),
        (["history", "{lesson}", "more"], "unrecognized arguments: more"),
        (["draft", "from-epic"], "the following arguments are required: EPIC"),
        (["draft", "from-issue", "42", "--since", "7d"], "unrecognized arguments: --since"),
        (["pattern", "new"], "the following arguments are required: --title"),
        (["pattern", "record", "{pid}", "--solution", "s1"], "--success or --failure"),
        (["extract", "retro"], "the following arguments are required: FILE"),
        (["apply", "{lesson}", "--outcome", "maybe"], "invalid choice: 'maybe'"),
        (["stats", "a", "b"], "unrecognized arguments: b"),
        (["rca", "add"], "the following arguments are required: FILE"),
        (["rca", "remove", "x"], "no such command 'remove'"),
        (["expertise", "validate"], "give a DOMAIN or --all"),
        (["expertise", "classify"], "the following arguments are required: TEXT"),
        (["expertise", "learn", "--session"], "expected one argument"),
    ],
)
def test_usage_error_is_one_line_and_writes_nothing(
    store: Path, args: list[str], needle: str
) -> None:
    book = Lorebook.open(store, env={})
    pid = book.knowledge.new_pattern(title="Flaky port", solutions=["Ask the registry"]).id
    lesson = book.learnings.new(title="A lesson").id
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", "two drafts")
    before = _files(store)
    argv = [a.format(pid=pid, lesson=lesson) for a in args]
    assert_one_error_line(lore(*argv, env=clean_env(store)), needle)
    assert _files(store) == before
    assert git(store, "status", "--porcelain") == ""
