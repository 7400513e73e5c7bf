"""`lore resume --json` on two years / 1,000,000 actions against a 1,000-action store.

    .venv/bin/python benchmarks/bench_resume.py [--workdir /tmp/lore-bench] [--runs 21]

Both stores are made by `generate_store.py` (same seed, same end date: today) and cached under
`--workdir`; each is then made a git repository with its whole log committed, as a real
project's would be (`--no-git` skips that). Measured, interleaved between the two stores,
medians of `--runs`:

* `lore resume --json` through the console script (the real CLI, a fresh process each time),
  in the git repository and with git unavailable (`GIT_DIR` pointing nowhere), so the cost of
  `git status` on a repository holding every shard shows on its own;
* `lore actions --type deploy --outcome failure --since 30d --json` (default limit 50);
* in-process `Lorebook.resume()` and its parts: `find_candidates` (tails of the newest day's
  shards), `session_records` (the chosen session's own shards), `git_state` (two git
  subprocesses), plus a cProfile of one in-process resume on the large store;
* `python -X importtime -m lorebook resume --json`: what the resume path imports.

Targets: resume on the large store <= 300 ms, and <= 1.5x the small store's.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import shutil
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from _common import (
    HERE,
    PYTHON,
    clean_env,
    heavy_imports,
    idle_note,
    importtime_profile,
    interleaved,
    lore_script,
    median,
    pct,
    wait_for_idle,
    write_results,
)

TARGET_MS = 300.0
TARGET_RATIO = 1.5
ACTIONS_ARGS = ["actions", "--type", "deploy", "--outcome", "failure", "--since", "30d", "--json"]


def git(root: Path, *args: str) -> None:
    env = clean_env(
        GIT_AUTHOR_NAME="bench",
        GIT_AUTHOR_EMAIL="bench@example.invalid",
        GIT_COMMITTER_NAME="bench",
        GIT_COMMITTER_EMAIL="bench@example.invalid",
    )
    subprocess.run(["git", "-C", str(root), *args], check=True, env=env, capture_output=True)


def ensure_store(
    workdir: Path, actions: int, days: int, seed: int, end: str, use_git: bool
) -> tuple[Path, dict[str, Any]]:
    """The cached store for these parameters (generated, then committed to git, if missing)."""
    root = workdir / f"store-{actions}a-{days}d-s{seed}-{end}"
    summary_file = root / ".lore" / "cache" / "bench-store.json"
    if root.exists() and not summary_file.exists():
        print(f"  removing incomplete store {root}", flush=True)
        shutil.rmtree(root)
    if not root.exists():
        print(f"  generating {actions:,} actions over {days} days -> {root}", flush=True)
        cmd = [
            PYTHON,
            str(HERE / "generate_store.py"),
            str(root),
            "--actions",
            str(actions),
            "--days",
            str(days),
            "--seed",
            str(seed),
            "--end",
            end,
        ]
        done = subprocess.run(cmd, check=True, capture_output=True, text=True)
        print("  " + done.stdout.strip(), flush=True)
    summary = json.loads(summary_file.read_text())
    committed = root / ".git" / "bench-committed"
    if use_git and not committed.exists():
        started = time.perf_counter()
        shutil.rmtree(root / ".git", ignore_errors=True)
        git(root, "init", "-q", "-b", "main")
        git(root, "config", "gc.auto", "0")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "lore: action log")
        committed.write_text("yes\n")
        print(
            f"  committed {root.name} to git in {time.perf_counter() - started:.1f} s", flush=True
        )
    summary["shards"] = sum(1 for _ in root.glob("actionlog/*/*/*/*.jsonl"))
    summary["day_dirs"] = sum(1 for _ in root.glob("actionlog/*/*/*"))
    return root, summary


def cli_runs(
    variants: dict[str, tuple[Path, list[str], dict[str, str]]],
    runs: int,
    with_baseline: bool = False,
) -> dict[str, list[float]]:
    """Interleaved `lore ARGS` runs: name -> (store, args, extra env); LORE_ROOT selects the
    store. With `with_baseline`, `python -c pass` runs in the same rounds."""
    script = str(lore_script())
    commands: dict[str, list[str]] = {}
    envs: dict[str, dict[str, str]] = {}
    if with_baseline:
        commands["python -c pass"] = [PYTHON, "-c", "pass"]
        envs["python -c pass"] = clean_env()
    for name, (root, args, extra) in variants.items():
        commands[name] = [script, *args]
        envs[name] = clean_env(LORE_ROOT=str(root), **extra)
    return interleaved(commands, runs, envs=envs)


def in_process(root: Path, repeats: int) -> dict[str, Any]:
    """`Lorebook.resume()` and its parts, in one process (imports and start-up excluded)."""
    from lorebook import Lorebook
    from lorebook.git.binary import git_state
    from lorebook.log.reader import day_dirs, iter_records
    from lorebook.log.resume import choose, find_candidates, session_records
    from lorebook.timeutil import format_ts, horizon, utcnow

    book = Lorebook.open(root, env={})
    actionlog = book.layout.actionlog
    book.resume()  # warm-up
    totals, finds, reads, gits = [], [], [], []
    for _ in range(repeats):
        wait_for_idle()
        t0 = time.perf_counter()
        book.resume()
        t1 = time.perf_counter()
        candidates = find_candidates(actionlog, project=None, agent=None, limit=50)
        t2 = time.perf_counter()
        chosen = choose(candidates, horizon(utcnow()))
        assert chosen is not None
        session_records(actionlog, chosen.session, base=root, last_day=chosen.day)
        t3 = time.perf_counter()
        try:  # as resume runs it: the action log left out of `git status`, where supported
            git_state(root, exclude=(book.layout.rel(actionlog),))
        except TypeError:
            git_state(root)
        t4 = time.perf_counter()
        totals.append(t1 - t0)
        finds.append(t2 - t1)
        reads.append(t3 - t2)
        gits.append(t4 - t3)
    state = book.resume()
    day_listing = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        day_dirs(actionlog)
        day_listing.append(time.perf_counter() - t0)
    since = format_ts(utcnow() - timedelta(days=30))
    query = []
    for _ in range(max(3, repeats // 4)):
        wait_for_idle()
        t0 = time.perf_counter()
        rows = book.actions(type="deploy", outcome="failure", since=since)
        query.append(time.perf_counter() - t0)
    scanned = 0
    oldest = rows[-1]["ts"] if rows else since
    for _ in iter_records(actionlog, since=oldest, newest_first=True):
        scanned += 1
    return {
        "day_dirs_s": median(day_listing),
        "actions_query_s": median(query),
        "actions_query_scanned": scanned,
        "resume_s": median(totals),
        "find_candidates_s": median(finds),
        "session_records_s": median(reads),
        "git_state_s": median(gits),
        "chosen": {
            k: state["session"][k]
            for k in ("id", "project", "agent", "status", "action_count", "end_reason")
        },
        "work_in_progress": state["work_in_progress"],
        "open_actions": len(state["open_actions"]),
    }


def profile(root: Path, what: str, sort: str, lines_shown: int = 18) -> str:
    """cProfile of 5 in-process calls of `what` (resume | query) on the store at `root`."""
    from lorebook import Lorebook
    from lorebook.timeutil import format_ts, utcnow

    book = Lorebook.open(root, env={})
    since = format_ts(utcnow() - timedelta(days=30))

    def call() -> None:
        if what == "resume":
            book.resume()
        else:
            book.actions(type="deploy", outcome="failure", since=since)

    call()
    wait_for_idle()
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(5):
        call()
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats(sort).print_stats(lines_shown)
    lines = [line for line in out.getvalue().splitlines() if line.strip()]
    start = next(i for i, line in enumerate(lines) if "ncalls" in line)
    return "\n".join(lines[start - 1 :])


def stat(times: list[float]) -> dict[str, float]:
    return {"median_s": median(times), "p10_s": pct(times, 0.1), "p90_s": pct(times, 0.9)}


def measure(args: argparse.Namespace) -> dict[str, Any]:
    workdir: Path = args.workdir
    workdir.mkdir(parents=True, exist_ok=True)
    print("stores:", flush=True)
    big, big_info = ensure_store(
        workdir, args.big_actions, args.big_days, args.seed, args.end, args.git
    )
    small, small_info = ensure_store(
        workdir, args.small_actions, args.small_days, args.seed, args.end, args.git
    )
    stores = {"large": big, "small": small}
    print(
        f"  large: {big_info['actions']:,} actions, {big_info['sessions']:,} sessions, "
        f"{big_info['shards']:,} shards in {big_info['day_dirs']} day dirs, "
        f"{big_info['bytes'] / 1e6:,.0f} MB",
        flush=True,
    )
    print(
        f"  small: {small_info['actions']:,} actions, {small_info['sessions']:,} sessions, "
        f"{small_info['shards']:,} shards in {small_info['day_dirs']} day dirs",
        flush=True,
    )

    # sanity: the CLI answers, and both answers are real resumes
    for name, root in stores.items():
        done = subprocess.run(
            [str(lore_script()), "resume", "--json"],
            capture_output=True,
            env=clean_env(LORE_ROOT=str(root)),
            check=True,
        )
        state = json.loads(done.stdout)
        print(
            f"  {name}: resumes session {state['session']['id']} "
            f"({state['session']['project']}/{state['session']['agent']}, "
            f"{state['session']['status']}, {state['session']['action_count']} actions): "
            f"{state['work_in_progress']}",
            flush=True,
        )

    print(
        f"timing `lore resume --json` ({args.runs} runs each, interleaved: large, small, with "
        "and without git, and python -c pass)...",
        flush=True,
    )
    no_git = {"GIT_DIR": str(workdir / "no-such-git-dir")}
    variants = {}
    for name, root in stores.items():
        variants[name] = (root, ["resume", "--json"], {})
        variants[f"{name}, no git"] = (root, ["resume", "--json"], no_git)
    timed = cli_runs(variants, args.runs, with_baseline=True)
    resume = {name: timed[name] for name in stores}
    resume_nogit = {name: timed[f"{name}, no git"] for name in stores}
    print(f"timing `lore {' '.join(ACTIONS_ARGS)}` ({args.query_runs} runs each)...", flush=True)
    actions = cli_runs(
        {name: (root, ACTIONS_ARGS, {}) for name, root in stores.items()}, args.query_runs
    )
    found = {}
    for name, root in stores.items():
        done = subprocess.run(
            [str(lore_script()), *ACTIONS_ARGS],
            capture_output=True,
            env=clean_env(LORE_ROOT=str(root)),
            check=True,
        )
        rows = json.loads(done.stdout)
        found[name] = {"rows": len(rows), "oldest": rows[-1]["ts"] if rows else None}
    baseline = {"python -c pass": timed["python -c pass"]}
    print("in-process Lorebook.resume()...", flush=True)
    inproc = {name: in_process(root, args.inproc_runs) for name, root in stores.items()}
    profiles = {
        "resume": profile(big, "resume", "cumulative"),
        "query": profile(big, "query", "tottime", 12),
    }
    imports = importtime_profile(
        ["-m", "lorebook", "resume", "--json"], env=clean_env(LORE_ROOT=str(small))
    )
    base_imports = importtime_profile(["-c", "pass"])
    extra = [m for m in imports["modules"] if m not in base_imports["modules"]]
    top_level = sorted(
        ((imports["cumulative_us"][m], m) for m in extra if imports["depth"].get(m, 0) == 0),
        reverse=True,
    )[:10]
    return {
        "stores": {"large": big_info, "small": small_info},
        "resume": {k: stat(v) for k, v in resume.items()},
        "resume_no_git": {k: stat(v) for k, v in resume_nogit.items()},
        "actions_query": {k: stat(v) for k, v in actions.items()},
        "actions_found": found,
        "python_c_pass": stat(baseline["python -c pass"]),
        "in_process": inproc,
        "profile": profiles,
        "imports": {
            "extra_modules": len(extra),
            "extra_self_us": sum(imports["self_us"][m] for m in extra),
            "top_level": top_level,
            "heavy": heavy_imports(imports["modules"]),
        },
        "runs": args.runs,
        "query_runs": args.query_runs,
    }


def ms(value: float) -> str:
    return f"{value * 1000:7.1f} ms"


def report(res: dict[str, Any]) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    print()
    print(
        f"`lore resume --json`, medians of {res['runs']} (p10-p90); python -c pass "
        f"{ms(res['python_c_pass']['median_s'])}"
    )
    for label, key in (("git repo", "resume"), ("no git", "resume_no_git")):
        large, small = res[key]["large"], res[key]["small"]
        ratio = large["median_s"] / small["median_s"]
        figures[key] = {
            "large_ms": large["median_s"] * 1000,
            "small_ms": small["median_s"] * 1000,
            "ratio": ratio,
        }
        print(
            f"  {label:<9} large {ms(large['median_s'])} ({large['p10_s'] * 1000:.0f}-"
            f"{large['p90_s'] * 1000:.0f})  small {ms(small['median_s'])} "
            f"({small['p10_s'] * 1000:.0f}-{small['p90_s'] * 1000:.0f})  ratio {ratio:.2f}x"
        )
    main_fig = figures["resume"]
    print(
        f"  target large <= {TARGET_MS:.0f} ms: "
        f"{'MET' if main_fig['large_ms'] <= TARGET_MS else 'NOT MET'} "
        f"({main_fig['large_ms']:.0f} ms); target ratio <= {TARGET_RATIO}x: "
        f"{'MET' if main_fig['ratio'] <= TARGET_RATIO else 'NOT MET'} "
        f"({main_fig['ratio']:.2f}x)"
    )
    large, small = res["actions_query"]["large"], res["actions_query"]["small"]
    ratio = large["median_s"] / small["median_s"]
    figures["actions_query"] = {
        "large_ms": large["median_s"] * 1000,
        "small_ms": small["median_s"] * 1000,
        "ratio": ratio,
    }
    print(f"`lore {' '.join(ACTIONS_ARGS)}`, medians of {res['query_runs']}:")
    print(
        f"  large {ms(large['median_s'])} ({res['actions_found']['large']['rows']} rows, "
        f"oldest {res['actions_found']['large']['oldest']})  small {ms(small['median_s'])} "
        f"({res['actions_found']['small']['rows']} rows)  ratio {ratio:.2f}x"
    )
    print("in-process Lorebook.resume() (median; parts timed separately):")
    for name, r in res["in_process"].items():
        print(
            f"  {name:<6} resume {ms(r['resume_s'])} = find_candidates "
            f"{ms(r['find_candidates_s'])} + session_records {ms(r['session_records_s'])} "
            f"+ git_state {ms(r['git_state_s'])} (+ analysis; git runs while the shards are "
            f"read); listing every day directory (day_dirs) would cost {ms(r['day_dirs_s'])}"
        )
    for name, r in res["in_process"].items():
        print(
            f"  {name:<6} actions query in-process {ms(r['actions_query_s'])}, "
            f"{r['actions_query_scanned']:,} records read and validated"
        )
    figures["in_process"] = {n: r["resume_s"] * 1000 for n, r in res["in_process"].items()}
    figures["in_process_query"] = {
        n: r["actions_query_s"] * 1000 for n, r in res["in_process"].items()
    }
    chosen = res["in_process"]["large"]["chosen"]
    print(
        f"  large store resumes {chosen['id']} ({chosen['status']}, "
        f"{chosen['action_count']} actions, {res['in_process']['large']['open_actions']} "
        f"open): {res['in_process']['large']['work_in_progress']}"
    )
    imp = res["imports"]
    print(
        f"`python -m lorebook resume --json` imports {imp['extra_modules']} modules beyond "
        f"`-c pass` ({imp['extra_self_us'] / 1000:.1f} ms); top-level by cumulative:"
    )
    for us, module in imp["top_level"]:
        print(f"    {us / 1000:6.2f} ms  {module}")
    print(f"  heavy modules on the resume path: {', '.join(imp['heavy']) or 'none'}")
    print("cProfile, 5 in-process resumes on the large store (by cumulative time):")
    print(res["profile"]["resume"])
    print("cProfile, 5 in-process actions queries on the large store (by own time):")
    print(res["profile"]["query"])
    print(idle_note())
    return figures


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
        help="where the generated stores are cached (default: /tmp/lore-bench)",
    )
    parser.add_argument("--runs", type=int, default=21, help="timed CLI runs per store")
    parser.add_argument(
        "--query-runs", type=int, default=7, help="timed `lore actions` runs per store"
    )
    parser.add_argument(
        "--inproc-runs", type=int, default=20, help="in-process resume() calls per store"
    )
    parser.add_argument("--big-actions", type=int, default=1_000_000)
    parser.add_argument("--big-days", type=int, default=730)
    parser.add_argument("--small-actions", type=int, default=1000)
    parser.add_argument("--small-days", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--end",
        default=datetime.now(UTC).strftime("%Y-%m-%d"),
        help="end date of both histories (default: today)",
    )
    parser.add_argument(
        "--no-git", dest="git", action="store_false", help="do not make the stores git repositories"
    )
    parser.add_argument("--json-out", help="write the results as JSON here")
    args = parser.parse_args(argv)
    res = measure(args)
    figures = report(res)
    main_fig = figures["resume"]
    write_results(
        args.json_out,
        "resume",
        {
            **res,
            "figures": figures,
            "target_ms": TARGET_MS,
            "target_ratio": TARGET_RATIO,
            "met_ms": main_fig["large_ms"] <= TARGET_MS,
            "met_ratio": main_fig["ratio"] <= TARGET_RATIO,
            "cpus": os.cpu_count(),
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
