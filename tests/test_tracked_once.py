"""A tracked action counts once: `with s.track(...)` (and the subagent hooks) write an
`in_progress` start, then its outcome with `parent`; reports, KPIs, the export and the MCP
activity report count the outcome, and the start only while it has none."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from conftest import LORE, clean_env, lore, stored_actions
from lorebook import Lorebook

SRC = Path(__file__).resolve().parents[1] / "src"
NOW = datetime.now(UTC).replace(microsecond=0)
SNIPPET = """
from lorebook import Lorebook


def deploy() -> None:
    print("deploying the api service")


book = Lorebook.open()
with book.session(agent="PS", project="consilio") as s:
    s.log("plan", epic="epic-012", context={"approach": "JWT"})
    with s.track("deploy", context={"service": "api"}):
        deploy()
"""


def iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def report(root: Path, *args: str) -> dict[str, Any]:
    done = lore("report", "--json", *args, env=clean_env(root))
    assert done.code == 0, done.err
    data: dict[str, Any] = json.loads(done.out)
    return data


def without_catalog(root: Path) -> None:
    (root / ".lore" / "config.yaml").write_text("catalog:\n  enabled: false\n")


@pytest.mark.parametrize("catalog", [True, False])
def test_the_readme_snippet_reports_one_deployment(store: Path, catalog: bool) -> None:
    if not catalog:
        without_catalog(store)
    env = clean_env(store, PYTHONPATH=str(SRC))
    done = subprocess.run([sys.executable, "-c", SNIPPET], cwd=store, env=env,  # as a user's script
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = report(store, "--days", "1")
    assert data["deployments"]["total"] == 1
    assert data["deployments"]["by_outcome"] == {
        "success": 1, "failure": 0, "blocked": 0, "in_progress": 0,
    }  # fmt: skip
    assert [d["outcome"] for d in data["deployments"]["recent"]] == ["success"]
    assert data["summary"]["total_actions"] == 2  # the plan and the deployment
    assert data["summary"]["outcomes"]["in_progress"] == 0
    assert data["summary"]["success_rate"] == 100.0
    text = lore("report", "--days", "1", env=clean_env(store))
    assert text.code == 0, text.err
    assert "Deployments: 1 (1 success)" in text.out
    # the day the snippet logged the deployment on (its own clock's, not this module's)
    (deployment,) = [a for a in stored_actions(store) if a["type"] == "deploy" and a["parent"]]
    day = deployment["ts"][:10]
    daily = lore("report", "daily", "--date", day, env=clean_env(store))
    assert daily.code == 0, daily.err
    written = (store / "docs" / "reports" / "daily" / f"{day}.md").read_text()
    assert "## Deployments (1)" in written
    assert "0 in progress" in written


@pytest.mark.parametrize("catalog", [True, False])
def test_a_start_without_an_outcome_is_one_in_progress(store: Path, catalog: bool) -> None:
    if not catalog:
        without_catalog(store)
    env = clean_env(store)
    assert lore("log", "deploy", "--outcome", "in_progress", env=env).code == 0
    opened = lore("log", "deploy", "--outcome", "in_progress", "--json", env=env)
    assert opened.code == 0, opened.err
    closing = ["--outcome", "success", "--parent", json.loads(opened.out)["id"]]
    assert lore("log", "deploy", *closing, env=env).code == 0
    data = report(store, "--days", "1")
    assert data["deployments"]["total"] == 2
    assert data["deployments"]["by_outcome"]["in_progress"] == 1  # the first: no outcome yet
    assert data["deployments"]["by_outcome"]["success"] == 1
    assert data["summary"]["outcomes"]["in_progress"] == 1


@pytest.mark.parametrize("catalog", [True, False])
def test_windows_count_a_start_and_its_later_outcome_once(store: Path, catalog: bool) -> None:
    """Start 3 days ago, outcome 1 day ago (no duration, as the hooks write it): a window that
    ends between them shows it in progress; one that starts between them counts the outcome
    once; one holding both counts it once; its duration is the time between the two."""
    if not catalog:
        without_catalog(store)
    book = Lorebook.open(store, env={})
    begun, ended = NOW - timedelta(days=3), NOW - timedelta(days=1)
    opened = book.log("deploy", session="s-1", outcome="in_progress", now=begun,
                      context={"service": "api"})  # fmt: skip
    book.log("deploy", session="s-1", outcome="success", parent=opened["id"], now=ended,
             context={"service": "api"})  # fmt: skip
    middle = iso(NOW - timedelta(days=2))
    before = report(store, "--since", iso(NOW - timedelta(days=4)), "--until", middle)
    assert before["deployments"]["by_outcome"]["in_progress"] == 1
    assert before["deployments"]["total"] == before["summary"]["total_actions"] == 1
    after = report(store, "--since", middle)
    assert after["deployments"]["by_outcome"] == {
        "success": 1, "failure": 0, "blocked": 0, "in_progress": 0,
    }  # fmt: skip
    assert after["summary"]["total_actions"] == 1
    both = report(store, "--days", "7", "--group-by", "type")
    assert both["summary"]["total_actions"] == both["deployments"]["total"] == 1
    assert both["summary"]["outcomes"]["in_progress"] == 0
    assert both["average_duration"] == [
        {"type": "deploy", "count": 1, "avg_seconds": 172800.0, "max_seconds": 172800.0}
    ]
    assert after["average_duration"] == both["average_duration"]  # its start is read back


@pytest.mark.parametrize("catalog", [True, False])
def test_a_failed_tracked_action_counts_once_as_a_failure(store: Path, catalog: bool) -> None:
    if not catalog:
        without_catalog(store)
    book = Lorebook.open(store, env={})
    with (
        pytest.raises(RuntimeError),
        book.session(agent="PS", project="consilio") as s,
        s.track("deploy", context={"service": "api"}),
    ):
        raise RuntimeError("health check failed")
    data = report(store, "--days", "1")
    assert data["deployments"]["by_outcome"] == {
        "success": 0, "failure": 1, "blocked": 0, "in_progress": 0,
    }  # fmt: skip
    assert data["summary"]["total_actions"] == 1
    assert data["summary"]["success_rate"] == 0.0
    assert [f["error"] for f in data["recent_failures"]] == ["RuntimeError: health check failed"]


def hook_payload(event: str, cwd: Path, **fields: Any) -> str:
    base = {"session_id": "5b7a1f0e-2c1d-4e8a-9f00-1234567890ab", "cwd": str(cwd),
            "transcript_path": str(cwd / "t.jsonl"), "hook_event_name": event}  # fmt: skip
    return json.dumps({**base, **fields})


def test_a_subagent_from_the_hooks_is_one_spawn(store: Path) -> None:
    env = clean_env(LORE_HOOK_DETACH="0")
    agent = {"agent_id": "a-77", "agent_type": "Explore"}
    start = hook_payload("SubagentStart", store, **agent)
    assert lore("hook", "subagent-start", cwd=store, env=env, stdin=start).code == 0
    stop = hook_payload("SubagentStop", store, stop_hook_active=False, **agent)
    assert lore("hook", "subagent-stop", cwd=store, env=env, stdin=stop).code == 0
    spawns = [a for a in stored_actions(store) if a["type"] == "spawn"]
    assert [a["outcome"] for a in spawns] == ["in_progress", "success"]
    data = report(store, "--days", "1", "--group-by", "type")
    spawn = next(b for b in data["breakdown"] if b["key"] == "spawn")
    assert (spawn["total"], spawn["success"], spawn["in_progress"]) == (1, 1, 0)
    assert [d["type"] for d in data["average_duration"]] == ["spawn"]  # from the start's time
    assert data["average_duration"][0]["count"] == 1


def test_kpis_count_a_tracked_learning_application_once(store: Path) -> None:
    book = Lorebook.open(store, env={})
    with (
        book.session(agent="PS", project="consilio") as s,
        s.track("apply_learning", context={"learning_id": "rls"}),
    ):
        pass
    done = lore("report", "kpis", "--days", "1", "--json", env=clean_env(store))
    assert done.code == 0, done.err
    figures = {k["key"]: k for k in json.loads(done.out)["kpis"]}
    assert figures["learning_reuse"]["numerator"] == 1


def test_learning_stats_count_a_tracked_application_once(store: Path) -> None:
    """`lore stats`: a learning applied under `track` is applied once, successfully; another
    application still open counts as one, without an outcome."""
    book = Lorebook.open(store, env={})
    lesson = book.learnings.new(title="Rotate refresh tokens", publish=True)
    with (
        book.session(agent="PS", project="consilio") as s,
        s.track("apply_learning", context={"learning": lesson.id}),
    ):
        pass
    book.log(
        "apply_learning", session="s-2", outcome="in_progress", context={"learning": lesson.id}
    )  # still open: one application, no outcome yet
    done = lore("stats", lesson.id, "--json", env=clean_env(store))
    assert done.code == 0, done.err
    figures = json.loads(done.out)
    assert (figures["applications"], figures["success_rate"]) == (2, 0.5)


@pytest.mark.parametrize("catalog", [True, False])
def test_the_export_holds_each_tracked_action_once(store: Path, catalog: bool) -> None:
    """The outcome is exported (with the time since its start when it has no duration); its
    start is not; a start with no outcome yet is exported as in progress."""
    if not catalog:
        without_catalog(store)
    book = Lorebook.open(store, env={})
    opened = book.log("spawn", session="s-1", outcome="in_progress", now=NOW - timedelta(hours=2),
                      context={"agent_id": "a-1"})  # fmt: skip
    book.log("spawn", session="s-1", outcome="success", parent=opened["id"],
             now=NOW - timedelta(hours=1), context={"agent_id": "a-1"})  # fmt: skip
    with (
        book.session(agent="PS", project="consilio") as s,
        s.track("deploy", context={"service": "api"}),
    ):
        pass
    still = book.log("deploy", session="s-2", outcome="in_progress", context={"service": "web"})
    out = store / "docs" / "training-data" / "train.jsonl"  # (inside the repo: the export folder)
    done = lore("export", "--since", "1d", "-o", str(out), "--json", env=clean_env(store))
    assert done.code == 0, done.err
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    taken = [(r["output"]["action_taken"], r["output"]["outcome"]) for r in rows]
    assert taken == [("spawn", "success"), ("deploy", "success"), ("deploy", "in_progress")]
    assert rows[0]["output"]["duration_seconds"] == 3600.0
    assert isinstance(rows[1]["output"]["duration_seconds"], float)
    assert rows[2]["metadata"]["action_id"] == still["id"]
    assert json.loads(done.out)["record_count"] == 3
    open_only = store / "docs" / "training-data" / "open.jsonl"
    args = ["--since", "1d", "--outcome", "in_progress", "-o", str(open_only)]
    assert lore("export", *args, env=clean_env(store)).code == 0
    assert [json.loads(line)["metadata"]["action_id"]
            for line in open_only.read_text().splitlines()] == [still["id"]]  # fmt: skip


def test_the_mcp_activity_report_counts_a_tracked_action_once(store: Path) -> None:
    import anyio
    from mcp import Client, StdioServerParameters

    book = Lorebook.open(store, env={})
    with (
        book.session(agent="PS", project="proj") as s,
        s.track("deploy", context={"service": "api"}),
    ):
        pass
    env = {k: os.environ[k] for k in ("PATH", "HOME", "LORE_MODEL_CACHE") if k in os.environ}
    env.update(PYTHONPATH=str(SRC), LORE_ROOT=str(store), LORE_PROJECT="proj", LORE_AGENT="PS")
    params = StdioServerParameters(command=LORE[0], args=[*LORE[1:], "mcp"], env=env,
                                   cwd=str(store))  # fmt: skip
    got: dict[str, Any] = {}

    async def ask() -> None:
        async with Client(params) as client:
            result = await client.call_tool("get_activity_report", {"days": 1})
            assert not result.is_error, result.content
            got.update(result.structured_content)

    anyio.run(ask)
    assert got["deployments"]["total"] == 1
    assert got["deployments"]["by_outcome"]["success"] == 1
    assert got["deployments"]["by_outcome"]["in_progress"] == 0


@pytest.mark.parametrize("catalog", [True, False])
def test_a_session_counts_a_tracked_action_once(store: Path, catalog: bool) -> None:
    """`lore sessions` (and the TUI's sessions tab, which reads the same summaries): a session
    with a plan, a tracked deploy and a subagent spawn closed by hand has 3 actions, whether
    the catalog folds them in one sync or in several."""
    if not catalog:
        without_catalog(store)
    book = Lorebook.open(store, env={})
    with book.session(agent="PS", project="consilio", session_id="s-1") as s:
        s.log("plan")
        with s.track("deploy", context={"service": "api"}):
            assert lore("sessions", "--json", env=clean_env(store)).code == 0  # a sync between
        opened = s.log("spawn", outcome="in_progress")
        assert lore("sessions", "--json", env=clean_env(store)).code == 0
        s.log("spawn", outcome="success", parent=opened["id"])
    done = lore("sessions", "--json", env=clean_env(store))
    assert done.code == 0, done.err
    listed = json.loads(done.out)
    rows = listed["sessions"] if isinstance(listed, dict) else listed
    assert [(r["id"], r["action_count"]) for r in rows] == [("s-1", 3)]
    if catalog:
        rebuilt = lore("catalog", "--rebuild", env=clean_env(store))
        assert rebuilt.code == 0, rebuilt.err
        again = json.loads(lore("sessions", "--json", env=clean_env(store)).out)
        rows = again["sessions"] if isinstance(again, dict) else again
        assert [r["action_count"] for r in rows] == [3]


@pytest.mark.asyncio
async def test_the_tui_reports_and_sessions_tabs_count_a_tracked_action_once(store: Path) -> None:
    from textual.widgets import DataTable, Static

    from lorebook.tui.app import make_app

    book = Lorebook.open(store, env={})
    with (
        book.session(agent="PS", project="shop", session_id="s-1") as s,
        s.track("deploy", context={"service": "api"}),
    ):
        pass
    app = make_app(book, load_model=False)
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.press("1")
        table = app.query_one("#sessions-table", DataTable)
        for _ in range(100):
            if table.row_count:
                break
            await pilot.pause(0.05)
        assert table.get_row("s-1")[4] == "1"  # the action count
        await pilot.press("5")
        await pilot.pause()
        shown = str(app.query_one("#report-text", Static).render())
        assert "Deployments: 1 (1 success)" in shown


def test_the_pairing_of_two_records_in_hand_agrees_with_the_window_rule() -> None:
    """`track_pairs.outcomes` (the timeline's and the trace export's pairing) closes exactly
    the starts `Links` (the reports' reference) does, on every mix of type, order and time."""
    import itertools

    from lorebook.log.track_pairs import Links, outcomes

    times = ["2026-11-20T10:00:00.000Z", "2026-11-20T10:00:01.500Z"]
    for types, stamps, outcome in itertools.product(
        [("deploy", "deploy"), ("deploy", "test")],
        itertools.product(times, times),
        ["success", "failure", "in_progress"],
    ):
        start = {"id": "s", "type": types[0], "ts": stamps[0], "outcome": "in_progress"}
        end = {"id": "o", "type": types[1], "ts": stamps[1], "outcome": outcome, "parent": "s"}
        links = Links()
        for record in (start, end):
            links.see(record)
        assert set(outcomes([start, end])) == links.finish(), (types, stamps, outcome)
