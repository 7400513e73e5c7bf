"""`lore check`: exit 0 on a clean store, exit 1 with file:line findings otherwise."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from conftest import clean_env, cli_run, lore
from lorebook import Lorebook
from lorebook.ids import new_ulid

T0 = datetime(2026, 3, 4, 12, 0, tzinfo=UTC)
GITHUB_TOKEN = "ghp_" + "R8x2Lq9Zt4Wm7Kp3Vn6Yb1Hc5Jd0Fg2Ss4Ee"


@pytest.fixture
def logged(store: Path) -> Path:
    """A clean store: one session with three actions on 2026-03-04."""
    book = Lorebook.open(store, env={})
    s = book.start_session(session_id="s-1", agent="PS", project="consilio", now=T0)
    s.log("plan", epic="e-1", now=T0 + timedelta(minutes=1), context={"approach": "x"})
    s.log("commit", epic="e-1", now=T0 + timedelta(minutes=2), context={"api_key": "abc123"})
    s.log("validate", epic="e-1", now=T0 + timedelta(minutes=3))
    return store


def shard(root: Path) -> Path:
    return root / "actionlog" / "2026" / "03" / "04" / "s-1.jsonl"


REL = "actionlog/2026/03/04/s-1.jsonl"


def check(root: Path) -> tuple[int, dict[str, Any]]:
    result = cli_run(["--root", str(root), "check", "--json"])
    return result.code, json.loads(result.out)


def reasons(report: dict[str, Any]) -> list[tuple[str, int, str]]:
    return [(f["path"], f["line"], f["reason"]) for f in report["findings"]]


def test_clean_store_passes(logged: Path) -> None:
    result = lore("check", env=clean_env(logged))
    assert result.code == 0, result.out + result.err
    assert result.out.strip() == "checked 4 records in 1 shards, 0 learnings, 0 expertise files: ok"
    code, report = check(logged)
    assert code == 0
    assert report == {
        "ok": True,
        "shards": 1,
        "records": 4,
        "learnings": 0,
        "expertise": 0,
        "repeated": 0,
        "fixed": 0,
        "findings": [],
    }


def test_empty_store_passes(store: Path) -> None:
    code, report = check(store)
    assert code == 0
    assert report == {
        "ok": True,
        "shards": 0,
        "records": 0,
        "learnings": 0,
        "expertise": 0,
        "repeated": 0,
        "fixed": 0,
        "findings": [],
    }


def test_torn_last_line(logged: Path) -> None:
    with shard(logged).open("a") as handle:
        handle.write('{"v":1,"kind":"action","id":"01K')
    code, report = check(logged)
    assert code == 1
    ((path, line, reason),) = reasons(report)
    assert (path, line) == (REL, 5)
    assert reason.startswith("torn line at end of file")
    result = cli_run(["--root", str(logged), "check"])
    assert result.code == 1
    lines = result.out.splitlines()
    assert lines[0].startswith(f"{REL}:5: torn line at end of file")
    assert lines[-1] == (
        "checked 4 records in 1 shards, 0 learnings, 0 expertise files: 1 finding(s)"
    )


def test_invalid_json_line(logged: Path) -> None:
    lines = shard(logged).read_text().splitlines(keepends=True)
    lines.insert(2, "this is not json\n")
    shard(logged).write_text("".join(lines))
    code, report = check(logged)
    assert code == 1
    ((path, line, reason),) = reasons(report)
    assert (path, line) == (REL, 3)
    assert reason.startswith("invalid JSON")
    assert report["records"] == 4


def test_line_that_is_not_a_v1_record(logged: Path) -> None:
    with shard(logged).open("a") as handle:
        handle.write('{"v": 2, "kind": "action"}\n{"v": 1, "kind": "action", "id": "x"}\n')
    code, report = check(logged)
    assert code == 1
    found = reasons(report)
    assert [(p, n) for p, n, _ in found] == [(REL, 5), (REL, 6)]
    assert all(r.startswith("not a v1 record") for _, _, r in found)
    assert "schema version 2" in found[0][2]


def test_duplicate_id(logged: Path) -> None:
    lines = shard(logged).read_text().splitlines(keepends=True)
    with shard(logged).open("a") as handle:
        handle.write(lines[2])  # the same line appended twice, as a union merge does
    duplicated = json.loads(lines[2])["id"]
    code, report = check(logged)
    assert code == 0 and report["repeated"] == 1  # an exact repeat is not damage
    other = json.loads(lines[2]) | {"type": "deploy"}  # a different record with that id is
    with shard(logged).open("a") as handle:
        handle.write(json.dumps(other, sort_keys=True, separators=(",", ":")) + "\n")
    code, report = check(logged)
    assert code == 1
    assert reasons(report) == [(REL, 6, f"duplicate id {duplicated} (first at {REL}:3)")]
    # readers de-duplicate: the action is listed once
    assert [a["id"] for a in Lorebook.open(logged, env={}).actions()].count(duplicated) == 1


def _hand_written(ts: datetime, session: str = "s-1", **context: Any) -> str:
    record = {
        "v": 1,
        "kind": "action",
        "id": new_ulid(int(ts.timestamp() * 1000)),
        "ts": ts.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
        "session": session,
        "agent": "PS",
        "project": "consilio",
        "type": "tool_call",
        "category": "execution",
        "outcome": "success",
        "context": context,
        "error": None,
        "duration_s": None,
        "parent": None,
        "epic": None,
        "issue": None,
        "meta": {},
    }
    return json.dumps(record, separators=(",", ":"), sort_keys=True) + "\n"


def test_secret_written_by_hand(logged: Path) -> None:
    with shard(logged).open("a") as handle:
        handle.write(
            _hand_written(
                T0 + timedelta(minutes=4), command=f"git push https://{GITHUB_TOKEN}@github.com/o/r"
            )
        )
    code, report = check(logged)
    assert code == 1
    ((path, line, reason),) = reasons(report)
    assert (path, line) == (REL, 5)
    assert reason.startswith("possible secret")
    assert "context" in reason and "command" in reason
    assert GITHUB_TOKEN not in json.dumps(report)  # findings never repeat the secret


def test_record_in_the_wrong_day_directory(logged: Path) -> None:
    wrong = logged / "actionlog" / "2026" / "03" / "05" / "s-1.jsonl"
    wrong.parent.mkdir(parents=True)
    shard(logged).rename(wrong)
    code, report = check(logged)
    assert code == 1
    found = reasons(report)
    assert len(found) == 4
    rel = "actionlog/2026/03/05/s-1.jsonl"
    assert [(p, n) for p, n, _ in found] == [(rel, 1), (rel, 2), (rel, 3), (rel, 4)]
    assert all("is not in the shard's day 2026-03-05" in r for _, _, r in found)


def test_record_in_another_sessions_shard(logged: Path) -> None:
    with shard(logged).open("a") as handle:
        handle.write(_hand_written(T0 + timedelta(minutes=5), session="s-2"))
    code, report = check(logged)
    assert code == 1
    ((path, line, reason),) = reasons(report)
    assert (path, line) == (REL, 5)
    assert "'s-2' does not match the shard name 's-1'" in reason


def test_several_findings_are_all_reported(logged: Path) -> None:
    lines = shard(logged).read_text().splitlines(keepends=True)
    with shard(logged).open("a") as handle:
        handle.write(lines[1].replace('"outcome":"success"', '"outcome":"failure"'))
        handle.write(_hand_written(T0 + timedelta(minutes=6), token=GITHUB_TOKEN))
        handle.write("{broken")
    result = lore("check", env=clean_env(logged))
    assert result.code == 1
    findings = result.out.splitlines()[:-1]
    assert [f.split(": ")[0] for f in findings] == [f"{REL}:5", f"{REL}:6", f"{REL}:7"]
    assert result.out.splitlines()[-1] == (
        "checked 6 records in 1 shards, 0 learnings, 0 expertise files: 3 finding(s)"
    )
