"""The report's tally against a plain count of the records in the shards, and what a cold
`lore report` / `lore actions` imports.

The SQL aggregation is also held equal to the Python aggregation (tests/test_report_sql.py);
here both are held to a reference written as plainly as possible from the raw lines, over a
varied store with session events that carry an overhead.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from conftest import LORE, clean_env, stored
from lorebook import Lorebook
from lorebook.model import INTERNAL_TYPES
from test_report_sql import NOW, generate

OUTCOME_KEYS = ("success", "failure", "blocked", "in_progress")


@pytest.fixture(scope="module")
def varied(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A generated store (tests/test_report_sql.py) whose sessions also end with the hook's
    overhead on the end event, with its catalog and a copy with the catalog disabled."""
    import shutil

    root = tmp_path_factory.mktemp("varied") / "store"
    generate(root, 3)
    book = Lorebook.open(root, env={})
    rng = random.Random(3)
    for record in stored(root):
        if record["kind"] == "session" and record["event"] == "start" and rng.random() < 0.6:
            at = min(NOW, NOW - timedelta(days=20) + timedelta(hours=rng.uniform(0, 20 * 24)))
            book.end_session(record["session"], reason=rng.choice(["normal", "stop"]),
                             meta={"overhead_ms": round(rng.uniform(50, 400), 2)},
                             now=max(at, _when(record["ts"])))  # fmt: skip
    scan = root.parent / "scan"
    shutil.copytree(root, scan)
    (scan / ".lore" / "config.yaml").write_text("catalog:\n  enabled: false\n")
    return root, scan


def _when(ts: str) -> Any:
    from datetime import datetime

    return datetime.fromisoformat(ts.replace("Z", "+00:00")) + timedelta(seconds=1)


def _cost(record: dict[str, Any]) -> float | None:
    meta = record.get("meta") or {}
    for key in ("overhead_ms", "hook_ms"):
        value = meta.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
    return None


def _rank(ordered: list[float], share: float) -> float:
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def reference(root: Path, since: str, until: str, project: str | None) -> dict[str, Any]:
    """The counted sections of a report, straight from the lines in the shards. A tracked
    action counts once: an `in_progress` start is left out when an outcome of its type names it
    as `parent`, written at or after it and before `until`; an outcome without a duration
    takes the time since its start."""
    every_line = stored(root)
    by_id = {r["id"]: r for r in every_line}
    closed = {r["parent"] for r in every_line if r.get("parent") and r["ts"] < until
              and r["outcome"] != "in_progress" and by_id[r["parent"]]["type"] == r["type"]
              and by_id[r["parent"]]["outcome"] == "in_progress"
              and by_id[r["parent"]]["ts"] <= r["ts"]}  # fmt: skip
    records = sorted((r for r in every_line if since <= r["ts"] < until
                      and (project is None or r.get("project") == project)),
                     key=lambda r: (r["ts"], r["id"]))  # fmt: skip
    actions = [r for r in records if r["kind"] == "action" and r["type"] not in INTERNAL_TYPES
               and r["id"] not in closed]  # fmt: skip
    outcomes = Counter(r["outcome"] for r in actions)
    done = outcomes["success"] + outcomes["failure"] + outcomes["blocked"]
    types = Counter(r["type"] for r in actions)
    projects = Counter(r.get("project") or "-" for r in actions)
    durations: dict[str, list[float]] = {}
    for r in actions:
        if isinstance(r.get("duration_s"), int | float):
            durations.setdefault(r["type"], []).append(float(r["duration_s"]))
        elif r.get("parent") and r["outcome"] != "in_progress" and r["parent"] in closed:
            took = _when(r["ts"]) - _when(by_id[r["parent"]]["ts"])
            durations.setdefault(r["type"], []).append(took.total_seconds())
    costs: dict[str, list[float]] = {}
    for r in records:
        cost = _cost(r)
        if cost is not None and (r["kind"] != "action" or r["type"] not in INTERNAL_TYPES):
            label = r["type"] if r["kind"] == "action" else f"session {r['event']}"
            costs.setdefault(label, []).append(cost)
    every = [c for values in costs.values() for c in values]
    return {
        "total_actions": len(actions),
        "success_rate": round(100 * outcomes["success"] / done, 1) if done else None,
        "outcomes": {k: outcomes[k] for k in OUTCOME_KEYS},
        "sessions": len({r["session"] for r in actions}),
        "agents": sorted({r["agent"] for r in actions if r.get("agent")}),
        "by_type": sorted(types.items(), key=lambda kv: (-kv[1], kv[0])),
        "by_project": sorted(projects.items(), key=lambda kv: (-kv[1], kv[0])),
        "by_hour": [sum(1 for r in actions if int(r["ts"][11:13]) == h) for h in range(24)],
        "days": {d: n for d, n in Counter(r["ts"][:10] for r in actions).items()},
        "average_duration": [
            (k, len(v), round(sum(v) / len(v), 3), round(max(v), 3))
            for k, v in sorted(durations.items())
        ],
        "overhead": None
        if not every
        else (
            len(every),
            round(_exact(every) / len(every), 3),
            [
                (
                    k,
                    len(v),
                    round(_rank(sorted(v), 0.5), 3),
                    round(_rank(sorted(v), 0.95), 3),
                    round(max(v), 3),
                    round(_exact(v), 3),
                )
                for k, v in sorted(costs.items())
            ],
        ),
    }


