"""Run every lorebook benchmark in one go and print a summary table against the targets.

    .venv/bin/python benchmarks/run_all.py [--workdir /tmp/lore-bench] [--quick] [--markdown]
                                           [--postgres]

Runs, in order: bench_append.py, bench_cold_log.py, bench_resume.py (which generates and caches
the 1,000,000-action and 1,000-action stores under --workdir the first time: a few minutes),
bench_learnings.py (10,000 generated learning files, also cached under --workdir),
bench_catalog.py (the action catalog on the 1M store: another few minutes).
With `--postgres`, last, bench_vs_postgres.py (lorebook vs the seed's PostgreSQL design on the
1M store, 100,000 actions with --quick; it needs a local PostgreSQL install and skips with one
line without it). Each script's own detailed output is shown as it runs; its figures are saved
as JSON under `--workdir/results/` and summarised at the end.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from _common import HERE, PYTHON, machine


def run(script: str, args: list[str], out: Path) -> dict[str, Any]:
    print(f"\n=== {script} {' '.join(args)}", flush=True)
    done = subprocess.run([PYTHON, str(HERE / script), *args, "--json-out", str(out)], check=False)
    if done.returncode != 0:
        raise SystemExit(f"{script} failed with exit status {done.returncode}")
    return dict(json.loads(out.read_text()))


def catalog_rows(catalog: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """The action catalog's rows (bench_catalog.py)."""
    f = catalog["figures"]
    out = [
        (
            "catalog: first build, 1M actions",
            f"{f['build_s']:.1f} s, peak RSS {f['build_rss_mb']:.0f} MB, {f['catalog_mb']:.0f} MB",
            "report",
            "-",
        )
    ]
    for name, label in (
        ("actions", "`lore actions --type deploy --outcome failure --since 30d`"),
        ("report", "`lore report --days 7`"),
    ):
        cat, scan = f[f"{name}_catalog_s"], f[f"{name}_scan_s"]
        out.append(
            (
                f"{label}, catalog warm (vs scan)",
                f"{cat * 1000:.0f} ms (scan {scan * 1000:.0f} ms)",
                "<= 1 s",
                "met" if cat <= 1.0 else "NOT MET",
            )
        )
    out.append(
        (
            "catalog sync after 1,000 appends",
            f"{f['sync_1000_s'] * 1000:.0f} ms",
            "<= 200 ms",
            "met" if f["sync_1000_s"] <= 0.2 else "NOT MET",
        )
    )
    for name in ("catalog all", "scan all"):
        e = f.get(f"export {name}")
        if e:
            out.append(
                (
                    f"`lore export --format jsonl`, every action ({name.split()[0]})",
                    f"{e['mb_per_s']:.1f} MB/s, peak RSS {e['peak_rss_mb']:.0f} MB",
                    "flat memory",
                    "-",
                )
            )
    return out


