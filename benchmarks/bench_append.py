"""In-process append throughput of `Lorebook.log(...)`, with a breakdown of where the time goes.

    .venv/bin/python benchmarks/bench_append.py [--actions 20000] [--rounds 5]

Every action carries a ~1 KB realistic context that the sanitizer must redact (a file list, a
commit message, a command line with a bearer token, nested params holding a database URL with a
password and an API key), is logged into one fixed session of a fresh store, and is appended
with the store's default durability (`flush`: no fsync). Rounds of the full path and of its
parts are interleaved and the medians reported:

* build     `action_record(...)` (argument checks, ULID, timestamp)
* sanitize  `LogWriter.redact(record)` (the sanitizer over every free-form field)
* encode    `encode(record)` (canonical JSON line)
* append    `append_line(path, line)` (open, flock, write, close)
* full      `Lorebook.log(...)` (all of the above)

Each part alone in a tight loop runs faster than inside the pipeline (warm caches and branch
predictors), so those parts never add up to the full path. The *pipeline* rows time each stage
inside one loop that runs them all in turn (build, redact, encode, append, publish to the event
bus: what `Lorebook.log` does, minus its argument passing), so they add up.

The same breakdowns are printed for the plain context (no secrets), and a *floor* for reference:
the same record built by hand (ULID, timestamp, literal dict), encoded by one reused
`json.JSONEncoder` and written with `os.write` to an already-open `O_APPEND` fd: no argument
checks, no sanitizer, no lock, no torn-tail check. It is what Python itself costs for the job.

`--baseline SRC` also times another version of lorebook in the same process, interleaved with
this one (before/after in one run): SRC is that version's `src` folder, e.g. from
`git archive <rev> src | tar -x -C /tmp/lore-before`; its package is loaded as
`lorebook_baseline` and logs into a store of its own.

`fsync` mode (`log.durability: fsync` in `.lore/config.yaml`) is measured on a second store with
fewer actions. Target: >= 20,000 actions/s in the default mode.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _common import idle_note, median, wait_for_idle, write_results

from lorebook import Lorebook
from lorebook.ids import new_ulid
from lorebook.log.writer import action_record, encode, shard_path
from lorebook.store import append_line
from lorebook.timeutil import format_ts, utcnow

TARGET = 20_000  # actions/s
SESSION = "bench-append-session"


def plain_contexts(count: int) -> list[dict[str, Any]]:
    """`count` distinct ~1 KB contexts without secrets: what most actions carry."""
    return [
        {
            "files": [f"src/app/module_{(i + k) % 97}/handler_{k}.py" for k in range(12)],
            "commit_hash": f"{(i * 2654435761) % (1 << 28):07x}",
            "branch": "feature/auth",
            "message": f"Fix token refresh race in the auth client (#{i})\n\n"
            "The refresh and the retry could both rotate the token; serialise them "
            "behind a lock and add a regression test.",
            "command": f"pytest -q tests/test_auth.py -k refresh_{i} --maxfail=1 --durations=5",
            "params": {
                "retries": 3,
                "timeout_s": 120,
                "labels": ["bench", "auth"],
                "dry_run": False,
            },
            "notes": "Reviewer asked to keep the public API unchanged; roll out after the freeze.",
        }
        for i in range(count)
    ]


def contexts(count: int) -> list[dict[str, Any]]:
    """`count` distinct ~1 KB contexts, each with secrets the sanitizer must catch."""
    out = []
    for i in range(count):
        out.append(
            {
                "files": [f"src/app/module_{(i + k) % 97}/handler_{k}.py" for k in range(12)],
                "commit_hash": f"{(i * 2654435761) % (1 << 28):07x}",
                "message": f"Fix token refresh race in the auth client (#{i})\n\n"
                "The refresh and the retry could both rotate the token; serialise them "
                "behind a lock and add a regression test.",
                "command": "curl -sS -H 'Authorization: Bearer "
                "ghp_R4nd0mT0k3nV4lu3F0rB3nchm4rk1ng0000' "
                f"https://api.github.com/repos/example/app/pulls/{i % 500}",
                "params": {
                    "env": {
                        "DATABASE_URL": "postgres://app:s3cr3t-p4ss@db.internal:5432/app",
                        "LOG_LEVEL": "info",
                        "REGION": "eu-west-1",
                    },
                    "api_key": "sk-live-0123456789abcdef0123456789abcdef",
                    "retries": 3,
                    "flags": ["--verbose", "--no-cache", f"--shard={i % 8}"],
                    "options": {"timeout_s": 120, "dry_run": False, "labels": ["bench", "auth"]},
                },
                "notes": "Reviewer asked to keep the public API unchanged; contact "
                "dev.lead@example.com for the rollout window.",
            }
        )
    return out


def store(workdir: Path, name: str, durability: str) -> Lorebook:
    root = workdir / name
    root.mkdir(parents=True)
    Lorebook.init(root)
    if durability == "fsync":
        (root / ".lore" / "config.yaml").write_text("log:\n  durability: fsync\n")
    book = Lorebook.open(root)
    assert book.writer.fsync == (durability == "fsync"), "config not applied"
    return book


def timed(fn: Callable[[int], Any], count: int) -> float:
    """Seconds for `fn(i)` over i in range(count)."""
    gc.collect()
    started = time.perf_counter()
    for i in range(count):
        fn(i)
    return time.perf_counter() - started


STAGES = ("build", "redact", "encode", "append", "publish")


def pipeline(
    book: Lorebook, ctxs: list[dict[str, Any]], log_kwargs: dict[str, Any], path: Path
) -> tuple[float, list[float]]:
    """Seconds for the whole loop, and per stage, of the append path run stage by stage."""
    writer = book.writer
    clock = time.perf_counter
    spent = [0.0] * len(STAGES)
    gc.collect()
    started = clock()
    for ctx in ctxs:
        t0 = clock()
        record = action_record("commit", context=ctx, **log_kwargs)
        t1 = clock()
        stored = writer.redact(record)
        t2 = clock()
        line = encode(stored)
        t3 = clock()
        append_line(path, line)
        t4 = clock()
        for listener in writer.listeners:
            listener(stored)
        t5 = clock()
        spent[0] += t1 - t0
        spent[1] += t2 - t1
        spent[2] += t3 - t2
        spent[3] += t4 - t3
        spent[4] += t5 - t4
    return clock() - started, spent


def load_baseline(src: Path, workdir: Path) -> Any:
    """The `Lorebook` class of the lorebook package under `src`, imported as
    `lorebook_baseline` (its imports are relative, so a renamed copy is independent)."""
    import importlib

    target = workdir / "baseline"
    shutil.copytree(src / "lorebook", target / "lorebook_baseline")
    sys.path.insert(0, str(target))
    return importlib.import_module("lorebook_baseline").Lorebook


def measure(
    workdir: Path,
    actions: int,
    rounds: int,
    fsync_actions: int,
    idle_wait: float = 20.0,
    baseline: Path | None = None,
) -> dict[str, Any]:
    book = store(workdir, "flush", "flush")
    sync_book = store(workdir, "fsync", "fsync")
    ctxs = contexts(actions)
    plain = plain_contexts(actions)
    log_kwargs = {"session": SESSION, "agent": "PS", "project": "bench", "epic": "epic-012"}

    def full(i: int) -> None:
        book.log("commit", context=ctxs[i], **log_kwargs)

    def full_plain(i: int) -> None:
        book.log("commit", context=plain[i], **log_kwargs)

    def full_fsync(i: int) -> None:
        sync_book.log("commit", context=ctxs[i], **log_kwargs)

    def build(i: int) -> dict[str, Any]:
        return action_record("commit", context=ctxs[i], **log_kwargs)

    def build_plain(i: int) -> dict[str, Any]:
        return action_record("commit", context=plain[i], **log_kwargs)

    floor_encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    floor_fd = os.open(workdir / "floor.jsonl", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def floor(i: int) -> None:
        record = {
            "v": 1,
            "kind": "action",
            "id": new_ulid(),
            "ts": format_ts(utcnow()),
            "session": SESSION,
            "agent": "PS",
            "project": "bench",
            "type": "commit",
            "category": "git",
            "outcome": "success",
            "context": plain[i],
            "error": None,
            "duration_s": None,
            "parent": None,
            "epic": "epic-012",
            "issue": None,
            "meta": {},
        }
        os.write(floor_fd, (floor_encoder.encode(record) + "\n").encode())

    built = [build(i) for i in range(actions)]
    redacted = [book.writer.redact(r) for r in built]
    lines = [encode(r) for r in redacted]
    built_plain = [build_plain(i) for i in range(actions)]
    redacted_plain = [book.writer.redact(r) for r in built_plain]
    lines_plain = [encode(r) for r in redacted_plain]
    scratch = Path(shard_path(book.layout.actionlog, built[0]["ts"], "bench-append-scratch"))
    parts: dict[str, Callable[[int], Any]] = {
        "full": full,
        "full_plain": full_plain,
        "floor": floor,
        "build": build,
        "sanitize": lambda i: book.writer.redact(built[i]),
        "encode": lambda i: encode(redacted[i]),
        "append": lambda i: append_line(scratch, lines[i]),
        "build_plain": build_plain,
        "sanitize_plain": lambda i: book.writer.redact(built_plain[i]),
        "encode_plain": lambda i: encode(redacted_plain[i]),
        "append_plain": lambda i: append_line(scratch, lines_plain[i]),
    }
    if baseline is not None:
        before_cls = load_baseline(baseline, workdir)
        (workdir / "before").mkdir()
        before_cls.init(workdir / "before")
        before = before_cls.open(workdir / "before")
        parts["before_full"] = lambda i: before.log("commit", context=ctxs[i], **log_kwargs)
        parts["before_full_plain"] = lambda i: before.log("commit", context=plain[i], **log_kwargs)
    seconds: dict[str, list[float]] = {name: [] for name in parts}
    fsync_seconds: list[float] = []
    piped: dict[str, list[tuple[float, list[float]]]] = {"secret": [], "plain": []}
    for _ in range(rounds):  # interleaved: every part once per round
        for name, fn in parts.items():
            wait_for_idle(timeout=idle_wait)
            seconds[name].append(timed(fn, actions))
        for label, cs in (("secret", ctxs), ("plain", plain)):
            wait_for_idle(timeout=idle_wait)
            piped[label].append(pipeline(book, cs, log_kwargs, scratch))
        wait_for_idle(timeout=idle_wait)
        fsync_seconds.append(timed(full_fsync, fsync_actions))
    os.close(floor_fd)
    sample = redacted[0]
    per_action = {name: median(v) / actions for name, v in seconds.items()}
    return {
        "actions_per_round": actions,
        "rounds": rounds,
        "fsync_actions_per_round": fsync_actions,
        "line_bytes": len(lines[0]),
        "context_bytes_before": len(encode(ctxs[0])),
        "redactions_per_action": sample["meta"].get("redactions", 0),
        "throughput": actions / median(seconds["full"]),
        "throughput_rounds": [actions / s for s in seconds["full"]],
        "throughput_plain": actions / median(seconds["full_plain"]),
        "throughput_floor": actions / median(seconds["floor"]),
        "throughput_before": (
            {k: actions / median(seconds[f"before_{k}"]) for k in ("full", "full_plain")}
            if baseline
            else None
        ),
        "plain_context_bytes": len(encode(plain[0])),
        "fsync_throughput": fsync_actions / median(fsync_seconds),
        "us_per_action": {name: v * 1e6 for name, v in per_action.items()},
        # the median round (by its total) of each pipeline, per stage
        "pipeline_us": {
            label: dict(
                zip(("total", *STAGES), (x * 1e6 / actions for x in (r[0], *r[1])), strict=True)
            )
            for label, runs in piped.items()
            for r in [sorted(runs)[len(runs) // 2]]
        },
        "sample_context": sample["context"],
    }


def report(res: dict[str, Any]) -> None:
    us = res["us_per_action"]
    print(
        f"append throughput, {res['actions_per_round']:,} actions x {res['rounds']} rounds "
        f"(interleaved), line {res['line_bytes']} B (context {res['context_bytes_before']} B "
        f"before redaction, {res['redactions_per_action']} redactions/action)"
    )
    print(
        f"  Lorebook.log, durability=flush : {res['throughput']:>10,.0f} actions/s "
        f"(median; rounds {', '.join(f'{t:,.0f}' for t in res['throughput_rounds'])})"
    )
    print(
        f"  same, ~1 KB context, no secrets: {res['throughput_plain']:>10,.0f} actions/s "
        f"(context {res['plain_context_bytes']} B)"
    )
    print(
        f"  floor (hand-built, no checks)  : {res['throughput_floor']:>10,.0f} actions/s "
        f"(plain context; full plain path = {us['full_plain'] / us['floor']:.2f}x the floor)"
    )
    if res["throughput_before"]:
        before = res["throughput_before"]
        print(
            f"  baseline (--baseline), secrets : {before['full']:>10,.0f} actions/s "
            f"(this version {res['throughput'] / before['full']:.2f}x)"
        )
        print(
            f"  baseline (--baseline), plain   : {before['full_plain']:>10,.0f} actions/s "
            f"(this version {res['throughput_plain'] / before['full_plain']:.2f}x; baseline "
            f"{us['before_full_plain'] / us['floor']:.2f}x the floor)"
        )
    print(
        f"  Lorebook.log, durability=fsync : {res['fsync_throughput']:>10,.0f} actions/s "
        f"({res['fsync_actions_per_round']} actions/round)"
    )
    for label, key in (("secret-heavy", "throughput"), ("plain", "throughput_plain")):
        print(
            f"  target >= {TARGET:,}/s, {label:<12}: "
            f"{'MET' if res[key] >= TARGET else 'NOT MET'} ({res[key] / TARGET:.2f}x the target)"
        )
    for label, suffix, full in (("secret-heavy", "", "full"), ("plain", "_plain", "full_plain")):
        print(f"  breakdown, {label} context (median µs per action; parts measured separately):")
        names = [n + suffix for n in ("build", "sanitize", "encode", "append")]
        for name in names:
            print(
                f"    {name.removesuffix(suffix):<9} {us[name]:8.1f} µs  "
                f"{us[name] / us[full] * 100:5.1f} % of full"
            )
        parts = sum(us[n] for n in names)
        print(
            f"    {'sum':<9} {parts:8.1f} µs   vs full {us[full]:.1f} µs "
            f"(rest: {us[full] - parts:.1f} µs)"
        )
    print(f"    {'floor':<9} {us['floor']:8.1f} µs   (reference, plain context)")
    for label, name in (("secret-heavy", "secret"), ("plain", "plain")):
        pipe = res["pipeline_us"][name]
        stages = "  ".join(f"{stage} {pipe[stage]:.1f}" for stage in STAGES)
        print(
            f"  pipeline, {label:<12} (µs, stages timed in one loop): {stages}  "
            f"-> {pipe['total']:.1f} µs/action, {1e6 / pipe['total']:,.0f}/s"
        )
    print(f"  redacted context: {res['sample_context']}")
    print(f"  {idle_note()}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n\n".join(__doc__.split("\n\n")[1:]),
    )
    parser.add_argument("--actions", type=int, default=20_000, help="actions per round")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (median)")
    parser.add_argument(
        "--fsync-actions", type=int, default=300, help="actions per round in fsync mode"
    )
    parser.add_argument(
        "--idle-wait",
        type=float,
        default=20.0,
        help="seconds to wait for idle CPUs before each part (0: do not wait)",
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        default=None,
        metavar="SRC",
        help="also time the lorebook package in SRC/lorebook (before/after)",
    )
    parser.add_argument(
        "--workdir",
        type=Path,
        default=None,
        help="where the throwaway stores go (default: a temp dir)",
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="also print a cProfile of the full path (top 20 by tottime)",
    )
    parser.add_argument("--json-out", help="write the results as JSON here")
    args = parser.parse_args(argv)
    base = Path(tempfile.mkdtemp(prefix="lore-append-", dir=args.workdir))
    try:
        res = measure(
            base, args.actions, args.rounds, args.fsync_actions, args.idle_wait, args.baseline
        )
        report(res)
        if args.profile:
            import cProfile
            import pstats

            book = Lorebook.open(base / "flush")
            ctxs = contexts(2000)
            sanitizer = book.writer.sanitizer
            print("sanitize time per context field (median of 3 passes over 2,000 contexts):")
            for key in ctxs[0]:
                passes = [
                    timed(
                        lambda i, k=key: sanitizer.sanitize(ctxs[i][k], f"context.{k}"), len(ctxs)
                    )
                    for _ in range(3)
                ]
                print(
                    f"  {key:<12} {median(passes) / len(ctxs) * 1e6:8.1f} µs  "
                    f"({len(encode(ctxs[0][key])) - 1} bytes)"
                )
            profiler = cProfile.Profile()
            profiler.enable()
            for ctx in ctxs:
                book.log("commit", session=SESSION, agent="PS", project="bench", context=ctx)
            profiler.disable()
            pstats.Stats(profiler, stream=sys.stdout).sort_stats("tottime").print_stats(20)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    res.pop("sample_context", None)
    write_results(
        args.json_out,
        "append",
        {
            **res,
            "target": TARGET,
            "met": res["throughput"] >= TARGET,
            "met_plain": res["throughput_plain"] >= TARGET,
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
