"""`lore report kpis`: the seed's success metrics from the log, each with its counts, and
"n/a" when the log cannot tell."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from conftest import cli_run
from lorebook import Lorebook
from lorebook.log.kpis import compute, hook_misses, shard_bytes
from lorebook.log.sessions import SessionInfo

T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)  # a Monday: ISO week 2026-W45


def _row(kind: str, session: str, minute: int, **extra: Any) -> dict[str, Any]:
    ts = (T0 + timedelta(minutes=minute)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    return {"kind": "action", "type": kind, "session": session, "ts": ts, "outcome": "success",
            "epic": None, "project": "p", "meta": {}, **extra}  # fmt: skip


def _by_key(figures: list[Any]) -> dict[str, Any]:
    return {k.key: k for k in figures}


def _compute(actions: list[dict[str, Any]], sessions: list[SessionInfo] | None = None,
             **kw: Any) -> dict[str, Any]:  # fmt: skip
    options: dict[str, Any] = {"published": 0, "hook_misses": 0, "shard_bytes": 0, "days": 7.0}
    return _by_key(compute(actions, sessions or [], **(options | kw)))


def test_search_before_plan_counts_epics_not_plans() -> None:
    rows = [
        _row("search", "s1", 0),  # a preflight in s1 (no epic)
        _row("plan", "s1", 1, epic="e1"),
        _row("plan", "s2", 2, epic="e2"),  # nobody searched first
        _row("search", "s2", 3, epic="e2"),  # too late for e2's first plan
        _row("plan", "s2", 4, epic="e2"),
        _row("search", "s3", 5, epic="e3"),  # a search on the epic, in another session
        _row("plan", "s4", 6, epic="e3"),
    ]
    k = _compute(rows)["search_before_plan"]
    assert (k.numerator, k.denominator, k.value, k.met) == (2, 3, 66.7, False)
    assert _compute([])["search_before_plan"].value is None  # no epic planned: n/a


def test_learning_extraction_and_reuse() -> None:
    rows = [
        _row("epic_complete", "s1", 0, epic="e1"),
        _row("learning_draft", "s1", 1, epic="e1"),
        _row("epic_complete", "s1", 2, epic="e2"),
        _row("learning_draft", "s1", 3, epic="e2", outcome="blocked"),  # near-duplicate
        _row("learning_draft", "s1", 4, epic="e9"),  # an epic never completed
        *[_row("apply_learning", "s1", 5 + i) for i in range(7)],
    ]
    figures = _compute(rows, published=2)
    k = figures["learning_extraction"]
    assert (k.numerator, k.denominator, k.value, k.met) == (1, 2, 50.0, False)  # > 50 % needed
    reuse = figures["learning_reuse"]
    assert (reuse.numerator, reuse.denominator, reuse.value, reuse.met) == (7, 2, 3.5, True)
    assert _compute(rows, published=0)["learning_reuse"].value is None


def test_hook_coverage_overhead_and_size() -> None:
    hook = {"source": "claude-code:post-tool-use", "overhead_ms": 4}
    rows = [_row("tool_call", "s1", i, meta=dict(hook)) for i in range(19)]
    rows.append(_row("tool_call", "s1", 30, meta={"overhead_ms": 40}))  # `lore log`, not a hook
    figures = _compute(rows, hook_misses=1, shard_bytes=70_000_000, days=7.0)
    cov = figures["logging_coverage"]
    assert (cov.numerator, cov.denominator, cov.value, cov.met) == (19, 20, 95.0, False)
    over = figures["logging_overhead"]
    assert (over.numerator, over.denominator, over.value, over.met) == (116, 20, 5.8, True)
    size = figures["log_size"]
    assert (size.value, size.met) == (900_000_000, True)
    nothing = _compute([], hook_misses=3)
    assert nothing["logging_coverage"].value is None  # no hook records tool calls: n/a
    assert nothing["logging_overhead"].value is None and nothing["log_size"].value is None


def _session(sid: str, start: int, last: int, reason: str | None = None) -> SessionInfo:
    def ts(minute: int) -> str:
        return (T0 + timedelta(minutes=minute)).strftime("%Y-%m-%dT%H:%M:%S.000Z")

    return SessionInfo(id=sid, project="p", started=ts(start), last_activity=ts(last),
                       ended=ts(last) if reason else None, end_reason=reason)  # fmt: skip


def test_resume_success() -> None:
    rows = [
        # a: disconnected after a failed validation; b continues e1 and passes it
        _row("validate", "a", 0, epic="e1", outcome="failure"),
        _row("commit", "b", 10, epic="e1"),
        _row("validate", "b", 11, epic="e1"),
        # c: timed out on e2; d fails the same validation again: not a successful resume
        _row("validate", "c", 20, epic="e2", outcome="failure"),
        _row("validate", "d", 30, epic="e2", outcome="failure"),
        # f: disconnected on e3; g works on something else
        _row("plan", "f", 40, epic="e3"),
        _row("plan", "g", 50, epic="e4"),
        # h ended normally: not a resume at all; k: disconnected, nobody came back yet
        _row("plan", "h", 60, epic="e5"),
        _row("plan", "k", 70, epic="e6"),
    ]
    sessions = [
        _session("a", 0, 0, "network_disconnect"), _session("b", 10, 11, "normal"),
        _session("c", 20, 20, "timeout"), _session("d", 30, 30),
        _session("f", 40, 40), _session("g", 50, 50, "normal"),
        _session("h", 60, 60, "normal"), _session("k", 70, 70),
    ]  # fmt: skip
    k = _compute(rows, sessions)["resume_success"]
    # a (ok), c (repeated the failure), d (no end, followed by g: did not continue e2), f (no)
    assert (k.numerator, k.denominator) == (1, 4)
    assert k.value == 25.0 and k.met is False
    assert _compute(rows[:2], sessions[:2])["resume_success"].value == 100.0


def test_hook_misses_and_shard_bytes(tmp_path: Path) -> None:
    log = tmp_path / "hooks.log"
    log.write_text(
        "2026-11-02T09:00:00Z post-tool-use: store locked\n"
        "2026-11-02T09:00:01Z session-start: slow\n"
        "2026-11-09T00:00:00Z post-tool-use-failure: outside the window\n"
        "garbage\n"
    )
    assert hook_misses(log, "2026-11-02T00:00:00.000Z", "2026-11-09T00:00:00.000Z") == 1
    assert hook_misses(tmp_path / "absent.log", "2026", "2027") == 0
    day = tmp_path / "actionlog" / "2026" / "11" / "02"
    day.mkdir(parents=True)
    (day / "s.jsonl").write_bytes(b"x" * 100)
    archive = tmp_path / "actionlog" / "archive" / "2026" / "11"
    archive.mkdir(parents=True)
    (archive / "02-old.jsonl.gz").write_bytes(b"y" * 10)
    (archive / "03-old.jsonl.gz").write_bytes(b"y" * 1000)
    assert shard_bytes(tmp_path / "actionlog", ["2026-11-02"]) == 110


def _story(book: Lorebook, at: datetime) -> None:
    """Two planned epics (one searched first), one completed with a draft, a resume."""

    def log(kind: str, session: str, minute: int, **kw: Any) -> None:
        book.log(kind, session=session, now=at + timedelta(minutes=minute), **kw)

    log("search", "s-one", 0, context={"query": "auth"})
    log("plan", "s-one", 1, epic="e1")
    log("validate", "s-one", 2, epic="e1", outcome="failure", error="2 tests fail")
    book.end_session("s-one", reason="network_disconnect", now=at + timedelta(minutes=3))
    log("commit", "s-two", 10, epic="e1")
    log("epic_complete", "s-two", 11, epic="e1")
    log("learning_draft", "s-two", 12, epic="e1")
    log("plan", "s-two", 13, epic="e2")
    log("tool_call", "s-two", 14, meta={"source": "claude-code:post-tool-use", "overhead_ms": 6})


def test_kpis_cli_json_and_text(store: Path) -> None:
    book = Lorebook.open(store, env={})  # no subscribers: only the story's records
    _story(book, datetime.now(UTC) - timedelta(hours=2))
    result = cli_run(["--root", str(store), "report", "kpis", "--days", "7", "--json"])
    assert result.code == 0, result.err
    data: Any = result.json()
    figures = {k["key"]: k for k in data["kpis"]}
    assert list(figures) == ["search_before_plan", "learning_extraction", "learning_reuse",
                             "logging_coverage", "resume_success", "logging_overhead",
                             "log_size"]  # fmt: skip
    assert (figures["search_before_plan"]["numerator"],
            figures["search_before_plan"]["denominator"]) == (1, 2)  # fmt: skip
    assert figures["learning_extraction"]["value"] == 100.0
    assert figures["learning_reuse"]["value"] is None  # no published learning
    assert figures["logging_coverage"]["value"] == 100.0
    assert figures["resume_success"]["value"] == 100.0
    assert figures["logging_overhead"]["value"] == 6.0
    assert figures["log_size"]["numerator"] > 0
    assert all({"definition", "numerator", "denominator", "target", "met"} <= set(k)
               for k in figures.values())  # fmt: skip
    text = cli_run(["--root", str(store), "report", "kpis", "--days", "7"])
    assert text.code == 0, text.err
    assert "Search before planning" in text.out and "1 / 2" in text.out
    assert "Learning reuse" in text.out and "n/a" in text.out and "> 90 %" in text.out
    bad = cli_run(["--root", str(store), "report", "kpis", "--days", "0"])
    assert bad.code == 1 and "--days" in bad.err and "Traceback" not in bad.err


def test_weekly_report_file_has_the_success_metrics(store: Path) -> None:
    book = Lorebook.open(store, env={})
    _story(book, T0)
    written = book.write_report("weekly", when="2026-W45")
    text = (store / written["path"]).read_text()
    assert "## Success metrics" in text
    assert "| Search before planning | 50.0 % | 1 / 2 | > 80 % | missed |" in text
    assert "| Learning reuse | n/a | 0 / 0 | > 3 | n/a |" in text
    daily = book.write_report("daily", when="2026-11-02")
    assert "Success metrics" not in (store / daily["path"]).read_text()
