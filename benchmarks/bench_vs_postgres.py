"""lorebook vs the seed's PostgreSQL design, side by side on the same generated store.

    .venv/bin/python benchmarks/bench_vs_postgres.py [--actions 100000] [--workdir DIR]
    .venv/bin/python benchmarks/bench_vs_postgres.py --actions 1000000 --markdown  # standing figure

Needs the PostgreSQL server binaries (`initdb`, `pg_ctl`, `psql`; Debian: `apt-get install -y
postgresql`, which puts them under /usr/lib/postgresql/<version>/bin) and psycopg (in the dev
extras); without them it prints one line saying what to install and exits 0.

1. One store from `generate_store.py` (--actions over --days, cached under --workdir and
   committed to git, as bench_resume.py does).
2. A private PostgreSQL on 127.0.0.1 (temporary data directory, free port, removed on exit and on
   Ctrl-C) with the schema of seed 000 exactly as written (`seed_postgres_schema.sql`), loaded
   with the SAME records by COPY: every action -> supervisor_actions (its ULID as the UUID,
   `parent` -> parent_action_id, `epic`/`issue` -> related_*), every session ->
   supervisor_sessions (start/end events, last activity, action count). The seed's
   `supervisor_type VARCHAR(10)` cannot hold the agent `claude-code`: longer agent names are cut
   to 10 characters, the full name kept in `metadata.agent`.
3. Measured, lorebook and PostgreSQL alternating in every repetition (the order rotated), medians
   and min-max, ratio = lorebook / PostgreSQL:
   * appends in-process (`Session.log` vs psycopg INSERT + the seed's `updateSessionActivity`
     UPDATE, in one transaction): lorebook's default durability (flush) and `fsync`, against
     PostgreSQL's default (`synchronous_commit = on`) and `synchronous_commit = off`;
   * bulk: `lore catalog --rebuild` (the first catalog build) vs COPY into the empty tables with
     the seed's indexes (TRUNCATE between runs);
   * cold CLI, a fresh process each run (`lore` is a console script written under --workdir
     for this checkout's entry point): `lore resume --json`, `lore report --days 7 --json`,
     `lore actions --type deploy --outcome failure --since 30d --json`, `lore actions --epic E
     --json` (E: the epic with most actions) vs `psql -c` with the seed's query patterns;
   * the same reads in-process: the `Lorebook` API (one object) vs psycopg (one connection).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
import tomllib
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from _common import (
    HERE,
    clean_env,
    idle_note,
    interleaved,
    machine,
    median,
    run_timed,
    wait_for_idle,
    write_results,
)
from _postgres import PrivatePostgres, missing
from _seed_load import copy_load, create_schema, shard_records, write_csv

from lorebook.model import INTERNAL_TYPES

# The seed's query patterns ("Architecture Brainstorming" -> "Query Patterns"), over all
# projects as lore answers them by default. Resume picks the session as `lore resume` does (of
# the 50 most recently active: the newest that did something and did not end normally, else the
# newest that did something), so both sides answer with the same session.
LAST_SESSION = (
    "SELECT session_id FROM (SELECT * FROM supervisor_sessions ORDER BY last_activity DESC "
    "LIMIT 50) recent ORDER BY (total_actions = 0 AND ended_at IS NULL), "
    "(ended_at IS NOT NULL AND disconnect_reason = 'normal'), last_activity DESC LIMIT 1"
)
SQL_RESUME = [
    f"SELECT * FROM supervisor_sessions WHERE session_id = ({LAST_SESSION})",
    f"SELECT * FROM supervisor_actions WHERE session_id = ({LAST_SESSION}) "
    "ORDER BY timestamp DESC LIMIT 20",
]
# `lore report` leaves lorebook's own bookkeeping out (searches of the learnings, drafts, ...):
# the PostgreSQL side counts the same actions
WEEK = ("timestamp >= NOW() - INTERVAL '7 days' AND action_type NOT IN ("
        + ", ".join(f"'{kind}'" for kind in INTERNAL_TYPES) + ")")  # fmt: skip
SQL_REPORT = [  # what `lore report --json` shows, aggregated in SQL
    "SELECT DATE(timestamp) AS day, action_type, outcome, COUNT(*) AS count, "
    f"AVG(duration_seconds) AS avg_duration_seconds FROM supervisor_actions WHERE {WEEK} "
    "GROUP BY day, action_type, outcome ORDER BY day DESC, count DESC",
    "SELECT project, supervisor_type, COUNT(*) AS count, COUNT(DISTINCT session_id) AS sessions "
    f"FROM supervisor_actions WHERE {WEEK} GROUP BY project, supervisor_type",
    "SELECT EXTRACT(HOUR FROM timestamp) AS hour, COUNT(*) FROM supervisor_actions "
    f"WHERE {WEEK} GROUP BY hour ORDER BY hour",
    f"SELECT outcome, COUNT(*) FROM supervisor_actions WHERE action_type = 'deploy' AND {WEEK} "
    "GROUP BY outcome",
    "SELECT id, timestamp, project, supervisor_type, session_id, related_epic_id, outcome, "
    f"context->>'service' AS service FROM supervisor_actions WHERE action_type = 'deploy' "
    f"AND {WEEK} ORDER BY timestamp DESC LIMIT 50",
    "SELECT id, timestamp, action_type, project, supervisor_type, session_id, related_epic_id, "
    f"error_message FROM supervisor_actions WHERE outcome = 'failure' AND {WEEK} "
    "ORDER BY timestamp DESC LIMIT 10",
]
SQL_DEPLOY_FAILURES = [
    "SELECT * FROM supervisor_actions WHERE action_type = 'deploy' AND outcome = 'failure' "
    "AND timestamp >= NOW() - INTERVAL '30 days' ORDER BY timestamp DESC LIMIT 50"
]
LORE_DEPLOY_FAILURES = [
    "actions",
    "--type",
    "deploy",
    "--outcome",
    "failure",
    "--since",
    "30d",
    "--json",
]


def lore_command(workdir: Path) -> str:
    """A `lore` console script for the lorebook being measured: the entry point this checkout's
    pyproject.toml declares, run by this interpreter (an installed `lore` may belong to another
    checkout of the package than the one on PYTHONPATH)."""
    scripts = tomllib.loads((HERE.parent / "pyproject.toml").read_text())["project"]["scripts"]
    module, func = scripts["lore"].split(":")
    path = workdir / "bin" / "lore"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"#!{sys.executable}\nimport sys\nfrom {module} import {func}\n"
        f"if __name__ == '__main__':\n    sys.exit({func}())\n"
    )
    path.chmod(0o755)
    return str(path)


def sql_epic(epic: str) -> list[str]:
    return [
        f"SELECT * FROM supervisor_actions WHERE related_epic_id = '{epic}' ORDER BY timestamp ASC"
    ]


# -- measuring ---------------------------------------------------------------------------------


def bulk(lore: str, store: Path, conn: Any, csv_dir: Path, runs: int) -> dict[str, list[float]]:
    """`lore catalog --rebuild` and COPY, alternating (order swapped every run)."""
    env = clean_env(LORE_ROOT=str(store))
    cmd = [lore, "catalog", "--rebuild", "--json"]
    times: dict[str, list[float]] = {"lore": [], "pg": []}
    for run in range(runs):
        for side in ("lore", "pg") if run % 2 == 0 else ("pg", "lore"):
            if side == "lore":
                wait_for_idle()
                seconds, _ = run_timed(cmd, env=env)
            else:
                seconds = copy_load(conn, csv_dir)
            times[side].append(seconds)
            print(f"  {side}: {seconds:.1f} s", flush=True)
    with conn.cursor() as cur:
        cur.execute("ANALYZE")  # untimed, as autovacuum would soon after a load
    conn.commit()
    return times


def pg_query(conn: Any, statements: list[str]) -> list[list[Any]]:
    out = []
    with conn.cursor() as cur:
        for sql in statements:
            cur.execute(sql)
            out.append(cur.fetchall())
    return out


def alternate(
    pairs: dict[str, tuple[Callable[[], Any], Callable[[], Any]]], runs: int
) -> dict[str, dict[str, list[float]]]:
    """Each (lorebook, PostgreSQL) pair, one call of each per repetition, order alternating."""
    times: dict[str, dict[str, list[float]]] = {n: {"lore": [], "pg": []} for n in pairs}
    for name, (lore, pg) in pairs.items():
        lore()
        pg()
        for run in range(runs):
            wait_for_idle(timeout=3)
            order = (("lore", lore), ("pg", pg))
            for side, call in order if run % 2 == 0 else order[::-1]:
                started = time.perf_counter()
                call()
                times[name][side].append(time.perf_counter() - started)
    return times


def appends(
    workdir: Path,
    conn_on: Any,
    conn_off: Any,
    samples: list[dict[str, Any]],
    count: int,
    block: int = 25,
) -> dict[str, list[float]]:
    """Per-append seconds: lorebook flush / fsync (fresh stores) and PostgreSQL
    synchronous_commit on / off, in blocks of `block` appends, the variants rotated."""
    from psycopg.types.json import Jsonb

    from lorebook import Lorebook

    base = workdir / "append-stores"
    shutil.rmtree(base, ignore_errors=True)
    sessions = {}
    for mode in ("flush", "fsync"):
        (base / mode).mkdir(parents=True)
        book = Lorebook.init(base / mode, env={})
        if mode == "fsync":
            (base / mode / ".lore" / "config.yaml").write_text("log:\n  durability: fsync\n")
            book = Lorebook.open(base / mode, env={})
        assert book.writer.fsync == (mode == "fsync"), "durability not applied"
        sessions[mode] = book.start_session(agent="PS", project="consilio")
    pg_session = f"bench-append-{uuid.uuid4()}"
    with conn_on.cursor() as cur:
        cur.execute(
            "INSERT INTO supervisor_sessions (session_id, supervisor_type, project, "
            "session_type) VALUES (%s, 'PS', 'consilio', 'cli')",
            (pg_session,),
        )
    conn_on.commit()

    def pg_append(conn: Any, sample: dict[str, Any]) -> None:
        with conn.cursor() as cur:  # the seed's logActionTool: insertAction + updateSession
            cur.execute(
                "INSERT INTO supervisor_actions (session_id, supervisor_type, project, "
                "action_type, context, outcome, error_message, related_epic_id) "
                "VALUES (%s, 'PS', 'consilio', %s, %s, %s, %s, %s) RETURNING id",
                (
                    pg_session,
                    sample["type"],
                    Jsonb(sample["context"]),
                    sample["outcome"],
                    sample["error"],
                    sample["epic"],
                ),
            )
            cur.fetchone()
            cur.execute(
                "UPDATE supervisor_sessions SET last_activity = NOW(), "
                "total_actions = total_actions + 1 WHERE session_id = %s",
                (pg_session,),
            )
        conn.commit()

    def lore_append(mode: str, sample: dict[str, Any]) -> None:
        sessions[mode].log(
            sample["type"],
            context=sample["context"],
            outcome=sample["outcome"],
            error=sample["error"],
            epic=sample["epic"],
        )

    variants: dict[str, Callable[[dict[str, Any]], None]] = {
        "lore flush": lambda s: lore_append("flush", s),
        "lore fsync": lambda s: lore_append("fsync", s),
        "pg sync on": lambda s: pg_append(conn_on, s),
        "pg sync off": lambda s: pg_append(conn_off, s),
    }
    times: dict[str, list[float]] = {name: [] for name in variants}
    names = list(variants)
    for name in names:  # warm-up
        for sample in samples[:5]:
            variants[name](sample)
    for round_ in range(max(1, count // block)):
        wait_for_idle(timeout=3)
        shift = round_ % len(names)
        for name in names[shift:] + names[:shift]:
            for i in range(block):
                sample = samples[(round_ * block + i) % len(samples)]
                started = time.perf_counter()
                variants[name](sample)
                times[name].append(time.perf_counter() - started)
    for session in sessions.values():
        session.end()
    # The appended rows stay (this runs last; the server is thrown away): deleting them would
    # take minutes at 1M rows, since the seed indexes no `parent_action_id`, so every deleted
    # row makes its self-referencing foreign key scan the whole table.
    shutil.rmtree(base, ignore_errors=True)
    return times


def samples_from(store: Path, count: int = 200) -> list[dict[str, Any]]:
    """Realistic appends: the first `count` actions of the store (type, context, outcome...)."""
    out = []
    for record in shard_records(store):
        if record["kind"] == "action":
            out.append({k: record.get(k) for k in ("type", "context", "outcome", "error", "epic")})
            if len(out) >= count:
                break
    return out


# -- report ------------------------------------------------------------------------------------


def span(values: list[float], scale: float, unit: str) -> str:
    digits = 0 if median(values) * scale >= 100 else 1
    return (
        f"{median(values) * scale:,.{digits}f} {unit} ({min(values) * scale:,.{digits}f}–"
        f"{max(values) * scale:,.{digits}f})"
    )


def table(res: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """(measurement, lorebook, PostgreSQL, ratio) rows, as in the issue's table."""
    rows = []
    a = res["appends"]

    def pair(label: str, lore: list[float], pg: list[float], scale: float, unit: str) -> None:
        rows.append(
            (
                label,
                span(lore, scale, unit),
                span(pg, scale, unit),
                f"{median(lore) / median(pg):.2f}×",
            )
        )

    pair(
        "single append in-process, p50 (no fsync / default commit)",
        a["lore flush"],
        a["pg sync on"],
        1e6,
        "µs",
    )
    pair(
        "append with fsync vs synchronous commit, p50", a["lore fsync"], a["pg sync on"], 1e6, "µs"
    )
    pair(
        "append no fsync vs `synchronous_commit = off`, p50",
        a["lore flush"],
        a["pg sync off"],
        1e6,
        "µs",
    )
    n = res["pg_rows"]["actions"]
    lore_rate = [n / s for s in res["bulk"]["lore"]]
    pg_rate = [n / s for s in res["bulk"]["pg"]]
    rows.append(
        (
            "bulk: first catalog build vs COPY load",
            span(lore_rate, 1, "/s"),
            span(pg_rate, 1, "/s"),
            f"{median(res['bulk']['lore']) / median(res['bulk']['pg']):.2f}× the time",
        )
    )
    cli, inproc = res["cli"], res["in_process"]
    labels = {
        "resume": "resume (`lore resume --json` vs last session + 20 actions)",
        "report": "7-day report",
        "deploy failures": "deploy failures 30 days",
        "epic": f"one epic ({res['pg_rows']['epic_rows']:,} rows)",
    }
    for key, label in labels.items():
        pair(f"{label}, cold CLI", cli[f"lore {key}"], cli[f"psql {key}"], 1e3, "ms")
        pair(f"{label}, in-process", inproc[key]["lore"], inproc[key]["pg"], 1e3, "ms")
    return rows