def _exact(values: list[float]) -> float:
    """The total as a report sums it: each value in whole millionths, added as integers (a
    float sum depends on its order, and rounds differently in the last digit)."""
    return sum(round(v * 1_000_000) for v in values) / 1_000_000


def counted(report: dict[str, Any]) -> dict[str, Any]:
    """The same sections, taken from a report."""
    summary = report["summary"]
    overhead = report["overhead"]
    return {
        "total_actions": summary["total_actions"],
        "success_rate": summary["success_rate"],
        "outcomes": summary["outcomes"],
        "sessions": summary["sessions"],
        "agents": summary["agents"],
        "by_type": [(r["type"], r["count"]) for r in report["by_type"]],
        "by_project": [(r["project"], r["count"]) for r in report["by_project"]],
        "by_hour": report["by_hour"],
        "days": {r["day"]: r["count"] for r in report["by_day"] if r["count"]},
        "average_duration": [
            (r["type"], r["count"], r["avg_seconds"], r["max_seconds"])
            for r in report["average_duration"]
        ],
        "overhead": None
        if overhead is None
        else (
            overhead["count"],
            overhead["avg_ms"],
            [
                (r["record"], r["count"], r["p50_ms"], r["p95_ms"], r["max_ms"], r["total_ms"])
                for r in overhead["by_record"]
            ],
        ),
    }


@pytest.mark.parametrize("days", [1, 7, 30])
@pytest.mark.parametrize("project", [None, "odin"])
def test_the_tally_is_a_plain_count_of_the_shards(
    varied: tuple[Path, Path], days: int, project: str | None
) -> None:
    catalog_root, scan_root = varied
    for root in (catalog_root, scan_root):
        report = Lorebook.open(root, env={}).report(days=days, project=project)
        window = report["window"]
        expected = reference(root, window["since"], window["until"], project)
        assert counted(report) == expected, (root.name, days, project)
        assert report["summary"]["total_actions"] or days == 1
    sessions_with_cost = (
        [row for row in report["overhead"]["by_record"] if row["record"].startswith("session")]
        if report["overhead"]
        else []
    )
    assert sessions_with_cost or days == 1 or project  # the store has session overheads


@pytest.mark.parametrize(
    "args",
    [
        ["report", "--days", "7", "--json"],
        ["actions", "--type", "deploy", "--since", "30d", "--json"],
    ],
)
def test_a_cold_report_or_query_imports_no_dataclasses(
    varied: tuple[Path, Path], args: list[str]
) -> None:
    """`dataclasses` costs a cold process `inspect`, `ast`, `dis` and `tokenize`: the query
    paths do without (ActionFilter is a plain class)."""
    import subprocess

    root = varied[0]
    code = (
        "import json, sys\nimport lorebook.cli\ncode = lorebook.cli.main(sys.argv[1:])\n"
        "heavy = [m for m in ('dataclasses', 'inspect', 'ast', 'tokenize')"
        " if m in sys.modules]\n"
        "print(json.dumps([code, heavy]), file=sys.stderr)"
    )
    done = subprocess.run([LORE[0], "-c", code, *args], cwd=root, env=clean_env(root),
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    json.loads(done.stdout)  # the answer itself
    assert json.loads(done.stderr.strip().splitlines()[-1]) == [0, []]
