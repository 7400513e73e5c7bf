"""Cold `lore stale` and `lore history <id>`: the review commands that talk to git.

    .venv/bin/python benchmarks/bench_review.py [--learnings 20] [--runs 15] [--baseline SRC]

A store is built in a real git repository: `--learnings` published learnings, each anchored to
a source file (half of them as `path#symbol`), committed, then `--commits` later commits that
edit the anchored files (some mention a symbol), so `lore stale` has history to walk (and
exits 1: it found stale learnings). The
commands run cold (a new process each), interleaved with `python -c pass`, after one untimed
warm-up (bytecode cached outside the tree, as on an installed machine). Wall time and CPU time
(user + system of the process and the git processes it ran) are reported: on a shared machine
the CPU time is the steadier figure.

`--baseline SRC` also times both commands from another version's `src` folder (e.g.
`git worktree add --detach /tmp/before <rev>`, then `--baseline /tmp/before/src`), interleaved
with this one in the same rounds: before/after as a paired ratio.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import (
    PYTHON,
    clean_env,
    idle_note,
    median,
    pct,
    wait_for_idle,
    write_results,
)

LEARNING = """---
id: {id}
title: Lesson {n} about module {n}
kind: lesson
category: testing
severity: medium
tags: [bench]
status: published
created: 2026-01-01
anchors: [{anchor}]
---
## Problem
Module {n} misbehaves.

## Key Takeaway
Check module {n} first.
"""


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def build_store(root: Path, learnings: int, commits: int) -> str:
    """A git repository with anchored learnings and later commits; the first learning's id."""
    from lorebook import Lorebook

    root.mkdir(parents=True)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "config", "user.name", "Bench")
    _git(root, "config", "user.email", "bench@example.invalid")
    Lorebook.init(root)
    (root / "src").mkdir()
    ids = []
    for n in range(learnings):
        (root / "src" / f"mod{n}.py").write_text(f"def symbol_{n}():\n    return {n}\n")
        anchor = f"src/mod{n}.py#symbol_{n}" if n % 2 else f"src/mod{n}.py"
        lid = f"2026-01-01-lesson-{n:04d}"
        ids.append(lid)
        (root / "learnings" / f"{lid}.md").write_text(LEARNING.format(id=lid, n=n, anchor=anchor))
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "learnings")
    for c in range(commits):
        n = c % max(learnings, 1)
        path = root / "src" / f"mod{n}.py"
        extra = f"# symbol_{n} revisited\n" if c % 3 == 0 else f"x_{c} = {c}\n"
        path.write_text(path.read_text() + extra)
        _git(root, "commit", "-q", "-am", f"edit mod{n} ({c})")
    return ids[0]


def _cpu_of_children() -> float:
    """User + system CPU seconds of every child reaped so far (git processes included, which
    the measured process reaps): under load, the figure that waiting does not inflate."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def rounds(
    commands: dict[str, list[str]], runs: int, cwd: Path, envs: dict[str, dict[str, str]]
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Wall and CPU seconds per command, `runs` rounds, the order rotated every round, after one
    untimed warm-up. `lore stale` exits 1 when it finds stale learnings: exit codes are not
    checked here (the outputs are, before)."""
    names = list(commands)
    for name in names:
        subprocess.run(commands[name], cwd=cwd, env=envs[name], capture_output=True, check=False)
    wall: dict[str, list[float]] = {name: [] for name in names}
    cpu: dict[str, list[float]] = {name: [] for name in names}
    for round_ in range(runs):
        wait_for_idle()
        shift = round_ % len(names)
        for name in names[shift:] + names[:shift]:
            cpu_before, started = _cpu_of_children(), time.perf_counter()
            subprocess.run(
                commands[name], cwd=cwd, env=envs[name], capture_output=True, check=False
            )
            wall[name].append(time.perf_counter() - started)
            cpu[name].append(_cpu_of_children() - cpu_before)
    return wall, cpu


BASELINE = " (baseline)"


def measure(
    learnings: int, commits: int, runs: int, workdir: Path | None, baseline: Path | None
) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="lore-review-", dir=workdir))
    try:
        root = tmp / "store"
        first = build_store(root, learnings, commits)
        commands = {
            "python -c pass": [PYTHON, "-c", "pass"],
            "lore stale": [PYTHON, "-m", "lorebook", "stale", "--json"],
            "lore history": [PYTHON, "-m", "lorebook", "history", first, "--json"],
        }
        envs: dict[str, dict[str, str]] = {}
        if baseline is not None:
            for name in ("lore stale", "lore history"):
                commands[name + BASELINE] = commands[name]
                envs[name + BASELINE] = clean_env(PYTHONPATH=str(baseline.resolve()))
        outputs = {}
        for name, cmd in list(commands.items())[1:]:
            done = subprocess.run(
                cmd, cwd=root, env=envs.get(name, clean_env()), capture_output=True, text=True
            )
            if done.returncode not in (0, 1) or not done.stdout:  # 1: stale learnings found
                raise SystemExit(f"{name} failed: {done.stderr.strip()}")
            outputs[name] = done.stdout
        for name in ("lore stale", "lore history"):
            if name + BASELINE in outputs and outputs[name] != outputs[name + BASELINE]:
                raise SystemExit(f"{name}: the output differs from the baseline's")
        envs = {name: envs.get(name, clean_env()) for name in commands}
        wall, cpu = rounds(commands, runs, root, envs)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    names = ("lore stale", "lore history")
    stats = {
        name: {
            "median_s": median(wall[name]),
            "p10_s": pct(wall[name], 0.1),
            "p90_s": pct(wall[name], 0.9),
            "cpu_median_s": median(cpu[name]),
        }
        for name in commands
    }
    paired = {  # per round: this version over the baseline; then the median
        name: {
            "wall": median([a / b for a, b in zip(wall[name], wall[name + BASELINE], strict=True)]),
            "cpu": median([a / b for a, b in zip(cpu[name], cpu[name + BASELINE], strict=True)]),
        }
        for name in names
        if name + BASELINE in wall
    }
    return {
        "learnings": learnings,
        "commits": commits,
        "runs": runs,
        "stats": stats,
        "paired_ratio": paired,
    }


def report(res: dict[str, Any]) -> None:
    print(
        f"cold review commands: {res['learnings']} anchored learnings, {res['commits']} later "
        f"commits ({res['runs']} runs each, interleaved)"
    )
    print(f"  {'command':<28} {'median':>9} {'p10':>9} {'p90':>9} {'CPU':>9}")
    for name, s in res["stats"].items():
        print(
            f"  {name:<28} {s['median_s'] * 1000:7.1f}ms {s['p10_s'] * 1000:7.1f}ms "
            f"{s['p90_s'] * 1000:7.1f}ms {s['cpu_median_s'] * 1000:7.1f}ms"
        )
    for name, ratio in res["paired_ratio"].items():
        print(
            f"  {name}: this version / baseline, median of per-round ratios: "
            f"wall {ratio['wall']:.3f}x, CPU {ratio['cpu']:.3f}x"
        )
    print(f"  {idle_note()}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learnings", type=int, default=20)
    parser.add_argument("--commits", type=int, default=40)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument(
        "--baseline",
        type=Path,
        default=None,
        help="another version's src folder, timed in the same rounds",
    )
    parser.add_argument("--json-out", default=None)
    args = parser.parse_args(argv)
    res = measure(args.learnings, args.commits, args.runs, args.workdir, args.baseline)
    report(res)
    write_results(args.json_out, "review", res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