def print_table(rows: list[tuple[str, str, str, str]], markdown: bool) -> None:
    head = ("measurement", "lorebook", "PostgreSQL", "ratio")
    if markdown:
        print("| " + " | ".join(head) + " |\n|---|---|---|---|")
        for row in rows:
            print("| " + " | ".join(row) + " |")
        return
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    for row in (head, tuple("-" * w for w in widths), *rows):
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))


# -- main ----------------------------------------------------------------------------------------


def check_answers(store: Path, conn: Any, info: dict[str, Any]) -> dict[str, Any]:
    """Both sides answer the same question: same session, same counts."""
    from lorebook import Lorebook

    book = Lorebook.open(store, env={})
    resumed = book.resume()["session"]["id"]
    pg_session = pg_query(conn, [LAST_SESSION])[0][0][0]
    failures = (
        len(book.actions(type="deploy", outcome="failure", since="30d")),
        len(pg_query(conn, SQL_DEPLOY_FAILURES)[0]),
    )
    epic = (
        len(book.actions(epic=info["epic"], limit=None)),
        len(pg_query(conn, sql_epic(info["epic"]))[0]),
    )
    week = (
        book.report(days=7)["summary"]["total_actions"],
        pg_query(conn, [f"SELECT COUNT(*) FROM supervisor_actions WHERE {WEEK}"])[0][0][0],
    )
    checks = {
        "resume session": (resumed, pg_session),
        "deploy failures": failures,
        "epic rows": epic,
        "7-day actions": week,
    }
    for name, (lore, pg) in checks.items():
        print(
            f"  {name}: lorebook {lore}, PostgreSQL {pg}{'' if lore == pg else '  <- DIFFERENT'}",
            flush=True,
        )
    return {k: list(v) for k, v in checks.items()}


