"""A catalog report reads the window's records once: its counts, the overheads of every record
kind and the bookkeeping it leaves out come from one statement, and they are exactly what the
three statements it replaced computed (kept here as the reference), on a generated store with
lorebook's own actions (tracked, failed, carrying an overhead), failures, several projects and
agents, and session events with an overhead."""

from __future__ import annotations

import random
import sqlite3
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from lorebook import Lorebook
from lorebook.log.overhead import count_costs
from lorebook.log.report import build_report, resolve_window
from lorebook.log.report_sql import MICROS_SQL, Scope, Tally, overhead_costs, tally
from lorebook.log.track_pairs import DURATION
from lorebook.model import INTERNAL_TYPES
from test_report_sql import FILTERS, NOW, WINDOWS, generate

# the statement `tally` was before it took in the overheads and the bookkeeping left out (its
# durations summed in millionths, as `micros` sums them now)
_BEFORE = """WITH w AS (SELECT substr(ts, 1, 13) AS h, outcome AS o, type AS t,
  coalesce(nullif(project, ''), '-') AS p, coalesce(nullif(agent, ''), '-') AS a,
  session AS s, {duration} AS d FROM records WHERE {where})
SELECT 0, h, o, count(*), NULL, NULL FROM w GROUP BY 2, 3
UNION ALL SELECT 1, t, o, count(*), NULL, NULL FROM w GROUP BY 2, 3
UNION ALL SELECT 2, p, a, count(*), NULL, NULL FROM w GROUP BY 2, 3
UNION ALL SELECT 3, NULL, NULL, count(DISTINCT s), NULL, NULL FROM w
UNION ALL SELECT 4, t, NULL, count(d), total({micros}), max(d) FROM w WHERE d IS NOT NULL
  GROUP BY 2"""


def _figures(t: Tally) -> dict[str, Any]:
    """What a tally's figures are, as the old three statements gave them."""
    return {
        "outcomes": t.outcomes, "days": t.days, "day_failures": t.day_failures,
        "hours": t.hours, "types": t.by_type_outcome, "projects": t.projects,
        "agents": t.agents, "sessions": t.sessions,
        "durations": {k: (n, round(total * 1_000_000), top)
                      for k, (n, total, top) in t.durations.items()},
    }  # fmt: skip


def _before(conn: sqlite3.Connection, scope: Scope, every: Scope) -> dict[str, Any]:
    """The three statements of the report before: the grouped counts, the overheads of every
    kind (`overhead_costs`, unchanged, counted) and the count of the bookkeeping left out."""
    sql = _BEFORE.format(where=scope.where, duration=DURATION.replace("{r}", "records."),
                         micros=MICROS_SQL.format(x="d"))  # fmt: skip
    marks = ", ".join("?" * len(INTERNAL_TYPES))
    left = conn.execute(
        f"SELECT type, count(*) FROM records WHERE {every.where}"
        f" AND records.type IN ({marks}) GROUP BY type",
        [*every.args, *INTERNAL_TYPES],
    ).fetchall()
    t = Tally()
    types: dict[str, Counter[str]] = {}
    projects: Counter[str] = Counter()
    agents: set[str] = set()
    sessions, durations = 0, {}
    for part, key, other, n, total, top in conn.execute(sql, scope.args):
        if part == 0:
            t.outcomes[other] += n
            t.days[key[:10]] += n
            t.day_failures[key[:10]] += n if other == "failure" else 0
            t.hours[int(key[11:13])] += n
        elif part == 1:
            types.setdefault(key, Counter())[other] += n
        elif part == 2:
            projects[key] += n
            agents.add(other)
        elif part == 3:
            sessions = n
        else:
            durations[key] = (n, int(total), top)
    return {
        "figures": {"outcomes": t.outcomes, "days": t.days, "day_failures": t.day_failures,
                    "hours": t.hours, "types": types, "projects": projects, "agents": agents,
                    "sessions": sessions, "durations": durations},
        "costs": count_costs(overhead_costs(conn, scope)),
        "left_out": Counter({kind: n for kind, n in left}),
    }  # fmt: skip


def _now(conn: sqlite3.Connection, scope: Scope) -> dict[str, Any]:
    """The same three figures from the one statement, as `tally` gives them."""
    return _as_before(tally(conn, scope, "day"))


