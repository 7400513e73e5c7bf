"""`lore mirror postgres` against a bare COPY of the same rows, and an incremental day.

    .venv/bin/python benchmarks/bench_mirror_postgres.py --actions 1000000 [--runs 3]

A generated store (benchmarks/generate_store.py, in a git repository, its catalog built as a
working copy has it) and a private PostgreSQL (benchmarks/_postgres.py). Each run, paired:

* `lore mirror postgres` (a cold process: read the shards, redact, COPY into a staging table,
  INSERT ... ON CONFLICT into the seed's tables with their indexes, sessions, watermarks) into
  an empty database. Its records are not redacted again where the catalog's memo vouches for
  their shard (verified clean, unchanged since): before the runs, the memo is emptied and one
  mirror into a database of its own (`first`, the fresh-clone case: every record redacted)
  fills it, as any mirror or read of a working copy does;
* a bare COPY of the very rows it stored (exported once with COPY TO) into an empty database
  with the same schema and indexes -- the floor for loading them;
* then one new day of actions (the store's actions per day) appended to the store and an
  incremental `lore mirror postgres` of it (targets: ratio <= 1.5x, incremental <= 2 s),
  paired with a bare COPY of that day's rows into a copy of the database as it was before it
  (the server's own part: the seed's indexes, its GIN index on `context` most). The database
  is brought to rest first (`settle`: VACUUM ANALYZE, CHECKPOINT), as a daily mirror finds it.
"""

from __future__ import annotations

import argparse
import io
import json
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import generate_store
from _common import clean_env, lore_script, machine, write_results
from _postgres import PrivatePostgres, missing

COLUMNS = (
    "repository, id, session_id, supervisor_type, project, action_type, action_category, "
    "context, outcome, error_message, duration_seconds, timestamp, metadata, parent_action_id, "
    "related_epic_id, related_issue_id"
)


def make_store(workdir: Path, actions: int, days: int, end: datetime) -> Path:
    root = workdir / f"mirror-store-{actions}a-{days}d"
    if (root / ".lore").is_dir():
        return root
    generate_store.generate(root, actions, days, 11, end, 2)
    for args in (["init", "-q", "-b", "main"], ["add", ".gitattributes"],
                 ["-c", "user.name=b", "-c", "user.email=b@example.invalid", "commit", "-q",
                  "-m", "store"]):  # fmt: skip
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    subprocess.run([str(lore_script()), "catalog"], cwd=root, env=clean_env(), check=True,
                   capture_output=True)  # fmt: skip
    return root


def forget_clean(root: Path) -> None:
    """Empty the catalog's memo of shards verified clean (a fresh clone has none)."""
    conn = sqlite3.connect(root / ".lore" / "cache" / "catalog.sqlite")
    try:
        conn.execute("DELETE FROM clean")
        conn.commit()
    except sqlite3.OperationalError:  # no memo yet
        pass
    finally:
        conn.close()


def mirror(root: Path, dsn: str) -> tuple[float, dict[str, object]]:
    started = time.perf_counter()
    done = subprocess.run([str(lore_script()), "mirror", "postgres", dsn, "--json"], cwd=root,
                          env=clean_env(), capture_output=True, text=True, check=False)  # fmt: skip
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"lore mirror postgres failed: {done.stderr.strip()}")
    return elapsed, json.loads(done.stdout)


def settle(pg: PrivatePostgres, database: str, drop: list[str]) -> None:
    """Bring the server to rest before the incremental day, as a daily mirror finds it: the
    1M-row loads just made would otherwise be vacuumed and analysed by autovacuum, and their
    pages written out, during the measurement (on two cores, up to a second of it)."""
    for name in drop:
        pg.psql("-c", f"DROP DATABASE {name}", database="postgres")
    pg.psql("-c", "VACUUM ANALYZE", database=database)
    pg.psql("-c", "CHECKPOINT", database="postgres")


