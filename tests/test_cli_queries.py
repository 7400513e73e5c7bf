"""`lore actions` and `lore sessions`: filters, JSON contract, bad input."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from conftest import assert_one_error_line, clean_env, cli_run, lore
from lorebook import Lorebook
from lorebook.timeutil import format_ts

NOW = datetime.now(UTC).replace(microsecond=0)


@pytest.fixture
def populated(store: Path) -> Path:
    """Two sessions of two agents/projects, actions from 10 days ago up to 30 minutes ago."""
    book = Lorebook.open(store, env={})
    ps = book.start_session(
        session_id="s-ps", agent="PS", project="consilio", now=NOW - timedelta(days=10, minutes=1)
    )
    ps.log("plan", epic="epic-1", now=NOW - timedelta(days=10))
    ps.log(
        "commit",
        epic="epic-1",
        issue="ISS-1",
        context={"commit_hash": "a1b2"},
        now=NOW - timedelta(days=3),
    )
    ps.log(
        "deploy",
        outcome="failure",
        epic="epic-1",
        error="port in use",
        now=NOW - timedelta(hours=2),
    )
    book.end_session("s-ps", agent="PS", project="consilio", now=NOW - timedelta(hours=1))
    ms = book.start_session(
        session_id="s-ms", agent="MS", project="other", now=NOW - timedelta(hours=23)
    )
    ms.log("search", context={"query": "rls"}, now=NOW - timedelta(hours=23))
    ms.log("validate", outcome="in_progress", epic="epic-2", now=NOW - timedelta(minutes=31))
    return store


def actions_json(root: Path, *args: str) -> list[dict[str, Any]]:
    result = cli_run(["--root", str(root), "actions", "--json", *args])
    assert result.code == 0, result.err
    assert result.err == ""
    data = json.loads(result.out)
    assert isinstance(data, list)
    return data


def types(actions: list[dict[str, Any]]) -> list[str]:
    return [a["type"] for a in actions]


def test_all_actions_newest_first(populated: Path) -> None:
    found = actions_json(populated)
    assert types(found) == ["validate", "deploy", "search", "commit", "plan"]
    assert [a["ts"] for a in found] == sorted((a["ts"] for a in found), reverse=True)
    assert all(a["kind"] == "action" and a["v"] == 1 for a in found)
    deploy = found[1]
    assert (deploy["session"], deploy["agent"], deploy["project"]) == ("s-ps", "PS", "consilio")
    assert (deploy["outcome"], deploy["error"], deploy["epic"]) == (
        "failure",
        "port in use",
        "epic-1",
    )
    assert deploy["ts"] == format_ts(NOW - timedelta(hours=2))


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--type", "commit"], ["commit"]),
        (["--outcome", "failure"], ["deploy"]),
        (["--outcome", "in_progress"], ["validate"]),
        (["--project", "other"], ["validate", "search"]),
        (["--agent", "PS"], ["deploy", "commit", "plan"]),
        (["--epic", "epic-1"], ["deploy", "commit", "plan"]),
        (["--issue", "ISS-1"], ["commit"]),
        (["--session", "s-ms"], ["validate", "search"]),
        (["--category", "git"], ["commit"]),
        (["--since", "7d"], ["validate", "deploy", "search", "commit"]),
        (["--since", "24h"], ["validate", "deploy", "search"]),
        (["--since", "90m"], ["validate"]),
        (["--since", "2w"], ["validate", "deploy", "search", "commit", "plan"]),
        (["--limit", "2"], ["validate", "deploy"]),
        (["--agent", "PS", "--outcome", "success"], ["commit", "plan"]),
        (["--type", "nothing-like-this"], []),
        (["--project", "consilio", "--agent", "MS"], []),
    ],
)
def test_action_filters(populated: Path, args: list[str], expected: list[str]) -> None:
    assert types(actions_json(populated, *args)) == expected


def test_since_and_until_dates(populated: Path) -> None:
    five_days_ago = (NOW - timedelta(days=5)).strftime("%Y-%m-%d")
    assert types(actions_json(populated, "--until", five_days_ago)) == ["plan"]
    assert types(actions_json(populated, "--since", five_days_ago)) == [
        "validate",
        "deploy",
        "search",
        "commit",
    ]
    window = actions_json(
        populated,
        "--since",
        format_ts(NOW - timedelta(days=4)),
        "--until",
        format_ts(NOW - timedelta(hours=2)),
    )
    assert types(window) == ["search", "commit"]  # until is exclusive


def test_actions_table(populated: Path) -> None:
    result = cli_run(["--root", str(populated), "actions", "--agent", "MS"])
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert lines[0].split() == [
        "TIME",
        "(UTC)",
        "SESSION",
        "AGENT",
        "TYPE",
        "OUTCOME",
        "EPIC",
        "ID",
    ]
    assert len(lines) == 3
    assert lines[1].split()[3:7] == ["MS", "validate", "in_progress", "epic-2"]
    empty = cli_run(["--root", str(populated), "actions", "--agent", "nobody"])
    assert empty.out.strip() == "No matching actions."


def test_actions_through_the_entry_point(populated: Path) -> None:
    result = lore("actions", "--type", "deploy", "--json", env=clean_env(populated))
    assert result.code == 0, result.err
    (deploy,) = json.loads(result.out)
    assert deploy["error"] == "port in use"


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["--since", "yesterday"], ["--since", "yesterday", "7d", "24h", "YYYY-MM-DD"]),
        (["--until", "soon"], ["--until", "soon", "YYYY-MM-DD"]),
        (["--since", "2026-02-30"], ["2026-02-30"]),
        (["--since", "1d", "--until", "3d"], ["--since", "is not before --until"]),
        (["--since", "2026-01-05", "--until", "2026-01-05"], ["is not before --until"]),
        (["--outcome", "meh"], ["meh", "success, failure, blocked, in_progress"]),
        (["--limit", "0"], ["limit", "0"]),
    ],
)
def test_bad_action_queries(populated: Path, args: list[str], needles: list[str]) -> None:
    assert_one_error_line(cli_run(["--root", str(populated), "actions", *args]), *needles)


def test_bad_query_as_json(populated: Path) -> None:
    result = cli_run(["--root", str(populated), "actions", "--since", "later", "--json"])
    assert result.code == 1 and result.out == ""
    assert "7d" in json.loads(result.err)["error"]


def test_unreadable_lines_are_skipped_with_a_warning(populated: Path) -> None:
    shard = max((populated / "actionlog").rglob("s-ms.jsonl"))  # the newest day's shard
    number = len(shard.read_text().splitlines()) + 1
    with shard.open("a") as handle:
        handle.write('{"v": 1, "kind": "act\n')
    result = cli_run(["--root", str(populated), "actions", "--session", "s-ms", "--json"])
    assert result.code == 0
    assert types(json.loads(result.out)) == ["validate", "search"]
    rel = shard.relative_to(populated).as_posix()
    assert f"lore: warning: skipped {rel}:{number}: invalid JSON" in result.err


# -- sessions ----------------------------------------------------------------------------------
def sessions_json(root: Path, *args: str) -> list[dict[str, Any]]:
    result = cli_run(["--root", str(root), "sessions", "--json", *args])
    assert result.code == 0, result.err
    return json.loads(result.out)


def test_sessions_json_contract(populated: Path) -> None:
    ms, ps = sessions_json(populated)
    assert ms == {
        "id": "s-ms",
        "agent": "MS",
        "project": "other",
        "session_type": "cli",
        "started": format_ts(NOW - timedelta(hours=23)),
        "last_activity": format_ts(NOW - timedelta(minutes=31)),
        "ended": None,
        "end_reason": None,
        "status": "disconnected",
        "action_count": 2,
    }
    assert ps == {
        "id": "s-ps",
        "agent": "PS",
        "project": "consilio",
        "session_type": "cli",
        "started": format_ts(NOW - timedelta(days=10, minutes=1)),
        "last_activity": format_ts(NOW - timedelta(hours=1)),
        "ended": format_ts(NOW - timedelta(hours=1)),
        "end_reason": "normal",
        "status": "ended",
        "action_count": 3,
    }


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--project", "consilio"], ["s-ps"]),
        (["--agent", "MS"], ["s-ms"]),
        (["--status", "ended"], ["s-ps"]),
        (["--status", "disconnected"], ["s-ms"]),
        (["--status", "active"], []),
        (["--project", "other", "--status", "ended"], []),
    ],
)
def test_session_filters(populated: Path, args: list[str], expected: list[str]) -> None:
    assert [s["id"] for s in sessions_json(populated, *args)] == expected


def test_active_session_and_order(populated: Path) -> None:
    Lorebook.open(populated, env={}).log(
        "plan", session="s-new", agent="QA", now=NOW - timedelta(minutes=1)
    )
    found = sessions_json(populated)
    assert [(s["id"], s["status"]) for s in found] == [
        ("s-new", "active"),
        ("s-ms", "disconnected"),
        ("s-ps", "ended"),
    ]
    assert found[0]["started"] == found[0]["last_activity"]  # no start event: first record


def test_sessions_table(populated: Path) -> None:
    result = lore("sessions", env=clean_env(populated))
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert lines[0].split()[:5] == ["SESSION", "AGENT", "PROJECT", "STATUS", "ACTIONS"]
    assert lines[1].split()[:5] == ["s-ms", "MS", "other", "disconnected", "2"]
    assert lines[2].split()[:6] == ["s-ps", "PS", "consilio", "ended", "(normal)", "3"]


def test_bad_status(populated: Path) -> None:
    result = cli_run(["--root", str(populated), "sessions", "--status", "zombie"])
    assert_one_error_line(result, "zombie", "active, ended, disconnected")


def test_no_sessions(store: Path) -> None:
    assert sessions_json(store) == []
    assert cli_run(["--root", str(store), "sessions"]).out.strip() == "No sessions."
    assert actions_json(store) == []