def _as_before(t: Tally) -> dict[str, Any]:
    return {"figures": _figures(t), "costs": t.costs, "left_out": t.left_out}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`test_report_sql.generate`'s store (tracked actions, failures, projects, agents, and
    `search`, one of lorebook's own types), plus sessions of lorebook's other bookkeeping types
    (tracked, failed, with overheads) and session ends carrying the hook's overhead."""
    root = tmp_path_factory.mktemp("onepass") / "store"
    generate(root, 5)
    book = Lorebook.open(root, env={})
    rng = random.Random(5)
    for n in range(12):
        start = NOW - timedelta(days=19) + timedelta(hours=rng.uniform(0, 19 * 24))
        session = book.start_session(
            session_id=f"own-{n}", agent=rng.choice(["PS", "MS", None]),
            project=rng.choice(["odin", "consilio", None]), now=start,
            meta={"overhead_ms": round(rng.uniform(1, 30), 3)},
        )  # fmt: skip
        at = start
        for _ in range(rng.randint(4, 12)):
            at += timedelta(seconds=rng.randint(1, 600), milliseconds=rng.randint(0, 999))
            kind = rng.choice([*INTERNAL_TYPES, "commit", "deploy"])
            fields: dict[str, Any] = {"now": min(at, NOW), "duration_s": rng.uniform(0.1, 9)}
            if rng.random() < 0.5:
                fields["meta"] = {"overhead_ms": round(rng.uniform(0.1, 40), 3)}
            if rng.random() < 0.3:  # tracked: a start, then its outcome as its child
                opened = session.log(kind, outcome="in_progress", now=fields["now"])
                outcome = rng.choice(["success", "failure"])
                fields["now"] = min(at + timedelta(seconds=rng.randint(1, 90)), NOW)
                session.log(kind, outcome=outcome, parent=opened["id"], **fields)
            else:
                session.log(kind, outcome=rng.choice(["success", "failure", "blocked"]), **fields)
        book.end_session(session.id, reason="normal", now=min(at + timedelta(seconds=5), NOW),
                         meta={"overhead_ms": round(rng.uniform(50, 300), 2)})  # fmt: skip
    return root


def test_one_statement_gives_what_the_three_before_gave(store: Path) -> None:
    book = Lorebook.open(store, env={})
    conn = book.action_log.catalog.open()
    assert conn is not None
    seen = Counter[str]()
    try:
        for when in WINDOWS:
            window = resolve_window(days=when.get("days"), since=when.get("since"),
                                    until=when.get("until"), now=NOW)  # fmt: skip
            for filters in FILTERS:
                for archive in (False, True):
                    base = {"project": None, "agent": None, **filters, "include_archive": archive}
                    every = Scope(window.since_ts, window.until_ts, **base, include_internal=True)
                    for internal in (False, True):
                        scope = Scope(window.since_ts, window.until_ts, **base,
                                      include_internal=internal)  # fmt: skip
                        before = _before(conn, scope, every)
                        if internal:
                            before["left_out"] = Counter()  # nothing is left out
                        now = _now(conn, scope)
                        assert now == before, (when, base, internal)
                        seen["left out"] += sum(now["left_out"].values())
                        seen["costs"] += sum(sum(c.values()) for c in now["costs"].values())
                        seen["session costs"] += sum(k == "session" for k, _ in now["costs"])
                        seen["durations"] += len(now["figures"]["durations"])
    finally:
        conn.close()
    assert min(seen.values()) > 0, seen  # every figure was there to compare


def test_the_report_with_bookkeeping_equals_the_python_reference(store: Path) -> None:
    """The whole report from the catalog equals the scan of the shards (the Python reference)
    where lorebook's own actions are left out and where they are asked for."""
    import shutil

    scan = store.parent / "scan"
    if not scan.exists():
        shutil.copytree(store, scan)
        (scan / ".lore" / "config.yaml").write_text("catalog:\n  enabled: false\n")
    sql_book, scan_book = Lorebook.open(store, env={}), Lorebook.open(scan, env={})
    window = resolve_window(days=30, since=None, until=None, now=NOW)
    for group_by in ("day", "type", "outcome"):
        for internal in (False, True):
            options = {"group_by": group_by, "include_internal": internal}
            got = build_report(sql_book.action_log, window, **options)
            assert got == build_report(scan_book.action_log, window, **options)
            left = got["internal_left_out"]
            assert (left is None) if internal else (left is not None and left["count"] > 0)
    assert scan_book.action_log.scan_note() and sql_book.action_log.scan_note() is None
