"""The resume rows of `bench_vs_postgres.py` alone, with a baseline checkout side by side.

    .venv/bin/python benchmarks/bench_resume_vs_postgres.py --actions 1000000 \\
        [--baseline /path/to/older/src] [--runs 9] [--fresh]

Reuses the stores and COPY files `bench_vs_postgres.py` leaves under `--workdir` (run it once
first), its private PostgreSQL, schema, COPY loading and interleaving: cold `lore resume --json`
(this checkout, and `--baseline`'s `src` when given) vs `psql -c` of the session row and its 20
newest actions, then in-process `Lorebook.resume()` vs psycopg, alternating. Medians and
min-max; only ratios within one run mean much on a shared machine.

`--fresh` adds, in the same rounds, a hard-linked copy of the store without `.lore/cache` (a
fresh clone: no catalog), resumed as it is (its git state cached by the runs before) and with
the cached git state removed before each run (`sh -c 'rm -f …; exec lore …'`, ~2 ms more: the
first resume of a clone).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

from _common import HERE, clean_env, interleaved
from _postgres import PrivatePostgres, missing
from _seed_load import copy_load, create_schema
from bench_vs_postgres import SQL_RESUME, alternate, lore_command, pg_query


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/lore-bench"))
    parser.add_argument("--actions", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--baseline", type=Path, help="the src folder of another checkout")
    parser.add_argument(
        "--fresh",
        action="store_true",
        help="also a copy of the store without its catalog (a fresh clone)",
    )
    args = parser.parse_args(argv)
    why = missing()
    if why:
        print(f"bench_resume_vs_postgres: skipped: {why}")
        return 0
    import psycopg

    from lorebook import Lorebook

    stores = sorted(path for path in args.workdir.glob(f"store-{args.actions}a-*")
                    if not path.name.endswith("-fresh"))  # fmt: skip
    if not stores or not (args.workdir / f"pg-{stores[-1].name}").is_dir():
        print(
            f"no {args.actions:,}-action store under {args.workdir}: "
            "run bench_vs_postgres.py --actions N once first"
        )
        return 1
    store = stores[-1]
    lore = lore_command(args.workdir)
    with PrivatePostgres(args.workdir) as pg:
        create_schema(pg)
        conn = psycopg.connect(pg.dsn)
        copy_load(conn, args.workdir / f"pg-{store.name}")
        conn.commit()
        conn.autocommit = True
        with conn.cursor() as cur:
            cur.execute("ANALYZE")
        base = clean_env(LORE_ROOT=str(store))
        envs = {"lore": {**base, "PYTHONPATH": str(HERE.parent / "src")}}
        if args.baseline:
            envs["lore (baseline)"] = {**base, "PYTHONPATH": str(args.baseline)}
        commands = {name: [lore, "resume", "--json"] for name in envs}
        if args.fresh:
            fresh = fresh_copy(store)
            envs["fresh clone"] = envs["fresh, 1st resume"] = {
                **envs["lore"],
                "LORE_ROOT": str(fresh),
            }
            commands["fresh clone"] = [lore, "resume", "--json"]
            state = fresh / ".lore" / "cache" / "git-state.json"
            commands["fresh, 1st resume"] = [
                "sh",
                "-c",
                f'rm -f "{state}"; exec "$0" "$@"',
                lore,
                "resume",
                "--json",
            ]
        commands["psql"] = [*pg.psql_args(), "-c", "; ".join(SQL_RESUME)]
        commands["python -c pass"] = [sys.executable, "-c", "pass"]
        cli = interleaved(commands, args.runs, cwd=store, env=base, envs=envs)
        med = {name: statistics.median(times) * 1000 for name, times in cli.items()}
        for name, times in cli.items():
            print(
                f"cold {name:16s} {med[name]:7.1f} ms ({min(times) * 1000:.1f}-"
                f"{max(times) * 1000:.1f})  {med[name] / med['psql']:.2f}x psql"
            )
        book = Lorebook.open(store, env={})
        times = alternate(
            {"resume": (book.resume, lambda: pg_query(conn, SQL_RESUME))}, args.runs * 2
        )["resume"]
        ours, theirs = (statistics.median(times[side]) * 1000 for side in ("lore", "pg"))
        print(
            f"in-process resume {ours:.1f} ms vs PostgreSQL {theirs:.2f} ms: {ours / theirs:.1f}x"
        )
        conn.close()
    return 0


def fresh_copy(store: Path) -> Path:
    """A hard-linked copy of `store` without `.lore/cache` (made once, kept beside it)."""
    copy = store.with_name(store.name + "-fresh")
    if not (copy / ".lore" / "config.yaml").exists():
        shutil.rmtree(copy, ignore_errors=True)
        subprocess.run(["cp", "-al", str(store), str(copy)], check=True)
    shutil.rmtree(copy / ".lore" / "cache", ignore_errors=True)
    return copy


if __name__ == "__main__":
    sys.exit(main())