def rows(
    append: dict[str, Any], cold: dict[str, Any], resume: dict[str, Any]
) -> list[tuple[str, str, str, str]]:
    """(figure, measured, target, verdict) rows."""

    def ok(flag: bool) -> str:
        return "met" if flag else "NOT MET"

    out = [
        (
            "append, Lorebook.log, no fsync",
            f"{append['throughput']:,.0f} actions/s",
            ">= 20,000/s",
            ok(append["throughput"] >= 20_000),
        ),
        (
            "append, Lorebook.log, no secrets in the context",
            f"{append['throughput_plain']:,.0f} actions/s",
            ">= 20,000/s",
            ok(append["throughput_plain"] >= 20_000),
        ),
        ("append, Lorebook.log, fsync", f"{append['fsync_throughput']:,.0f} actions/s", "-", "-"),
    ]
    us = append["us_per_action"]
    out.append(
        (
            "append breakdown (µs/action)",
            f"build {us['build']:.1f}, sanitize {us['sanitize']:.1f}, "
            f"encode {us['encode']:.1f}, append {us['append']:.1f}; full {us['full']:.1f}",
            "-",
            "-",
        )
    )
    base = cold["stats"]["python -c pass"]["median_s"] * 1000
    for name in ("lore log (console script)", "python -m lorebook log"):
        stat = cold["stats"][name]
        out.append(
            (
                f"cold `{name}`",
                f"{stat['median_s'] * 1000:.1f} ms vs {base:.1f} ms = {stat['ratio']:.2f}x",
                "<= 3x",
                ok(stat["ratio"] <= 3.0),
            )
        )
    heavy = sorted(
        set(cold["importtime"]["heavy_console_script"]) | set(cold["importtime"]["heavy_module"])
    )
    out.append(("heavy imports on the log path", ", ".join(heavy) or "none", "none", ok(not heavy)))
    fig = resume["figures"]
    out.append(
        (
            "`lore resume --json`, 1M actions/730 d (git)",
            f"{fig['resume']['large_ms']:.1f} ms",
            "<= 300 ms",
            ok(fig["resume"]["large_ms"] <= 300),
        )
    )
    out.append(
        (
            "resume 1M vs 1k (git)",
            f"{fig['resume']['large_ms']:.1f} / "
            f"{fig['resume']['small_ms']:.1f} ms = {fig['resume']['ratio']:.2f}x",
            "<= 1.5x",
            ok(fig["resume"]["ratio"] <= 1.5),
        )
    )
    out.append(
        (
            "resume 1M vs 1k (no git)",
            f"{fig['resume_no_git']['large_ms']:.1f} / "
            f"{fig['resume_no_git']['small_ms']:.1f} ms = "
            f"{fig['resume_no_git']['ratio']:.2f}x",
            "-",
            "-",
        )
    )
    out.append(
        (
            "in-process Lorebook.resume(), 1M / 1k",
            f"{fig['in_process']['large']:.1f} / {fig['in_process']['small']:.1f} ms",
            "-",
            "-",
        )
    )
    q = fig["actions_query"]
    out.append(
        (
            "`lore actions --type deploy --outcome failure --since 30d --json`",
            f"{q['large_ms']:.1f} / {q['small_ms']:.1f} ms = {q['ratio']:.2f}x",
            "-",
            "-",
        )
    )
    return out


