"""The action catalog on 1,000,000 actions: build, sync, warm queries, report, export; vs a scan.

    .venv/bin/python benchmarks/bench_catalog.py [--workdir /tmp/lore-bench] [--runs 7] [--quick]

The store comes from `generate_store.py` (the resume benchmark's, cached under `--workdir`) and is
copied once to `<workdir>/catalog-<store>/` (without git or caches), because this benchmark
appends to it. A sibling `scan-<store>/` holds only a `.lore/config.yaml` with
`catalog.enabled: false` and a symlink to the same `actionlog/`: the same shards answered by
scanning. Measured:

* first catalog build: `lore catalog --rebuild --json` (a fresh process; wall time, peak RSS,
  catalog size);
* warm CLI queries, fresh processes, interleaved with the scan store, medians of `--runs`:
  `lore actions --type deploy --outcome failure --since 30d --json`, `lore report --days 7 --json`,
  `lore sessions --json` (catalog only: a scan of two years takes minutes);
* sync after appending 1,000 actions (in-process `Lorebook.log`, then `catalog.open()`), 5
  rounds, median, with the bytes read; and a sync with nothing new;
* `lore export --format jsonl` of every action: MB/s and peak RSS, against an export of the last
  30 days (flat memory means the two peaks are about the same), from the catalog and (unless
  `--quick`) from the scan store.

Targets: each warm query <= 1 s; sync after 1,000 appends <= 200 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from _common import clean_env, idle_note, lore_script, median, pct, wait_for_idle, write_results
from bench_resume import cli_runs, ensure_store

QUERY_TARGET_S = 1.0
SYNC_TARGET_S = 0.2
QUERIES = {
    "actions": ["actions", "--type", "deploy", "--outcome", "failure", "--since", "30d", "--json"],
    "report": ["report", "--days", "7", "--json"],
}


def prepare(source: Path, workdir: Path) -> tuple[Path, Path]:
    """A private copy of the generated store, and a scan-only sibling sharing its actionlog."""
    copy = workdir / f"catalog-{source.name}"
    if not (copy / ".lore").exists():
        print(f"  copying {source.name} -> {copy}", flush=True)
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(source, copy, ignore=shutil.ignore_patterns(".git", "cache"), symlinks=True)
    scan = workdir / f"scan-{source.name}"
    if not (scan / ".lore").exists():
        (scan / ".lore").mkdir(parents=True)
        (scan / ".lore" / "config.yaml").write_text("catalog:\n  enabled: false\n")
        (scan / "actionlog").symlink_to(copy / "actionlog")
    return copy, scan


def run_measured(cmd: list[str], env: dict[str, str]) -> tuple[float, float, bytes]:
    """(wall seconds, peak RSS MB, stdout): the child is reaped with wait4 for its own rusage
    (its CPU seconds are kept in CPU_SECONDS: on a shared machine they vary less than wall time)."""
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"failed ({proc.returncode}): {' '.join(cmd)}")
    CPU_SECONDS.append(usage.ru_utime + usage.ru_stime)
    return elapsed, usage.ru_maxrss / 1024, out


CPU_SECONDS: list[float] = []


def sync_after_appends(root: Path, rounds: int, per_round: int) -> dict[str, Any]:
    from lorebook import Lorebook

    book = Lorebook.open(root, env={})
    conn = book.catalog.open()
    assert conn is not None, book.catalog.unavailable
    conn.close()
    session = book.start_session(agent="bench", project="bench")
    syncs, noops, read = [], [], []
    for _ in range(rounds):
        for n in range(per_round):
            session.log("tool_call", context={"tool_name": "bench", "n": n})
        wait_for_idle()
        started = time.perf_counter()
        conn = book.catalog.open()
        syncs.append(time.perf_counter() - started)
        assert conn is not None and book.catalog.last_sync is not None
        conn.close()
        read.append(book.catalog.last_sync.bytes_read)
        assert book.catalog.last_sync.records_added >= per_round
        started = time.perf_counter()
        conn = book.catalog.open()
        noops.append(time.perf_counter() - started)
        assert conn is not None
        conn.close()
    session.end()
    return {"sync_s": syncs, "noop_s": noops, "bytes_read": read, "per_round": per_round}


def stats(times: list[float]) -> dict[str, float]:
    return {"median_s": median(times), "p10_s": pct(times, 0.1), "p90_s": pct(times, 0.9)}


def measure(args: argparse.Namespace) -> dict[str, Any]:
    args.workdir.mkdir(parents=True, exist_ok=True)
    source, summary = ensure_store(
        args.workdir, args.actions, args.days, args.seed, args.end, False
    )
    store, scan = prepare(source, args.workdir)
    shard_bytes = sum(p.stat().st_size for p in (store / "actionlog").rglob("*.jsonl"))
    script = str(lore_script())
    env = clean_env(LORE_ROOT=str(store))
    res: dict[str, Any] = {"store": summary, "shard_bytes": shard_bytes}
    print("first catalog build (lore catalog --rebuild) ...", flush=True)
    wait_for_idle()
    seconds, rss, out = run_measured([script, "catalog", "--rebuild", "--json"], env)
    built = json.loads(out)
    res["build"] = {
        "seconds": seconds,
        "cpu_seconds": CPU_SECONDS[-1],
        "peak_rss_mb": rss,
        "catalog_bytes": built["bytes"],
        "records": built["records"],
    }
    print(
        f"  {seconds:.1f} s ({CPU_SECONDS[-1]:.1f} s CPU), peak RSS {rss:.0f} MB, "
        f"{built['bytes'] / 1e6:.0f} MB catalog",
        flush=True,
    )
    variants = {}
    for name, argv in QUERIES.items():
        variants[f"{name} (catalog)"] = (store, argv, {})
        variants[f"{name} (scan)"] = (scan, argv, {})
    variants["sessions (catalog)"] = (store, ["sessions", "--json"], {})
    print("warm queries, interleaved ...", flush=True)
    res["queries"] = {k: stats(v) for k, v in cli_runs(variants, args.runs).items()}
    print("sync after appends ...", flush=True)
    res["sync"] = sync_after_appends(store, 5, 1000)
    exports: dict[str, Any] = {}
    sources = {"catalog": store} if args.quick else {"catalog": store, "scan": scan}
    for label, root in sources.items():
        for scope, extra in (("30d", ["--since", "30d"]), ("all", [])):
            target = args.workdir / f"export-{label}-{scope}.jsonl"
            wait_for_idle()
            seconds, rss, _ = run_measured(
                [script, "export", "--format", "jsonl", "-o", str(target), "--json", *extra],
                clean_env(LORE_ROOT=str(root)),
            )
            size = target.stat().st_size
            manifest = json.loads(Path(f"{target}.manifest.json").read_text())
            exports[f"{label} {scope}"] = {
                "seconds": seconds,
                "cpu_seconds": CPU_SECONDS[-1],
                "peak_rss_mb": rss,
                "bytes": size,
                "records": manifest["record_count"],
                "mb_per_s": size / 1e6 / seconds,
                "mb_per_cpu_s": size / 1e6 / CPU_SECONDS[-1],
            }
            target.unlink()
            print(
                f"  export {label} {scope}: {manifest['record_count']:,} records, "
                f"{seconds:.1f} s ({CPU_SECONDS[-1]:.1f} s CPU), {size / 1e6 / seconds:.1f} MB/s,"
                f" peak RSS {rss:.0f} MB",
                flush=True,
            )
    res["export"] = exports
    return res


def report(res: dict[str, Any]) -> dict[str, Any]:
    q = res["queries"]
    b = res["build"]
    s = res["sync"]
    figures: dict[str, Any] = {
        "build_s": b["seconds"],
        "build_rss_mb": b["peak_rss_mb"],
        "catalog_mb": b["catalog_bytes"] / 1e6,
        "shards_mb": res["shard_bytes"] / 1e6,
        "sync_1000_s": median(s["sync_s"]),
        "sync_noop_s": median(s["noop_s"]),
        "sync_bytes": median(s["bytes_read"]),
    }
    print(
        f"\nstore: {res['store']['actions']:,} actions, {res['shard_bytes'] / 1e6:.0f} MB of shards"
    )
    print(
        f"first build: {b['seconds']:.1f} s ({b['cpu_seconds']:.1f} s CPU), peak RSS "
        f"{b['peak_rss_mb']:.0f} MB, catalog {b['catalog_bytes'] / 1e6:.0f} MB"
    )
    for name in QUERIES:
        cat = q[f"{name} (catalog)"]["median_s"]
        scan = q[f"{name} (scan)"]["median_s"]
        figures[f"{name}_catalog_s"], figures[f"{name}_scan_s"] = cat, scan
        print(
            f"{name:<8} catalog {cat * 1000:7.1f} ms (p90 "
            f"{q[f'{name} (catalog)']['p90_s'] * 1000:.0f})   scan {scan * 1000:7.1f} ms   "
            f"-> {scan / cat:.1f}x   target <= {QUERY_TARGET_S:.0f} s: "
            f"{'MET' if cat <= QUERY_TARGET_S else 'NOT MET'}"
        )
    figures["sessions_catalog_s"] = q["sessions (catalog)"]["median_s"]
    print(f"sessions catalog {figures['sessions_catalog_s'] * 1000:.1f} ms (36k sessions)")
    print(
        f"sync after 1,000 appends: {figures['sync_1000_s'] * 1000:.1f} ms median "
        f"(reads {figures['sync_bytes'] / 1e3:.0f} KB; target <= 200 ms: "
        f"{'MET' if figures['sync_1000_s'] <= SYNC_TARGET_S else 'NOT MET'}); "
        f"nothing new: {figures['sync_noop_s'] * 1000:.1f} ms"
    )
    for name, e in res["export"].items():
        figures[f"export {name}"] = e
        print(
            f"export {name:<12} {e['records']:>9,} records {e['seconds']:7.1f} s "
            f"({e['cpu_seconds']:.1f} s CPU) {e['mb_per_s']:6.1f} MB/s  peak RSS "
            f"{e['peak_rss_mb']:.0f} MB"
        )
    print(idle_note())
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n\n".join(__doc__.split("\n\n")[1:]),
    )
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/lore-bench"))
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--actions", type=int, default=1_000_000)
    parser.add_argument("--days", type=int, default=730)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--end", default=datetime.now(UTC).strftime("%Y-%m-%d"))
    parser.add_argument("--quick", action="store_true", help="no export from the scan store")
    parser.add_argument("--json-out")
    args = parser.parse_args(argv)
    res = measure(args)
    figures = report(res)
    write_results(args.json_out, "catalog", {**res, "figures": figures})
    return 0


if __name__ == "__main__":
    sys.exit(main())
