"""Property: after any sequence of appends, damage, rewrites and removals of shards, the catalog
answers exactly like a scan — the same records in the same order, the same session summaries."""

from __future__ import annotations

import json
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lorebook import Lorebook
from lorebook.log.reader import iter_records
from lorebook.log.sessions import summarize
from lorebook.problems import Problem

NOW = datetime.now(UTC).replace(microsecond=0)
SESSIONS = ("s-a", "s-b", "s-c")

operations = st.lists(
    st.one_of(
        st.tuples(
            st.just("log"),
            st.sampled_from(SESSIONS),
            st.integers(0, 20),
            st.sampled_from(("success", "failure", "in_progress")),
        ),
        st.tuples(st.just("garbage"), st.sampled_from(SESSIONS), st.binary(max_size=20)),
        st.tuples(st.just("duplicate"), st.sampled_from(SESSIONS)),
        st.tuples(st.just("truncate"), st.sampled_from(SESSIONS), st.integers(1, 200)),
        st.tuples(st.just("remove"), st.sampled_from(SESSIONS)),
        st.tuples(st.just("flip"), st.sampled_from(SESSIONS)),
        st.just(("query",)),
    ),
    min_size=1,
    max_size=12,
)


def _shards(root: Path, session: str) -> list[Path]:
    return sorted((root / "actionlog").rglob(f"{session}.jsonl"))


def _apply(root: Path, op: tuple[Any, ...], max_days: int) -> None:
    kind = op[0]
    if kind == "log":
        _, session, days, outcome = op
        days %= max_days + 1
        Lorebook.open(root, env={}).log(
            "deploy",
            session=session,
            agent="PS",
            project="p",
            outcome=outcome,
            context={"d": days},
            now=NOW - timedelta(days=days, minutes=days),
        )
        return
    if kind == "query":
        return
    shards = _shards(root, op[1])
    if not shards:
        return
    path = shards[0]
    data = path.read_bytes()
    if kind == "garbage":
        path.write_bytes(data + op[2].replace(b"\n", b" ") + b"\n")
    elif kind == "duplicate" and data:
        path.write_bytes(data + data.splitlines(keepends=True)[0])
    elif kind == "truncate":
        with path.open("r+b") as handle:  # in place, possibly mid-line
            handle.truncate(max(0, len(data) - op[2]))
    elif kind == "remove":
        path.unlink()
    elif kind == "flip" and b'"success"' in data:
        with path.open("r+b") as handle:  # same size, edited in place
            handle.write(data.replace(b'"success"', b'"failure"', 1))


def _scan(root: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[Problem]]:
    problems: list[Problem] = []
    records = list(
        iter_records(root / "actionlog", base=root, newest_first=True, on_problem=problems.append)
    )
    actions = [r for r in records if r["kind"] == "action"]
    sessions = [s.to_dict() for s in summarize(reversed(records), NOW, 30)]
    return actions, sessions, problems


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=operations, verify_all=st.booleans())
def test_catalog_matches_a_scan(ops: list[tuple[Any, ...]], verify_all: bool) -> None:
    """With `catalog.verify: all`, shards of any age are edited in place; by default only the
    last two days' are (hand edits of older shards in unchanged directories are what
    `lore catalog` is for, see docs/catalog.md)."""
    max_days = 20 if verify_all else 1
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        Lorebook.init(root, env={})
        if verify_all:
            (root / ".lore" / "config.yaml").write_text("catalog:\n  verify: all\n")
        for op in [*ops, ("query",)]:
            _apply(root, op, max_days)
            if op[0] != "query" and not verify_all:
                continue
            book = Lorebook.open(root, env={})
            problems: list[Problem] = []
            actions = book.actions(limit=None, on_problem=problems.append)
            assert book.catalog.unavailable is None
            sessions = [s.to_dict() for s in book.sessions(now=NOW)]
            expected_actions, expected_sessions, expected_problems = _scan(root)
            assert json.dumps(actions) == json.dumps(expected_actions)
            assert sessions == expected_sessions
            assert sorted(map(str, problems)) == sorted(map(str, expected_problems))
