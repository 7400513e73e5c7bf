"""Every benchmark runs, at a tiny size: a benchmark that nothing runs rots unseen (the store
generator and `bench_resume.py` each broke when an internal signature changed).

The figures are not checked here (benchmarks compare ratios on a quiet machine, not in a suite);
only that each script runs to the end and exits 0. `LORE_BENCH_SMOKE=1` makes them skip their
waits for an idle CPU."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import real_sessions_root, require_real

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "benchmarks"
DATA = BENCH / "data" / "dev-duplicates.jsonl"

# script -> its arguments at a tiny size; {tmp} is a fresh folder, {data} a small ranking set
TINY: dict[str, list[str]] = {
    "bench_append.py": [
        "--actions",
        "200",
        "--rounds",
        "1",
        "--fsync-actions",
        "10",
        "--idle-wait",
        "0.1",
        "--workdir",
        "{tmp}",
    ],
    "bench_catalog.py": [
        "--workdir",
        "{tmp}",
        "--runs",
        "1",
        "--actions",
        "2000",
        "--days",
        "3",
        "--quick",
    ],
    "bench_claude_session.py": [
        "--rounds",
        "1",
        "--calls",
        "2",
        "--learnings",
        "5",
        "--workdir",
        "{tmp}",
    ],
    "bench_cli_cold.py": ["--runs", "1", "--workdir", "{tmp}"],
    "bench_cold_log.py": ["--runs", "2", "--workdir", "{tmp}"],
    "bench_dense.py": ["--data", "{data}"],
    "bench_dupbugs.py": ["--queries", "4", "--docs", "40"],
    "bench_expertise.py": ["--actions", "200", "--rounds", "1"],
    "bench_fusion.py": ["--data", "{data}"],
    "bench_hooks.py": [
        "--runs",
        "2",
        "--actions",
        "500",
        "--learnings",
        "10",
        "--workdir",
        "{tmp}",
    ],
    "bench_learnings.py": ["--workdir", "{tmp}", "--count", "50", "--rounds", "1"],
    "bench_mcp.py": ["--learnings", "20", "--calls", "2"],
    "bench_prompt_hook.py": [
        "--actions",
        "2000",
        "--learnings",
        "60",
        "--runs",
        "2",
        "--rounds",
        "1",
        "--store",
        "{tmp}/store",
    ],
    "bench_quality.py": ["--data", "{data}"],
    "bench_redact.py": ["--sizes", "1", "--rounds", "1"],
    "bench_review.py": ["--learnings", "3", "--commits", "3", "--runs", "1", "--workdir", "{tmp}"],
    "bench_resume.py": [
        "--workdir",
        "{tmp}",
        "--runs",
        "2",
        "--query-runs",
        "1",
        "--inproc-runs",
        "2",
        "--big-actions",
        "2000",
        "--big-days",
        "3",
        "--small-actions",
        "100",
    ],
    "bench_resume_huge.py": ["--workdir", "{tmp}", "--mb", "1"],
    "bench_sanitize.py": ["--seconds", "0.05"],
    "bench_search.py": [
        "--learnings",
        "60",
        "--cycles",
        "1",
        "--cycle-learnings",
        "5",
        "--queries",
        "3",
        "--workdir",
        "{tmp}",
    ],
    "bench_search_cold.py": ["--learnings", "30", "--runs", "1"],
    "bench_stats.py": [
        "--workdir",
        "{tmp}",
        "--runs",
        "1",
        "--learnings",
        "5",
        "--events",
        "50",
        "--actions",
        "2000",
    ],
    "bench_deliveries.py": ["--calls", "20", "--json"],
    "bench_report_html.py": [
        "--workdir",
        "{tmp}",
        "--actions",
        "500",
        "--days",
        "3",
        "--runs",
        "1",
    ],
    "bench_import.py": ["--sessions", "2", "--json"],
    "bench_otel_export.py": ["--actions", "300", "--per-session", "50", "--runs", "1"],
    "bench_sync_concurrent.py": ["--clones", "2", "--rounds", "1"],
    "bench_tui.py": [
        "--runs",
        "1",
        "--no-catalog",
        "--session-actions",
        "120",
        "--filters",
        "--session-pages",
        "3",
    ],
    "generate_store.py": ["--actions", "500", "--days", "2", "{tmp}/store"],
    "replay_identity.py": ["--sessions", "1", "--json"],
    "replay_sessions.py": ["--sessions", "1", "--json"],
}
POSTGRES = {  # these start a private PostgreSQL server (benchmarks/_postgres.py)
    "bench_vs_postgres.py": [
        "--workdir",
        "{tmp}",
        "--actions",
        "1000",
        "--days",
        "3",
        "--runs",
        "1",
        "--inproc-runs",
        "1",
        "--bulk-runs",
        "1",
    ],
    "bench_resume_vs_postgres.py": ["--workdir", "{tmp}", "--actions", "1000", "--runs", "1"],
    "bench_mirror_postgres.py": [
        "--workdir",
        "{tmp}",
        "--actions",
        "500",
        "--days",
        "2",
        "--runs",
        "1",
    ],
}
NOT_RUN = {"run_all.py": "runs the others at full size; each of them is run here"}


def test_every_benchmark_is_run_here() -> None:
    scripts = {p.name for p in BENCH.glob("*.py") if not p.name.startswith("_")}
    assert scripts == set(TINY) | set(POSTGRES) | set(NOT_RUN)


def small_ranking_set(path: Path) -> Path:
    """Eight queries of the development set with the issues they duplicate, and 20 others."""
    records = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line]
    queries = [r for r in records if r["type"] == "query"][:8]
    wanted = {q["expected"] for q in queries}
    docs = [r for r in records if r["type"] == "doc"]
    kept = [d for d in docs if d["id"] in wanted] + [d for d in docs if d["id"] not in wanted][:20]
    path.write_text("".join(json.dumps(r) + "\n" for r in kept + queries), encoding="utf-8")
    return path


def run_tiny(script: str, args: list[str], tmp_path: Path, work: Path | None = None) -> None:
    data = small_ranking_set(tmp_path / "ranking.jsonl")
    work = work or tmp_path / "work"
    work.mkdir(exist_ok=True)
    argv = [a.replace("{tmp}", str(work)).replace("{data}", str(data)) for a in args]
    env = {**os.environ, "LORE_BENCH_SMOKE": "1", "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, str(BENCH / script), *argv],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=280,
        check=False,
    )
    assert done.returncode == 0, f"{script} failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"


@pytest.mark.parametrize("script", sorted(TINY))
def test_benchmark_runs_at_a_tiny_size(script: str, tmp_path: Path) -> None:
    if script.startswith("replay_") and real_sessions_root() is None:
        require_real("the real Claude Code sessions (../shared/data/claude-sessions) are absent")
    run_tiny(script, TINY[script], tmp_path)


def test_postgres_benchmarks_run_at_a_tiny_size(tmp_path: Path) -> None:
    """Side by side with a private PostgreSQL server (benchmarks/_postgres.py); the resume
    comparison reads the store the first one generated, so they share one folder, in order."""
    sys.path.insert(0, str(BENCH))
    try:
        from _postgres import missing
    finally:
        sys.path.remove(str(BENCH))
    why = missing()
    if why:
        require_real(why)
    work = tmp_path / "work"
    for script, args in POSTGRES.items():
        run_tiny(script, args, tmp_path, work)