def bare_copy_of(base: str, run: int, sessions: list[str]) -> float:
    """Seconds of a bare COPY of the new day's rows (those of its `sessions`, exported from
    m<run>) into f<run>, the database as it was before the day was mirrored."""
    import psycopg

    buffer = io.BytesIO()
    export = (f"COPY (SELECT {COLUMNS} FROM supervisor_actions WHERE session_id = ANY(%s))"
              " TO STDOUT")  # fmt: skip
    with (
        psycopg.connect(base + f"dbname=m{run}") as conn,
        conn.cursor() as cur,
        cur.copy(export, (sessions,)) as cp,
    ):
        for block in cp:
            buffer.write(block)
    with psycopg.connect(base + f"dbname=f{run}", autocommit=True) as conn:
        started = time.perf_counter()
        load = f"COPY supervisor_actions ({COLUMNS}) FROM STDIN"
        with conn.transaction(), conn.cursor() as cur, cur.copy(load) as cp:
            cp.write(buffer.getvalue())
        return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/lore-bench"))
    parser.add_argument("--actions", type=int, default=100_000)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json-out")
    args = parser.parse_args(argv)
    why = missing()
    if why:
        print(f"bench_mirror_postgres: skipped: {why}")
        return 0
    import psycopg

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
    from lorebook.mirror.schema import migrate

    end = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    root = make_store(args.workdir, args.actions, args.days, end)
    per_day = max(args.actions // args.days, 1)
    pairs: list[tuple[float, float]] = []
    increments: list[float] = []
    day_copies: list[float] = []
    stored = new_rows = 0
    with PrivatePostgres(args.workdir) as pg:
        base = pg.dsn.rsplit("dbname=", 1)[0]
        forget_clean(root)
        pg.psql("-c", "CREATE DATABASE first", database="postgres")
        first_s, _ = mirror(root, base + "dbname=first")
        print(f"first mirror (nothing vouched clean yet) {first_s:.2f} s", flush=True)
        for run in range(args.runs):
            for name in (f"m{run}", f"c{run}"):
                pg.psql("-c", f"CREATE DATABASE {name}", database="postgres")
            seconds, result = mirror(root, base + f"dbname=m{run}")
            stored = int(result["actions"])  # type: ignore[call-overload]
            buffer = io.BytesIO()
            export = f"COPY (SELECT {COLUMNS} FROM supervisor_actions) TO STDOUT"
            with (
                psycopg.connect(base + f"dbname=m{run}") as conn,
                conn.cursor() as cur,
                cur.copy(export) as cp,
            ):
                for block in cp:
                    buffer.write(block)
            with psycopg.connect(base + f"dbname=c{run}", autocommit=True) as conn:
                migrate(conn, "")
                started = time.perf_counter()
                load = f"COPY supervisor_actions ({COLUMNS}) FROM STDIN"
                with conn.transaction(), conn.cursor() as cur, cur.copy(load) as cp:
                    cp.write(buffer.getvalue())
                copy_s = time.perf_counter() - started
            pairs.append((seconds, copy_s))
            settle(pg, f"m{run}", drop=[f"c{run}", *(["first"] if run == 0 else [])])
            # one new day, appended, mirrored incrementally
            extra = args.workdir / f"mirror-day-{run}"
            shutil.rmtree(extra, ignore_errors=True)
            generate_store.generate(extra, per_day, 1, 100 + run, end + timedelta(days=1), 1)
            added = []
            for day in sorted((extra / "actionlog").glob("[0-9]*/[0-9]*/[0-9]*")):
                target = root / "actionlog" / day.relative_to(extra / "actionlog")
                target.parent.mkdir(parents=True, exist_ok=True)
                for shard in day.iterdir():
                    destination = target / shard.name
                    target.mkdir(parents=True, exist_ok=True)
                    shutil.move(str(shard), destination)
                    added.append(destination)
            pg.psql("-c", f"CREATE DATABASE f{run} TEMPLATE m{run}", database="postgres")
            pg.psql("-c", "CHECKPOINT", database="postgres")
            inc_s, inc = mirror(root, base + f"dbname=m{run}")
            new_rows = int(inc["actions"])  # type: ignore[call-overload]
            increments.append(inc_s)
            day_copies.append(bare_copy_of(base, run, sorted({p.stem for p in added})))
            for path in added:
                path.unlink()
            shutil.rmtree(extra, ignore_errors=True)
            print(f"run {run + 1}: mirror {seconds:.2f} s, bare COPY {copy_s:.2f} s "
                  f"(x{seconds / copy_s:.2f}); incremental day ({new_rows:,} actions) "
                  f"{inc_s:.2f} s, its rows' bare COPY {day_copies[-1]:.2f} s",
                  flush=True)  # fmt: skip
        version = pg.version
    ratios = [m / c for m, c in pairs]
    summary = {
        "actions": args.actions, "stored": stored, "days": args.days, "runs": args.runs,
        "mirror_s": statistics.median(m for m, _ in pairs),
        "copy_s": statistics.median(c for _, c in pairs),
        "ratio_median": statistics.median(ratios), "ratio_min": min(ratios),
        "first_mirror_s": first_s,
        "first_ratio": first_s / statistics.median(c for _, c in pairs),
        "incremental_day_actions": new_rows, "incremental_s": statistics.median(increments),
        "incremental_copy_s": statistics.median(day_copies),
        "postgres": version,
    }  # fmt: skip
    print(json.dumps(summary, indent=2))
    print(f"machine: {machine()}")
    write_results(args.json_out, "bench_mirror_postgres", summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
