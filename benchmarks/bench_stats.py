"""`lore stats` on a large history: application and pattern figures derived from the log.

    .venv/bin/python benchmarks/bench_stats.py [--workdir /tmp/lore-bench] [--runs 3]
        [--learnings 200] [--events 5000] [--from-store DIR]

A 1,000,000-action store from `generate_store.py` (hard-linked from `--from-store` when given,
e.g. the store `bench_resume.py` caches, so its shards are shared, never modified), plus
`--learnings` learnings (half of them patterns with two solutions) and `--events`
`apply_learning` / `occurrence` actions logged through `Lorebook.log` over the last 60 days,
in a session of their own. A 1,000-action store gets the same learnings and events.

Measured, interleaved, medians of `--runs`:

* scan      `iter_records` over the whole log (what any uncached full read costs)
* figures   in-process `book.knowledge.figures()` (two type-filtered queries)
* stats ID  `lore stats <pattern id> --json`, a fresh process
* stats     `lore stats --json`, a fresh process (every learning file parsed too)
* log ok / log failed   `lore log validate --outcome success|failure --epic …`: an ordinary
            append against one that wakes the knowledge gate, which counts the epic's failed
            validations over `drafts.validate_lookback_days` (the threshold is set out of reach)

The counts come from `Lorebook.iter_actions(ActionFilter(type=...))`; until the action catalog
(the audit work) backs that query, every call reads the whole log, so `stats ID` costs about
two full scans. With the catalog it becomes an index lookup: re-run this benchmark then.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from _common import (
    clean_env,
    fmt_ms,
    idle_note,
    interleaved,
    lore_script,
    median,
    wait_for_idle,
    write_results,
)
from generate_store import generate, parse_end

from lorebook import Lorebook
from lorebook.log.reader import iter_records

SESSION = "bench-stats"


def hardlink_copy(source: Path, target: Path) -> None:
    """A copy whose shard files are hard links: nothing in `source` is ever written (new
    records go to new shard files; the config and cache are replaced, never edited)."""
    shutil.copytree(source, target, copy_function=os.link, ignore=shutil.ignore_patterns(".git"))


def build(root: Path, actions: int, days: int, end: datetime, source: Path | None) -> None:
    if root.exists():
        return
    if source is not None:
        hardlink_copy(source, root)
    else:
        generate(root, actions, days, 1, end, os.cpu_count() or 1)


def seed_knowledge(root: Path, learnings: int, events: int, end: datetime) -> str:
    """Learnings and logged events (once per store); returns a pattern id to query."""
    marker = root / ".lore" / "cache" / f"bench-stats-{learnings}-{events}.txt"
    if marker.exists():
        return marker.read_text().strip()
    # count failed validations as usual, but never reach the threshold while measuring
    (root / ".lore" / "config.yaml").write_text("drafts:\n  validate_failures: 1000000\n")
    book = Lorebook.open(root, env={})
    ids, patterns = [], []
    for i in range(learnings):
        if i % 2:
            made = book.knowledge.new_pattern(
                title=f"Pattern {i}: port conflict on deploy variant {i}",
                solutions=[f"Ask the registry ({i})", f"Stop the stale container ({i})"],
                prevention=["Never hard-code ports"],
                publish=True,
            )
            patterns.append(made.id)
        else:
            made = book.learnings.new(title=f"Lesson {i}: rotate refresh tokens", publish=True)
        ids.append(made.id)
    rng = random.Random(7)
    for n in range(events):
        moment = end - timedelta(minutes=rng.randrange(60 * 24 * 60))
        if n % 2 and patterns:
            book.log(
                "occurrence",
                session=SESSION,
                now=moment,
                outcome="success" if rng.random() < 0.8 else "failure",
                context={
                    "learning": rng.choice(patterns),
                    "solution": rng.choice(["s1", "s2"]),
                    "minutes": rng.randrange(1, 90),
                    "via_search": rng.random() < 0.5,
                },
            )
        else:
            book.log(
                "apply_learning",
                session=SESSION,
                now=moment,
                outcome="success" if rng.random() < 0.7 else "failure",
                context={"learning": rng.choice(ids)},
            )
    marker.write_text(patterns[0] + "\n")
    return patterns[0]


def in_process(root: Path, runs: int) -> dict[str, list[float]]:
    book = Lorebook.open(root, env={})
    times: dict[str, list[float]] = {"scan": [], "figures": []}
    for round_ in range(runs):
        wait_for_idle()
        order = ["scan", "figures"] if round_ % 2 == 0 else ["figures", "scan"]
        for name in order:
            started = time.perf_counter()
            if name == "scan":
                sum(1 for _ in iter_records(book.layout.actionlog))
            else:
                book.knowledge.figures()
            times[name].append(time.perf_counter() - started)
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/lore-bench"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--learnings", type=int, default=200)
    parser.add_argument("--events", type=int, default=5000)
    parser.add_argument("--actions", type=int, default=1_000_000)
    parser.add_argument("--from-store", type=Path, help="a generated 1M store to hard-link")
    parser.add_argument("--json-out")
    args = parser.parse_args(argv)
    end = parse_end(None)
    day = end.strftime("%Y-%m-%d")
    stores = {
        "large": (
            args.workdir / f"stats-{args.actions}a-730d-{day}",
            args.actions,
            730,
            args.from_store,
        ),
        "small": (args.workdir / f"stats-1000a-1d-{day}", 1000, 1, None),
    }
    lore = str(lore_script())
    results: dict[str, Any] = {"learnings": args.learnings, "events": args.events}
    for name, (root, actions, days, source) in stores.items():
        started = time.perf_counter()
        build(root, actions, days, end, source)
        pattern = seed_knowledge(root, args.learnings, args.events, end)
        setup = time.perf_counter() - started
        inproc = in_process(root, args.runs)
        env = clean_env(LORE_ROOT=str(root))
        log = [lore, "log", "validate", "--epic", "epic-bench", "--session", SESSION]
        cold = interleaved(
            {
                "stats ID": [lore, "stats", pattern, "--json"],
                "stats": [lore, "stats", "--json"],
                "log ok": [*log, "--outcome", "success"],
                "log failed": [*log, "--outcome", "failure"],
            },
            args.runs,
            env=env,
        )
        figures = {k: median(v) for k, v in {**inproc, **cold}.items()}
        results[name] = {
            "root": str(root),
            "actions": actions,
            "setup_s": round(setup, 1),
            **{k: round(v, 4) for k, v in figures.items()},
        }
        print(
            f"{name} store: {actions:,} actions + {args.events:,} events, "
            f"{args.learnings} learnings (setup {setup:.0f} s)"
        )
        for key, value in figures.items():
            print(f"  {key:<10} {fmt_ms(value):>12}")
    large, small = results["large"], results["small"]
    print(
        f"stats ID, large / small: {large['stats ID'] / small['stats ID']:.1f}x; "
        f"figures / one full scan: {large['figures'] / large['scan']:.2f}x"
    )
    print(
        "`lore stats ID` reads the log through Lorebook.iter_actions(type=...): until the "
        "action catalog backs that query it is a full scan per type."
    )
    print(idle_note())
    write_results(args.json_out, "stats", results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
