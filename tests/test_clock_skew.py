"""A wrong clock on one machine: records dated in the future do not take over the briefs,
`lore check` reports them and ids no clock could mint, the writer refuses an impossible clock,
and a session's end event ends it whatever order the clocks put its events in."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from conftest import assert_one_error_line, clean_env, cli_run, lore
from lorebook import Lorebook

SID = "5b7a1f0e-2c1d-4e8a-9f00-1234567890ab"


def _skewed_store(store: Path) -> tuple[Path, datetime]:
    """A session a teammate logged with a clock a year ahead, and a recent one of ours."""
    (store / ".lore" / "config.yaml").write_text("hooks:\n  budget_seconds: 60\n")
    book = Lorebook.open(store, env={})
    now = datetime.now(UTC)
    ahead = now + timedelta(days=365)
    future = book.start_session(session_id="from-the-future", agent="PS", now=ahead)
    future.log("plan", context={"approach": "tomorrow's plan"}, now=ahead + timedelta(seconds=1))
    recent = book.start_session(
        session_id="recent-work", agent="PS", now=now - timedelta(minutes=9)
    )
    recent.log("commit", epic="epic-7", now=now - timedelta(minutes=8))
    return store, ahead


@pytest.mark.parametrize("with_catalog", [False, True])
def test_a_future_session_does_not_become_the_resumed_one(store: Path, with_catalog: bool) -> None:
    _skewed_store(store)
    if with_catalog:  # the catalog's sessions table answers instead of the shards' tails
        assert lore("catalog", "--rebuild", env=clean_env(store)).code == 0
    done = lore("resume", "--json", env=clean_env(store))
    assert done.code == 0, done.err
    assert json.loads(done.out)["session"]["id"] == "recent-work"


def test_the_session_start_brief_resumes_the_present_session(store: Path) -> None:
    _skewed_store(store)
    payload = json.dumps(
        {
            "session_id": SID,
            "transcript_path": str(store / "t.jsonl"),
            "cwd": str(store),
            "permission_mode": "default",
            "hook_event_name": "SessionStart",
            "source": "startup",
        }
    )
    done = lore(
        "hook", "session-start", cwd=store, stdin=payload, env=clean_env(LORE_HOOK_DETACH="0")
    )
    assert done.code == 0, done.err
    text = json.loads(done.out)["hookSpecificOutput"]["additionalContext"]
    assert "Resume: session recent-work" in text and "from-the-future" not in text


def test_check_reports_future_records_with_file_and_line(store: Path) -> None:
    _, ahead = _skewed_store(store)
    rel = f"actionlog/{ahead:%Y/%m/%d}/from-the-future.jsonl"
    done = cli_run(["--root", str(store), "check", "--json"])
    assert done.code == 1
    found = [(f["path"], f["line"], f["reason"]) for f in json.loads(done.out)["findings"]]
    assert [(p, n) for p, n, r in found if "ahead of this machine's clock" in r] == [
        (rel, 1),
        (rel, 2),
    ], found
    plain = lore("check", env=clean_env(store))
    assert plain.code == 1 and f"{rel}:1:" in plain.out + plain.err


def _append(store: Path, record: dict[str, object]) -> str:
    ts = str(record["ts"])
    rel = f"actionlog/{ts[:4]}/{ts[5:7]}/{ts[8:10]}/{record['session']}.jsonl"
    path = store / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(record, sort_keys=True, separators=(",", ":")) + "\n")
    return rel


@pytest.mark.parametrize(
    "rid",
    [
        "ZZZZZZZZZZZZZZZZZZZZZZZZZZ",  # the time part overflows 48 bits
        "ZZZZZZZZZX0000000000000000",  # what a clock before 1970 encoded
    ],
)
def test_check_reports_ids_no_clock_could_mint(store: Path, rid: str) -> None:
    rel = _append(
        store,
        {
            "v": 1,
            "kind": "session",
            "event": "start",
            "id": rid,
            "ts": "2026-03-04T12:00:00.000Z",
            "session": "s-bad",
            "agent": None,
            "project": None,
            "meta": {},
        },
    )
    done = cli_run(["--root", str(store), "check", "--json"])
    assert done.code == 1
    found = [(f["path"], f["line"], f["reason"]) for f in json.loads(done.out)["findings"]]
    assert any(p == rel and n == 1 and f"id {rid}" in r and "invalid" in r for p, n, r in found), (
        found
    )


def test_the_writer_refuses_a_clock_before_1970(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import lorebook.log.append as append
    import lorebook.log.writer as writer

    for module in (append, writer):  # the clock the append path reads
        monkeypatch.setattr(module, "utcnow", lambda: datetime(1969, 12, 31, 23, 0, tzinfo=UTC))
    done = cli_run(["--root", str(store), "log", "plan", "--session", "s-1"])
    assert_one_error_line(done, "clock", "1969-12-31T23:00:00.000Z")
    assert not list((store / "actionlog").rglob("*.jsonl"))


def test_ulids_refuse_an_impossible_clock() -> None:
    from lorebook.errors import LoreError
    from lorebook.ids import new_ulid, ulid_ms

    with pytest.raises(LoreError, match="before 1970"):
        new_ulid(-1)
    with pytest.raises(LoreError, match="clock"):
        new_ulid(253402300800000)  # year 10000
    assert ulid_ms(new_ulid(0)) == 0


def test_an_end_dated_before_the_start_still_ends_the_session(store: Path) -> None:
    """The clock went back between the start (and the actions) and the end."""
    t0 = datetime(2026, 3, 4, 12, 0, tzinfo=UTC)
    book = Lorebook.open(store, env={})
    s = book.start_session(session_id="s-back", agent="PS", now=t0 + timedelta(minutes=30))
    s.log("plan", now=t0 + timedelta(minutes=31))
    book.end_session("s-back", agent="PS", now=t0)  # 30 minutes "earlier"
    scan = book.sessions(now=t0 + timedelta(hours=1))
    assert [(i.id, i.status) for i in scan] == [("s-back", "ended")]
    assert lore("catalog", "--rebuild", env=clean_env(store)).code == 0
    listed = lore("sessions", "--json", env=clean_env(store))
    assert [(i["id"], i["status"]) for i in json.loads(listed.out)] == [("s-back", "ended")]
    resumed = book.resume(session="s-back", now=t0 + timedelta(hours=1))
    assert resumed["session"]["status"] == "ended"


@pytest.mark.parametrize("with_catalog", [False, True])
def test_sessions_list_the_present_before_a_future_dated_one(
    store: Path, with_catalog: bool
) -> None:
    """`lore sessions` (and what takes its first row for the latest: the MCP resume tool, the
    TUI's first page) lists the future-dated session last."""
    _skewed_store(store)
    if with_catalog:
        assert lore("catalog", "--rebuild", env=clean_env(store)).code == 0
    listed = lore("sessions", "--json", env=clean_env(store))
    assert listed.code == 0, listed.err
    assert [s["id"] for s in json.loads(listed.out)] == ["recent-work", "from-the-future"]
    first = Lorebook.open(store, env={}).sessions(limit=1)  # the TUI's first page
    assert [s.id for s in first] == ["recent-work"]
