"""What memory costs the agent: the hooks record their own time in `meta.overhead_ms`, and
`lore report` shows it (text and --json), from the catalog and from a scan of the shards alike.

Real `lore hook <event>` subprocesses fed Claude Code's payloads, then the real `lore report`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from conftest import clean_env, lore, stored, stored_actions
from lorebook import Lorebook
from test_hooks import bash_payload, generous, hook, payload, publish


def report(store: Path, *args: str) -> Any:
    done = lore("report", *args, cwd=store, env=clean_env(store))
    assert done.code == 0, done.err
    return done.json() if "--json" in args else done.out


def expected(costs: list[float]) -> dict[str, Any]:
    ordered = sorted(costs)
    return {
        "count": len(costs),
        "avg_ms": round(sum(costs) / len(costs), 3),
        "max_ms": round(ordered[-1], 3),
        "p95_ms": round(ordered[min(len(costs) - 1, round(0.95 * (len(costs) - 1)))], 3),
    }


@pytest.mark.parametrize("catalog", [True, False], ids=["catalog", "scan"])
def test_the_report_shows_what_the_hooks_recorded(store: Path, catalog: bool) -> None:
    generous(store, "" if catalog else "catalog:\n  enabled: false\n")
    publish(
        Lorebook.open(store, env={}),
        "Postgres migrations lock the users table",
        "Run migrations with lock_timeout set.",
        ["postgres", "migration"],
    )
    for event, stdin in (
        ("session-start", payload("SessionStart", store, source="startup")),
        ("post-tool-use", bash_payload(store, "ok\n")),
        ("post-tool-use", bash_payload(store, "done\n")),
        (
            "post-tool-use-failure",
            payload(
                "PostToolUseFailure",
                store,
                tool_name="Bash",
                tool_input={"command": "false"},
                error="exit 1",
            ),
        ),
        ("subagent-start", payload("SubagentStart", store, agent_id="a1", agent_type="fix")),
        ("pre-compact", payload("PreCompact", store, trigger="auto")),
        (
            "user-prompt-submit",
            payload(
                "UserPromptSubmit", store, prompt="the postgres migration locks the users table"
            ),
        ),
    ):
        done = hook(event, stdin, store)
        assert (done.code, done.err) == (0, ""), (event, done.err)

    recorded: dict[str, list[float]] = {}
    for action in stored_actions(store):
        meta = action.get("meta") or {}
        assert isinstance(meta.get("overhead_ms"), int | float), action
        assert str(meta.get("source", "")).startswith("claude-code:")
        recorded.setdefault(action["type"], []).append(meta["overhead_ms"])
    assert sorted(recorded) == ["checkpoint", "prompt", "search", "spawn", "tool_call"]
    assert len(recorded["tool_call"]) == 3

    data = report(store, "--json")
    overhead = data["overhead"]
    assert overhead["field"].startswith("meta.overhead_ms")
    shown = {row["type"]: row for row in overhead["by_type"]}
    assert sorted(shown) == ["checkpoint", "spawn", "tool_call"]  # `prompt`, `search`: not work
    for kind, row in shown.items():
        assert {k: row[k] for k in ("count", "avg_ms", "max_ms", "p95_ms")} == expected(
            recorded[kind]
        ), kind
    (start,) = [r for r in stored(store) if r["kind"] == "session"]
    everything = [cost for kind in shown for cost in recorded[kind]]
    everything.append(start["meta"]["overhead_ms"])  # the session-start hook's own cost
    assert overhead["count"] == len(everything)
    assert overhead["avg_ms"] == round(sum(everything) / len(everything), 3)

    text = report(store)
    assert "Logging/hook overhead (meta.overhead_ms" in text
    assert f"{overhead['count']} records, avg {overhead['avg_ms']:.2f} ms" in text
    tool = shown["tool_call"]
    row = rf"avg {tool['avg_ms']:.2f} ms\s+p95 {tool['p95_ms']:.2f} ms"  # columns align
    assert re.search(row, text), text

    internal = report(store, "--json", "--include-internal")["overhead"]
    (search,) = [row for row in internal["by_type"] if row["type"] == "search"]
    assert search["count"] == 1 and search["avg_ms"] == round(recorded["search"][0], 3)


def test_no_hook_no_overhead_section(store: Path) -> None:
    assert lore("log", "plan", cwd=store, env=clean_env(store)).code == 0
    assert report(store, "--json")["overhead"] is None
    assert "overhead" not in report(store)


def table(costs: dict[str, list[float]]) -> list[dict[str, Any]]:
    """The per-record overhead table, computed plainly (nearest-rank percentiles)."""
    rows = []
    for record, values in sorted(costs.items()):
        ordered = sorted(values)

        def rank(share: float, ordered: list[float] = ordered) -> float:
            return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]

        rows.append(
            {
                "record": record,
                "count": len(values),
                "p50_ms": round(rank(0.5), 3),
                "p95_ms": round(rank(0.95), 3),
                "max_ms": round(ordered[-1], 3),
                "total_ms": round(sum(values), 3),
            }
        )
    return rows


@pytest.mark.parametrize("catalog", [True, False], ids=["catalog", "scan"])
def test_session_hooks_count_in_the_overhead_table_and_kpi(store: Path, catalog: bool) -> None:
    """session-start, stop and session-end record their cost on session events: the report's
    per-record table and the logging-overhead figure count them with the actions'."""
    generous(store, "" if catalog else "catalog:\n  enabled: false\n")
    for event, stdin in (
        ("session-start", payload("SessionStart", store, source="startup")),
        ("post-tool-use", bash_payload(store, "ok\n")),
        ("post-tool-use", bash_payload(store, "done\n")),
        ("stop", payload("Stop", store, stop_hook_active=False)),
        ("session-end", payload("SessionEnd", store, reason="prompt_input_exit")),
    ):
        done = hook(event, stdin, store)
        assert (done.code, done.err) == (0, ""), (event, done.err)

    costs: dict[str, list[float]] = {}
    for record in stored(store):
        label = record["type"] if record["kind"] == "action" else f"session {record['event']}"
        costs.setdefault(label, []).append(record["meta"]["overhead_ms"])
    assert {k: len(v) for k, v in costs.items()} == {
        "session start": 1, "tool_call": 2, "session end": 2}  # fmt: skip

    overhead = report(store, "--json")["overhead"]
    assert overhead["by_record"] == table(costs)
    everything = [ms for values in costs.values() for ms in values]
    assert overhead["count"] == 5
    assert overhead["avg_ms"] == round(sum(everything) / 5, 3)
    assert [row["type"] for row in overhead["by_type"]] == ["tool_call"]  # actions only

    text = report(store)
    for row in overhead["by_record"]:
        assert re.search(
            rf"{row['record']}\s+n={row['count']}\s+p50 {row['p50_ms']:.2f} ms"
            rf"\s+p95 {row['p95_ms']:.2f} ms\s+total {row['total_ms']:.2f} ms",
            text,
        ), text

    kpis = {k["key"]: k for k in report(store, "kpis", "--json")["kpis"]}
    figure = kpis["logging_overhead"]
    assert (figure["numerator"], figure["denominator"]) == (round(sum(everything), 3), 5)
    assert figure["value"] == round(round(sum(everything), 3) / 5, 2)
    assert "ms / 5 records" in report(store, "kpis")


def test_only_session_hooks_still_show_the_overhead(store: Path) -> None:
    """A session with no action yet: the session hooks' cost is the whole section."""
    generous(store)
    for event, stdin in (
        ("session-start", payload("SessionStart", store, source="startup")),
        ("session-end", payload("SessionEnd", store, reason="logout")),
    ):
        assert hook(event, stdin, store).code == 0
    overhead = report(store, "--json")["overhead"]
    assert overhead["by_type"] == []
    assert [(r["record"], r["count"]) for r in overhead["by_record"]] == [
        ("session end", 1), ("session start", 1)]  # fmt: skip
    assert "session start" in report(store)
