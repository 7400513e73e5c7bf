"""One-line errors instead of tracebacks: absurd ages and windows, a closed stdout, bad config
values and out-of-range numeric options — through the real `lore` command."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from conftest import assert_one_error_line, clean_env, lore
from lorebook import Lorebook
from lorebook.errors import UsageError
from lorebook.log.retention import archive_shards
from lorebook.timeutil import MAX_DAYS, parse_age

NOW = datetime.now(UTC).replace(microsecond=0)


def one_line(root: Path, *args: str) -> str:
    result = lore(*args, env=clean_env(root))
    assert "Traceback" not in result.err, result.err
    return assert_one_error_line(result)


@pytest.fixture
def logged(store: Path) -> Path:
    """A store with an epic's actions from yesterday and an hour ago."""
    book = Lorebook.open(store, env={})
    book.log("validate", session="s-1", epic="epic-1", outcome="failure", error="2 failed",
             now=NOW - timedelta(days=1))
    book.log("commit", session="s-1", epic="epic-1", now=NOW - timedelta(hours=1))
    return store


# -- 10. one bounded duration parser -------------------------------------------------------
@pytest.mark.parametrize("args, option", [
    (["actions", "--since", "99999999999d"], "--since 99999999999d"),
    (["actions", "--until", "99999999999999999999999w"], "--until"),
    (["actions", "--since", "0001-01-01T00:00:00+01:00"], "--since"),
    (["actions", "--since", "1200-01-01"], "--since 1200-01-01"),
    (["report", "--days", "999999"], "--days 999999"),
    (["report", "--since", "99999999999d"], "--since 99999999999d"),
    (["report", "--until", "0001-01-02"], "--until 0001-01-02"),
    (["report", "--json", "--days", "99999999999999999999"], "--days"),
    (["archive", "--older-than", "99999999d", "--dry-run"], "--older-than 99999999d"),
    (["prune", "--older-than", "99999999999d", "--dry-run"], "--older-than 99999999999d"),
    (["export", "--since", "99999999999d"], "--since 99999999999d"),
    (["export", "--until", "9999-12-31T23:59:59-01:00"], "--until"),
    (["draft", "from-epic", "epic-1", "--since", "99999999999d"], "--since 99999999999d"),
])  # fmt: skip
def test_huge_ages_and_windows_are_one_line(logged: Path, args: list[str], option: str) -> None:
    if "--json" in args:  # the error is then a JSON object on stderr
        result = lore(*args, env=clean_env(logged))
        assert result.code == 1 and result.out == "" and "Traceback" not in result.err
        message = json.loads(result.err)["error"]
    else:
        message = one_line(logged, *args)
    assert option in message
    assert str(MAX_DAYS) in message or "range of dates" in message


def test_the_message_names_the_accepted_forms(logged: Path) -> None:
    line = one_line(logged, "actions", "--since", "99999999999d")
    assert line == ("lore: error: --since 99999999999d: must be between 1s and 36500d "
                    "(an age like 45s, 30m, 24h, 90d or 12w)")
    line = one_line(logged, "archive", "--older-than", "0d")
    assert "--older-than 0d: must be between 1d and 36500d (an age like 90d or 12w)" in line
    assert "expected an age like 90d or 12w" in one_line(logged, "prune", "--older-than", "24h")


def test_ages_up_to_the_bound_still_work(logged: Path) -> None:
    result = lore("actions", "--since", f"{MAX_DAYS}d", "--json", env=clean_env(logged))
    assert result.code == 0, result.err
    assert len(json.loads(result.out)) == 2
    result = lore("archive", "--older-than", f"{MAX_DAYS}d", "--dry-run", env=clean_env(logged))
    assert result.code == 0, result.err
    assert lore("report", "--days", "30", env=clean_env(logged)).code == 0


def test_the_api_raises_usage_errors_not_overflow(logged: Path) -> None:
    book = Lorebook.open(logged, env={})
    with pytest.raises(UsageError, match="since 99999999999d"):
        book.actions(since="99999999999d")
    with pytest.raises(UsageError, match="--days 999999"):
        book.report(days=999999)
    with pytest.raises(UsageError, match="--since"):
        book.report(since="99999999999d")
    with pytest.raises(UsageError, match="until"):
        book.export_training_data(until="0001-01-01T00:00:00+01:00")
    with pytest.raises(UsageError, match="36500"):
        archive_shards(book.layout.actionlog, book.root, days=10**9, now=NOW, dry_run=True)
    with pytest.raises(UsageError):
        parse_age("1" * 5000 + "d", "--since")  # not int()'s digit limit either
    # the API takes the --since forms too, not only canonical timestamps
    assert [a["type"] for a in book.actions(since="2h")] == ["commit"]
    assert len(book.actions(since=NOW - timedelta(days=2))) == 2
