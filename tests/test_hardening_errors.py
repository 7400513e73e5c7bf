"""One-line errors instead of tracebacks: absurd ages and windows, a closed stdout, bad config
values and out-of-range numeric options — through the real `lore` command."""

from __future__ import annotations

import json
import math
import os
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from conftest import LORE, assert_one_error_line, clean_env, lore, stored_actions
from lorebook import Lorebook
from lorebook.config import Config, load_config
from lorebook.errors import LoreError, UsageError
from lorebook.log.retention import archive_shards
from lorebook.settings import SearchSettings
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
    book.log(
        "validate",
        session="s-1",
        epic="epic-1",
        outcome="failure",
        error="2 failed",
        now=NOW - timedelta(days=1),
    )
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
    assert line == (
        "lore: error: --since 99999999999d: must be between 1s and 36500d "
        "(an age like 45s, 30m, 24h, 90d or 12w)"
    )
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


# -- 12. a closed stdout ------------------------------------------------------------------
def _closed_stdout(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run `lore` with a stdout whose reader is already gone: its first write fails."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(
            [*LORE, *args],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            env=clean_env(root),
            timeout=60,
        )
    finally:
        os.close(write_end)


@pytest.mark.parametrize("args", [
    [], ["--help"], ["session"], ["actions", "--json"], ["sessions"],
    ["log", "commit"], ["log", "commit", "--json"],
])  # fmt: skip
def test_a_closed_pipe_is_a_quiet_exit(logged: Path, args: list[str]) -> None:
    before = len(stored_actions(logged))
    done = _closed_stdout(logged, *args)
    assert done.stderr == "", done.stderr
    assert done.returncode == 1
    if args[:1] == ["log"]:
        assert len(stored_actions(logged)) == before + 1  # the action was written first