def measure(args: argparse.Namespace) -> dict[str, Any]:
    import psycopg
    from bench_resume import ensure_store

    from lorebook import Lorebook

    print("store:", flush=True)
    store, summary = ensure_store(args.workdir, args.actions, args.days, args.seed, args.end, True)
    print(
        f"  {summary['actions']:,} actions, {summary['sessions']:,} sessions, "
        f"{summary['shards']:,} shards, {summary['bytes'] / 1e6:,.0f} MB",
        flush=True,
    )
    csv_dir = args.workdir / f"pg-{store.name}"
    info = write_csv(store, csv_dir)
    print(
        f"  for COPY: {info['actions']:,} actions, {info['sessions']:,} sessions; largest epic "
        f"{info['epic']} ({info['epic_rows']:,} actions)",
        flush=True,
    )
    res: dict[str, Any] = {"store": summary, "pg_rows": info}
    with PrivatePostgres(args.workdir) as pg:
        res["postgres"] = pg.version
        print(f"PostgreSQL {pg.version} on 127.0.0.1:{pg.port}", flush=True)
        res["helpers_error"] = create_schema(pg)
        if res["helpers_error"]:
            print(f"  the seed's helper functions do not compile: {res['helpers_error']}")
        conn = psycopg.connect(pg.dsn)
        print(f"bulk load, {args.bulk_runs} runs each (lore catalog --rebuild | COPY):", flush=True)
        lore = lore_command(args.workdir)
        res["bulk"] = bulk(lore, store, conn, csv_dir, args.bulk_runs)
        conn.autocommit = True
        print("same answers:", flush=True)
        res["checks"] = check_answers(store, conn, info)
        epic = info["epic"]
        print(f"cold CLI, {args.runs} runs each, interleaved ...", flush=True)
        psql = pg.psql_args()
        queries = {
            "resume": (["resume", "--json"], SQL_RESUME),
            "report": (["report", "--days", "7", "--json"], SQL_REPORT),
            "deploy failures": (LORE_DEPLOY_FAILURES, SQL_DEPLOY_FAILURES),
            "epic": (
                ["actions", "--epic", epic, "--limit", str(info["epic_rows"]), "--json"],
                sql_epic(epic),
            ),
        }
        commands: dict[str, list[str]] = {}
        for key, (lore_args, sql) in queries.items():
            commands[f"lore {key}"] = [lore, *lore_args]
            commands[f"psql {key}"] = [*psql, "-c", "; ".join(sql)]
        res["cli"] = interleaved(
            commands, args.runs, cwd=store, env=clean_env(LORE_ROOT=str(store))
        )
        print(f"in-process, {args.inproc_runs} runs each, alternating ...", flush=True)
        book = Lorebook.open(store, env={})
        res["in_process"] = alternate(
            {
                "resume": (book.resume, lambda: pg_query(conn, SQL_RESUME)),
                "report": (lambda: book.report(days=7), lambda: pg_query(conn, SQL_REPORT)),
                "deploy failures": (
                    lambda: book.actions(type="deploy", outcome="failure", since="30d"),
                    lambda: pg_query(conn, SQL_DEPLOY_FAILURES),
                ),
                "epic": (
                    lambda: book.actions(epic=epic, limit=None),
                    lambda: pg_query(conn, sql_epic(epic)),
                ),
            },
            args.inproc_runs,
        )
        print(f"appends, {args.appends} per variant ...", flush=True)
        conn.autocommit = False
        off = psycopg.connect(pg.dsn)
        with off.cursor() as cur:
            cur.execute("SET synchronous_commit = off")
        off.commit()
        res["appends"] = appends(args.workdir, conn, off, samples_from(store), args.appends)
        off.close()
        conn.close()
    return res


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n\n".join(__doc__.split("\n\n")[1:]),
    )
    parser.add_argument(
        "--workdir",
        type=Path,
        default=Path("/tmp/lore-bench"),
        help="generated stores, COPY files and the server (default: /tmp/lore-bench)",
    )
    parser.add_argument(
        "--actions",
        type=int,
        default=100_000,
        help="actions in the store (default 100,000: a few minutes; the "
        "standing figure is 1,000,000)",
    )
    parser.add_argument("--days", type=int, default=730, help="days of history (default 730)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--end",
        default=datetime.now(UTC).strftime("%Y-%m-%d"),
        help="end of the history (default: today)",
    )
    parser.add_argument("--runs", type=int, default=15, help="cold CLI runs per command")
    parser.add_argument("--inproc-runs", type=int, default=21, help="in-process calls per pair")
    parser.add_argument(
        "--bulk-runs", type=int, default=3, help="catalog builds and COPY loads (default 3)"
    )
    parser.add_argument("--appends", type=int, default=500, help="appends per variant")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    parser.add_argument("--json-out", help="write the results as JSON here")
    args = parser.parse_args(argv)
    why = missing()
    if why:
        print(f"bench_vs_postgres: skipped: {why}")
        return 0
    args.workdir.mkdir(parents=True, exist_ok=True)
    res = measure(args)
    info = machine()
    print(
        f"\nlorebook vs PostgreSQL {res['postgres']} (seed 000 schema), "
        f"{res['store']['actions']:,} actions over {res['store']['days']} days; "
        f"{info.get('cpu', '?')}, {info['nproc']} CPUs, {info.get('ram_gib', '?')} GiB RAM; "
        "medians (min–max), ratio = lorebook / PostgreSQL"
    )
    rows = table(res)
    print_table(rows, args.markdown)
    print(idle_note())
    write_results(args.json_out, "vs_postgres", {**res, "table": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