def learning_rows(learn: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """(figure, measured, target, verdict) rows of bench_learnings.py."""
    n, fig, part = learn["count"], learn["figures"], learn["parts"]
    return [
        (
            f"parse {n:,} learnings (read + split + YAML + model)",
            f"{fig['parse']:.2f} s = {fig['parse'] / n * 1e6:.0f} µs/file",
            "-",
            "-",
        ),
        (
            "  of which (µs/file)",
            ", ".join(f"{k} {v / n * 1e6:.0f}" for k, v in part.items()),
            "-",
            "-",
        ),
        (
            f"`LearningStore.all()`, {n:,} learnings, cold / warm parse cache",
            f"{fig['store_cold']:.2f} / {fig['store_warm']:.2f} s",
            "-",
            "-",
        ),
        (
            f"`lore learnings --json` cold / warm, `lore check`, {n:,} learnings",
            f"{learn['cli']['lore learnings --json (cold)']:.2f} / "
            f"{learn['cli']['lore learnings --json']:.2f} / {learn['cli']['lore check']:.2f} s",
            "-",
            "-",
        ),
        (
            "front matter: libyaml base vs ruamel safe",
            f"{learn['ruamel_ratio']:.1f}x faster",
            "-",
            "-",
        ),
    ]


def postgres(workdir: Path, out: Path, quick: bool) -> dict[str, Any] | None:
    """bench_vs_postgres.py's results, or None when it skipped (no PostgreSQL here)."""
    out.unlink(missing_ok=True)
    args = ["--workdir", str(workdir), "--actions", "100000" if quick else "1000000"]
    if quick:
        args += ["--runs", "7", "--inproc-runs", "7", "--bulk-runs", "1"]
    print(f"\n=== bench_vs_postgres.py {' '.join(args)}", flush=True)
    done = subprocess.run(
        [PYTHON, str(HERE / "bench_vs_postgres.py"), *args, "--json-out", str(out)], check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"bench_vs_postgres.py failed with exit status {done.returncode}")
    return dict(json.loads(out.read_text())) if out.exists() else None


def print_table(
    table: list[tuple[str, ...]],
    markdown: bool,
    headers: tuple[str, ...] = ("figure", "measured", "target", "verdict"),
) -> None:
    if markdown:
        print("| " + " | ".join(headers) + " |")
        print("|" + "---|" * len(headers))
        for row in table:
            print("| " + " | ".join(row) + " |")
        return
    widths = [max(len(h), *(len(r[i]) for r in table)) for i, h in enumerate(headers)]
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)))
    print("  ".join("-" * w for w in widths))
    for row in table:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))


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
        help="cache of generated stores and results (default: /tmp/lore-bench)",
    )
    parser.add_argument(
        "--quick", action="store_true", help="fewer runs everywhere (a smoke run, noisier figures)"
    )
    parser.add_argument("--markdown", action="store_true", help="print the summary as Markdown")
    parser.add_argument(
        "--postgres",
        action="store_true",
        help="also run bench_vs_postgres.py (needs PostgreSQL installed)",
    )
    args = parser.parse_args(argv)
    results = args.workdir / "results"
    results.mkdir(parents=True, exist_ok=True)
    quick = args.quick
    append = run(
        "bench_append.py",
        ["--actions", "5000" if quick else "20000", "--rounds", "3" if quick else "5"],
        results / "append.json",
    )
    cold = run("bench_cold_log.py", ["--runs", "10" if quick else "30"], results / "cold.json")
    resume = run(
        "bench_resume.py",
        [
            "--workdir",
            str(args.workdir),
            "--runs",
            "7" if quick else "21",
            "--query-runs",
            "3" if quick else "7",
        ],
        results / "resume.json",
    )
    learn = run(
        "bench_learnings.py",
        ["--workdir", str(args.workdir), "--count", "10000", "--rounds", "1" if quick else "3"],
        results / "learnings.json",
    )
    catalog = run(
        "bench_catalog.py",
        [
            "--workdir",
            str(args.workdir),
            "--runs",
            "3" if quick else "7",
            *(["--quick"] if quick else []),
        ],
        results / "catalog.json",
    )
    versus = postgres(args.workdir, results / "vs_postgres.json", quick) if args.postgres else None
    info = machine()
    head = subprocess.run(
        ["git", "-C", str(HERE.parent), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "-C", str(HERE.parent), "status", "--short", "--", "src"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.split("\n")
    dirty = [line[3:] for line in dirty if line.strip()]
    print(
        f"\n=== measured: commit {head or '?'}"
        f"{' + uncommitted changes in ' + ', '.join(dirty) if dirty else ''}"
    )
    print(
        f"\n=== summary ({info.get('cpu', '?')}, {info['nproc']} CPUs, "
        f"{info.get('ram_gib', '?')} GiB RAM, Python {info['python']}, "
        f"disk {info.get('disk', '?')})"
    )
    table = rows(append, cold, resume) + learning_rows(learn) + catalog_rows(catalog)
    print_table(table, args.markdown)
    missed = [r[0] for r in table if r[3] == "NOT MET"]
    print(f"\n{len(missed)} target(s) not met{': ' + '; '.join(missed) if missed else ''}")
    if versus:
        print("\n=== lorebook vs the seed's PostgreSQL design (medians, min-max; lorebook / PG)")
        print_table(
            [tuple(r) for r in versus["table"]],
            args.markdown,
            ("measurement", "lorebook", "PostgreSQL", "ratio"),
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
