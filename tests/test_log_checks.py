"""Every check an appended record goes through, held at both entry points: the real `lore log`
and the Python API. Each check is made once, below both (the appender and the record it
builds), so each row here must give the same refusal through either door.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import assert_one_error_line, clean_env, lore, shard_files, stored_actions
from lorebook import Lorebook, UsageError

GHP = "ghp_" + "Zq1Wx2Ec3Rv4Tb5Yn6Um7Ik8Ol9Pa0Sd1Fg2Hj"


def _deep(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {"leaf": 1}
    for _ in range(levels - 1):
        value = {"k": value}
    return value


DEEP = _deep(70)  # past log.max_depth (64)

# (name, `lore log` arguments, its environment, the API's log(...) arguments, the API's env,
#  what the one error line says)
REFUSED: list[tuple[str, list[str], dict[str, str], dict[str, Any], dict[str, str], list[str]]] = [
    (
        "type word",
        ["Commit"],
        {},
        {"action_type": "Commit"},
        {},
        ["action type 'Commit' must be a lowercase word"],
    ),
    (
        "outcome",
        ["commit", "--outcome", "done"],
        {},
        {"outcome": "done"},
        {},
        ["outcome 'done' is not one of: success, failure, blocked, in_progress"],
    ),
    (
        "context is an object",
        ["commit", "--context", "[1]"],
        {},
        {"context": [1]},
        {},
        ["context must be a JSON object, not list"],
    ),
    (
        "context depth",
        ["commit", "--context", json.dumps(DEEP)],
        {},
        {"context": DEEP},
        {},
        ["context: too deeply nested (more than 64 levels", "log.max_depth"],
    ),
    (
        "duration below zero",
        ["commit", "--duration", "-1"],
        {},
        {"duration_s": -1},
        {},
        ["duration -1", "must be a non-negative number of seconds"],
    ),
    (
        "duration not finite",
        ["commit", "--duration", "inf"],
        {},
        {"duration_s": float("inf")},
        {},
        ["duration inf must be a non-negative number of seconds"],
    ),
    (
        "duration nan",
        ["commit", "--duration", "nan"],
        {},
        {"duration_s": float("nan")},
        {},
        ["duration nan must be a non-negative number of seconds"],
    ),
    (
        "parent id",
        ["commit", "--parent", "123"],
        {},
        {"parent": "123"},
        {},
        ["parent '123' is not an action id (a 26-character ULID)"],
    ),
    (
        "session id",
        ["commit", "--session", "has space"],
        {},
        {"session": "has space"},
        {},
        ["session id 'has space' must be 1-128 characters"],
    ),
    (
        "LORE_SESSION",
        ["commit"],
        {"LORE_SESSION": "has space"},
        {},
        {"LORE_SESSION": "has space"},
        ["LORE_SESSION: session id 'has space' must be 1-128 characters"],
    ),
    (
        "session looks like a secret",
        ["commit", "--session", GHP],
        {},
        {"session": GHP},
        {},
        ["session: the value looks like a secret (github_token); refusing"],
    ),
    (
        "agent looks like a secret",
        ["commit", "--agent", GHP],
        {},
        {"agent": GHP},
        {},
        ["agent: the value looks like a secret (github_token); refusing"],
    ),
    (
        "epic looks like a secret",
        ["commit", "--epic", GHP],
        {},
        {"epic": GHP},
        {},
        ["epic: the value looks like a secret (github_token); refusing"],
    ),
    (
        "LORE_AGENT looks like a secret",
        ["commit"],
        {"LORE_AGENT": GHP},
        {},
        {"LORE_AGENT": GHP},
        ["LORE_AGENT: the value looks like a secret (github_token); refusing"],
    ),
    (
        "LORE_PROJECT looks like a secret",
        ["commit"],
        {"LORE_PROJECT": GHP},
        {},
        {"LORE_PROJECT": GHP},
        ["LORE_PROJECT: the value looks like a secret (github_token)"],
    ),
]


@pytest.mark.parametrize(
    ("args", "env", "needles"), [pytest.param(r[1], r[2], r[5], id=r[0]) for r in REFUSED]
)
def test_lore_log_refuses(
    store: Path, args: list[str], env: dict[str, str], needles: list[str]
) -> None:
    line = assert_one_error_line(lore("log", *args, env=clean_env(store, **env)), *needles)
    assert GHP not in line
    assert shard_files(store) == []


@pytest.mark.parametrize(
    ("kwargs", "env", "needles"), [pytest.param(r[3], r[4], r[5], id=r[0]) for r in REFUSED]
)
def test_the_api_refuses(
    store: Path, kwargs: dict[str, Any], env: dict[str, str], needles: list[str]
) -> None:
    book = Lorebook.open(store, env=env)
    fields = dict(kwargs)
    with pytest.raises(UsageError) as info:
        book.log(fields.pop("action_type", "commit"), **fields)
    for needle in needles:
        assert needle in str(info.value), (needle, str(info.value))
    assert GHP not in str(info.value)
    assert shard_files(store) == []


def test_a_duration_that_is_not_a_number(store: Path) -> None:
    """The API takes any value: the record refuses it. `lore log` parses a number first."""
    with pytest.raises(UsageError, match=r"duration '5' must be a number of seconds"):
        Lorebook.open(store, env={}).log("commit", duration_s="5")
    assert_one_error_line(
        lore("log", "commit", "--duration", "five", env=clean_env(store)), "--duration"
    )
    assert shard_files(store) == []


def test_session_events_are_checked_through_both_doors(store: Path) -> None:
    book = Lorebook.open(store, env={})
    with pytest.raises(UsageError, match="session type 'tty' is not one of: cli, browser"):
        book.start_session(session_type="tty")
    with pytest.raises(UsageError, match="session id 'a b' must be 1-128 characters"):
        book.start_session(session_id="a b")
    with pytest.raises(UsageError, match="end reason 'Bye' must be a lowercase word"):
        book.end_session("s-1", reason="Bye")
    with pytest.raises(UsageError, match="no session to end: pass --session or set LORE_SESSION"):
        book.end_session()
    env = clean_env(store)
    assert_one_error_line(lore("session", "start", "--type", "tty", env=env), "tty")
    assert_one_error_line(
        lore("session", "start", "--id", "a b", env=env),
        "session id 'a b' must be 1-128 characters",
    )
    assert_one_error_line(
        lore("session", "end", "--session", "s-1", "--reason", "Bye", env=env), "Bye"
    )
    assert_one_error_line(lore("session", "end", env=env), "no session to end")
    assert shard_files(store) == []


def test_what_is_kept_is_redacted_capped_and_clipped_through_both_doors(store: Path) -> None:
    """Redaction (counted in meta.redactions), the value cap, the line cap: the same record
    either way."""
    (store / ".lore" / "config.yaml").write_text("log:\n  max_line_bytes: 4096\n")
    context = {"password": "hunter2", "note": f"token {GHP}", "long": "x" * 1500}
    big = {"blob": "y" * 900, "more": ["z" * 900] * 5}
    run = lore("log", "commit", "--json", "--context", json.dumps(context), env=clean_env(store))
    assert run.code == 0, run.err
    over = lore("log", "commit", "--json", "--context", json.dumps(big), env=clean_env(store))
    assert over.code == 0, over.err
    book = Lorebook.open(store, env={})
    api = book.log("commit", context=context)
    api_over = book.log("commit", context=big)
    for record, large in ((json.loads(run.out), json.loads(over.out)), (api, api_over)):
        assert record["context"]["password"] == "[REDACTED]"
        assert GHP not in record["context"]["note"]
        assert record["meta"]["redactions"] == 2
        assert len(record["context"]["long"]) < 1100 and "TRUNCATED" in record["context"]["long"]
        assert "_truncated" in large["context"]  # over the line cap: a visible summary
    text = "".join(p.read_text() for p in shard_files(store))
    assert "hunter2" not in text and GHP not in text
    assert len(stored_actions(store)) == 4


def test_clipping_instead_of_refusing_is_the_apis_choice(store: Path) -> None:
    """Hooks and MCP log with `clip=True`: depth and a bad duration are clipped and named."""
    record = Lorebook.open(store, env={}).log(
        "tool_call", clip=True, context=DEEP, duration_s=float("nan")
    )
    assert record["duration_s"] is None
    assert record["meta"]["clipped"][0].startswith("context.k.k")
    assert record["meta"]["clipped"][-1] == "duration_s"


def _outside_shard(tmp_path: Path, store: Path) -> str:
    """A session "id" that walks out of today's day directory to a shard-like file outside the
    store, holding an end event."""
    assert lore("log", "plan", env=clean_env(store)).code == 0  # today's directory exists
    (day,) = {p.parent for p in shard_files(store)}
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "evil.jsonl").write_text(
        json.dumps(
            {
                "v": 1,
                "kind": "session",
                "event": "end",
                "id": "01JCDQ4S6Q0000000000000000",
                "ts": "2026-01-01T00:00:00.000Z",
                "session": "x",
                "agent": "mallory",
                "project": "elsewhere",
                "reason": "normal",
                "meta": {},
            },
            separators=(",", ":"),
        )
        + "\n"
    )
    return os.path.relpath(outside / "evil", day)


def test_a_session_id_is_checked_before_its_shards_are_read(tmp_path: Path, store: Path) -> None:
    """An id that is not a file name was used to read "its" shard (the session's identity, whether
    it ended) before it was refused: `lore log` printed a warning about a file outside the store
    before the error."""
    bad = _outside_shard(tmp_path, store)
    line = assert_one_error_line(
        lore("log", "commit", "--session", bad, env=clean_env(store)), "must be 1-128 characters"
    )
    assert "ended" not in line
    assert len(stored_actions(store)) == 1


def test_the_api_checks_a_session_id_before_it_reads_a_file(tmp_path: Path, store: Path) -> None:
    bad = _outside_shard(tmp_path, store)
    script = (
        "import sys\n"
        "opened = []\n"
        "sys.addaudithook(lambda e, a: opened.append(str(a[0])) if e == 'open' else None)\n"
        "from lorebook import Lorebook, UsageError\n"
        "book = Lorebook.open(sys.argv[1], env={})\n"
        "for call in (lambda: book.log('commit', session=sys.argv[2]),\n"
        "             lambda: book.end_session(sys.argv[2])):\n"
        "    try:\n"
        "        call()\n"
        "    except UsageError as exc:\n"
        "        print(exc)\n"
        "print([p for p in opened if 'outside' in p])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(store), bad],
        capture_output=True,
        text=True,
        env=clean_env(store),
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    *errors, read = done.stdout.strip().splitlines()
    assert len(errors) == 2 and all("must be 1-128 characters" in e for e in errors), errors
    assert read == "[]"