def test_a_reader_that_stops_early_sees_no_traceback(store: Path) -> None:
    book = Lorebook.open(store, env={})
    with book.session(session_id="bulk") as session:
        for index in range(1500):
            session.log("commit", context={"index": index, "files": ["src/a.py"] * 4})
    for args in (["actions", "--json", "--limit", "1500"], ["log", "commit", "--json"]):
        process = subprocess.Popen(
            [*LORE, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=clean_env(store)
        )
        assert process.stdout is not None and process.stderr is not None
        assert process.stdout.read(1) in (b"[", b"{")
        process.stdout.close()
        err = process.stderr.read().decode()
        process.wait(timeout=60)
        assert "Traceback" not in err and "BrokenPipe" not in err, err
        assert err == "", err


# -- 13. config values checked once, at load -----------------------------------------------
def write_config(root: Path, text: str) -> None:
    (root / ".lore" / "config.yaml").write_text(text, encoding="utf-8")


BAD_CONFIGS = [
    (
        "agent: PS\nlog:\n  durability: flush\n  max_line_bytes: big\n",
        ":4: log.max_line_bytes: expected an integer, got 'big'",
    ),
    (
        "sessions:\n  idle_minutes: soon\n",
        ":2: sessions.idle_minutes: expected a number, got 'soon'",
    ),
    ("catalog:\n  enabled: sometimes\n", ":2: catalog.enabled: expected true or false"),
    (
        "retention: {archive_days: 99999999}\n",
        ":1: retention.archive_days: expected an integer of at most 36500",
    ),
    (
        "search:\n  weights:\n    recency: -1\n",
        ":3: search.weights.recency: expected a number of at least 0, got -1",
    ),
    ("search:\n  threshold: .nan\n", ":2: search.threshold: expected a number, not infinity"),
    ("search:\n  threshold: 3\n", ":2: search.threshold: expected a number from 0 to 1, got 3"),
    (
        "embedding: [all-MiniLM-L6-v2]\n",
        ":1: embedding: expected a mapping of settings, got a list",
    ),
    ("index:\n  read_timeout: 2s\n", ":2: index.read_timeout: expected a number, got '2s'"),
    ("watch: {debounce_seconds: true}\n", ":1: watch.debounce_seconds: expected a number"),
    ("drafts:\n  lookback_days: 1e400\n", ":2: drafts.lookback_days: expected a number"),
    (
        "redaction:\n  extra_patterns:\n    itk: '[unclosed'\n",
        ":3: redaction.extra_patterns.itk: invalid regular expression: unterminated character set",
    ),
    (
        "redaction:\n  extra_secret_keys:\n    - vault_ref\n    - 7\n",
        ":4: redaction.extra_secret_keys[1]: expected text, got 7",
    ),
    ("paths:\n  actionlog: [a, b]\n", ":2: paths.actionlog: expected text, got a list"),
]


@pytest.mark.parametrize("text, needle", BAD_CONFIGS)
def test_a_bad_config_value_is_one_line_from_every_command(
    store: Path, text: str, needle: str
) -> None:
    write_config(store, text)
    for args in (["log", "commit"], ["sessions"], ["actions"], ["report"], ["search", "x"]):
        line = one_line(store, *args)
        assert f".lore/config.yaml{needle}" in line, (args, line)


def test_a_bad_config_is_never_cached_as_valid(store: Path) -> None:
    cache = store / ".lore" / "cache" / "config.json"
    write_config(store, "log:\n  max_line_bytes: big\n")
    for _ in range(2):
        assert "max_line_bytes" in one_line(store, "log", "commit")
        assert not cache.exists() or "big" not in cache.read_text()
    # a cache holding the bad value (say, from an older version) is not trusted either
    stat = (store / ".lore" / "config.yaml").stat()
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(
        json.dumps(
            {"stamp": [stat.st_size, stat.st_mtime_ns], "data": {"log": {"max_line_bytes": "big"}}}
        )
    )
    assert ":2: log.max_line_bytes: expected an integer" in one_line(store, "log", "commit")
    with pytest.raises(LoreError, match="max_line_bytes"):
        load_config(store)
    # fixed: works again, and the good value is cached
    write_config(store, "log:\n  max_line_bytes: 4096\n")
    assert lore("log", "commit", env=clean_env(store)).code == 0
    assert json.loads(cache.read_text())["data"] == {"log": {"max_line_bytes": 4096}}


def test_unknown_keys_and_good_values_are_accepted(store: Path) -> None:
    write_config(store, "future_feature: {x: 1}\nlog:\n  not_yet: 3\n"
                        "sessions:\n  idle_minutes: 7.5\n"
                        "search:\n  synonyms: {rls: [row level security]}\n  threshold: 0\n"
                        "index:\n  read_timeout: 1\n")  # fmt: skip
    config = load_config(store)
    assert config.sessions.idle_minutes == 7.5
    assert lore("log", "commit", env=clean_env(store)).code == 0


def test_the_defaults_are_the_ones_the_code_uses() -> None:
    config = Config()
    for section in ("index", "search", "embedding", "watch"):
        assert getattr(config, section).as_dict(), section
    assert config.search == SearchSettings()


# -- 16. numeric options in range ----------------------------------------------------------
@pytest.mark.parametrize("args, option", [
    (["search", "x", "--threshold", "nan"], "--threshold"),
    (["search", "x", "--threshold", "-5"], "--threshold"),
    (["search", "x", "--threshold", "1.5"], "--threshold"),
    (["search", "x", "--threshold", "inf"], "--threshold"),
    (["search", "x", "--limit", "0"], "--limit"),
    (["preflight", "x", "--limit", "-1"], "--limit"),
    (["actions", "--limit", "0"], "--limit"),
    (["resume", "--limit", "0"], "--limit"),
    (["watch", "--debounce", "nan"], "--debounce"),
    (["watch", "--debounce", "-1"], "--debounce"),
    (["report", "--days", "0"], "--days"),
])  # fmt: skip
def test_numeric_options_out_of_range_are_one_line(
    store: Path, args: list[str], option: str
) -> None:
    line = one_line(store, *args)
    assert option in line


def test_search_api_refuses_a_threshold_out_of_range(store: Path) -> None:
    book = Lorebook.open(store, env={})
    for value in (math.nan, -5.0, 1.5):
        with pytest.raises(UsageError, match="threshold"):
            book.index.search("anything", threshold=value, refresh=False)


@pytest.mark.parametrize("skin", ["mcp", "tui"])
def test_the_other_skins_print_their_errors_redacted(tmp_path: Path, skin: str) -> None:
    """`lore mcp` and `lore tui` print a failure as the CLI does: one line, redacted."""
    token = "ghp_" + "R8x2Lq9Zt4Wm7Kp3Vn6Yb1Hc5Jd0Fg2Ss4Ee"
    root = tmp_path / token
    root.mkdir()
    result = lore(skin, "--root", str(root), env=clean_env())
    assert result.code == 1
    assert token not in result.out + result.err
    assert_one_error_line(result, "no lorebook store at", "[REDACTED:")
