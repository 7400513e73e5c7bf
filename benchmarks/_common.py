"""Helpers shared by the benchmark scripts: timing, statistics, `-X importtime`, results files."""

from __future__ import annotations

import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
PYTHON = sys.executable
BIN = Path(PYTHON).parent

# what the hot paths must never import (DESIGN.md, "Fast where it is hot")
HEAVY = (
    "torch",
    "chromadb",
    "click",
    "textual",
    "mcp",
    "git",
    "sentence_transformers",
    "transformers",
    "numpy",
    "ruamel",
    "yaml",
    "typer",
    "orjson",
    "rich",
    "pydantic",
    "bm25s",
    "watchdog",
    "importlib.metadata",
    "onnxruntime",
    "requests",
)


def lore_script() -> Path:
    """The `lore` console script of the interpreter running the benchmark."""
    path = BIN / "lore"
    if not path.exists():
        raise SystemExit(
            f"no console script at {path}: run with the project's venv python, "
            "e.g. .venv/bin/python benchmarks/..."
        )
    return path


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def pct(values: Sequence[float], q: float) -> float:
    """The q-quantile (0..1), nearest rank on sorted values."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return float(ordered[index])


def run_timed(
    cmd: Sequence[str],
    *,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    check: bool = True,
) -> tuple[float, subprocess.CompletedProcess[bytes]]:
    """Wall time (seconds) of one subprocess, output captured."""
    started = time.perf_counter()
    done = subprocess.run(list(cmd), cwd=cwd, env=env, capture_output=True, check=False)
    elapsed = time.perf_counter() - started
    if check and done.returncode != 0:
        raise SystemExit(
            f"command failed ({done.returncode}): {' '.join(cmd)}\n"
            f"{done.stderr.decode(errors='replace')[-2000:]}"
        )
    return elapsed, done


def _cpu_times() -> tuple[int, int]:
    with open("/proc/stat") as handle:
        fields = [int(x) for x in handle.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return idle, sum(fields)


IDLE_STATS = {"waits": 0, "waited_s": 0.0, "timeouts": 0}


def wait_for_idle(max_busy: float = 0.3, timeout: float = 20.0, sample: float = 0.2) -> None:
    """Wait (up to `timeout` s) until the other processes leave the CPUs mostly idle: the busy
    fraction of all CPUs over `sample` s must be <= `max_busy` (0.5 = one of two cores).

    The machines are shared with other sessions' test suites; starting a round while they run
    mostly measures them. Linux only; elsewhere it returns at once, as it does in the suite's
    smoke run (`LORE_BENCH_SMOKE=1`), which checks that a benchmark runs, not its figures."""
    if not os.path.exists("/proc/stat") or os.environ.get("LORE_BENCH_SMOKE") == "1":
        return
    started = time.perf_counter()
    while True:
        idle0, total0 = _cpu_times()
        time.sleep(sample)
        idle1, total1 = _cpu_times()
        busy = 1 - (idle1 - idle0) / max(1, total1 - total0)
        waited = time.perf_counter() - started
        if busy <= max_busy:
            if waited > sample * 1.5:
                IDLE_STATS["waits"] += 1
                IDLE_STATS["waited_s"] += waited
            return
        if waited >= timeout:
            IDLE_STATS["timeouts"] += 1
            return
        time.sleep(0.3)


def interleaved(
    commands: dict[str, list[str]],
    runs: int,
    *,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    envs: dict[str, dict[str, str]] | None = None,
    warmup: int = 1,
) -> dict[str, list[float]]:
    """Run each command `runs` times, interleaved (order rotated every round); seconds each.

    `envs` gives a command (by name) its own environment instead of `env`.
    """
    names = list(commands)
    envs = envs or {}
    for _ in range(warmup):
        for name in names:
            run_timed(commands[name], cwd=cwd, env=envs.get(name, env))
    times: dict[str, list[float]] = {name: [] for name in names}
    for round_ in range(runs):
        wait_for_idle()
        shift = round_ % len(names)
        for name in names[shift:] + names[:shift]:
            elapsed, _ = run_timed(commands[name], cwd=cwd, env=envs.get(name, env))
            times[name].append(elapsed)
    return times


PYCACHE = Path(tempfile.gettempdir()) / "lore-bench-pycache"


def clean_env(*, bytecode: bool = True, **extra: str) -> dict[str, str]:
    """The environment for a measured subprocess: no LORE_* settings (the store and session come
    from the arguments) and, with `bytecode`, compiled bytecode cached as on any installed
    machine (pip compiles on install) - in a directory of its own (PYTHONPYCACHEPREFIX), so no
    `__pycache__` lands in the source tree. This sandbox sets PYTHONDONTWRITEBYTECODE=1, which
    would make every run recompile lorebook's modules; `bytecode=False` keeps that setting."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LORE_")}
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env.pop("PYTHONPYCACHEPREFIX", None)
    env.update(extra)
    return env


_IMPORT_LINE = re.compile(r"^import time:\s+(\d+)\s*\|\s*(\d+)\s*\|(\s*)(\S+)\s*$")


def parse_importtime(stderr: str) -> list[tuple[str, int, int, int]]:
    """(module, self µs, cumulative µs, depth) for every line of `-X importtime` output."""
    rows = []
    for line in stderr.splitlines():
        match = _IMPORT_LINE.match(line)
        if match:
            depth = (len(match.group(3)) - 1) // 2
            rows.append((match.group(4), int(match.group(1)), int(match.group(2)), depth))
    return rows


def importtime_profile(
    cmd_after_python: Sequence[str],
    *,
    runs: int = 5,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Median self/cumulative import time per module over `runs` runs of
    `python -X importtime ...`, plus every module imported."""
    selfs: dict[str, list[int]] = {}
    cumuls: dict[str, list[int]] = {}
    depth: dict[str, int] = {}
    parent: dict[str, str | None] = {}
    for _ in range(runs):
        wait_for_idle()
        _, done = run_timed([PYTHON, "-X", "importtime", *cmd_after_python], cwd=cwd, env=env)
        rows = parse_importtime(done.stderr.decode())
        for i, (module, self_us, cumul_us, level) in enumerate(rows):
            selfs.setdefault(module, []).append(self_us)
            cumuls.setdefault(module, []).append(cumul_us)
            depth[module] = level
            # output is post-order: the importer is the next line one level up
            parent[module] = next((r[0] for r in rows[i + 1 :] if r[3] == level - 1), None)
    return {
        "modules": sorted(selfs),
        "self_us": {m: median(v) for m, v in selfs.items()},
        "cumulative_us": {m: median(v) for m, v in cumuls.items()},
        "depth": depth,
        "parent": parent,
    }


def import_split(profile: dict[str, Any], baseline: dict[str, Any]) -> dict[str, Any]:
    """Import time beyond `baseline`: lorebook's own module bodies vs the stdlib modules they
    pull in, with the biggest stdlib subtrees (by cumulative time) and who imports them."""
    extra = [m for m in profile["modules"] if m not in baseline["modules"]]
    own = sum(profile["self_us"][m] for m in extra if m.split(".")[0] == "lorebook")
    other = sum(profile["self_us"][m] for m in extra if m.split(".")[0] != "lorebook")
    subtrees = []
    for m in extra:
        importer = profile["parent"].get(m)
        if m.split(".")[0] != "lorebook" and (importer or "").split(".")[0] == "lorebook":
            subtrees.append((profile["cumulative_us"][m], m, importer))
    subtrees.sort(reverse=True)
    own_top = sorted(
        ((profile["self_us"][m], m) for m in extra if m.split(".")[0] == "lorebook"), reverse=True
    )
    return {
        "own_us": own,
        "stdlib_us": other,
        "stdlib_subtrees": subtrees[:10],
        "own_top": own_top[:8],
    }


def heavy_imports(modules: Sequence[str]) -> list[str]:
    """Modules from HEAVY (or their submodules) that were imported."""
    found = []
    for module in modules:
        for heavy in HEAVY:
            if module == heavy or module.startswith(heavy + "."):
                found.append(module)
    return sorted(found)


def machine() -> dict[str, Any]:
    """nproc, CPU model, RAM, Python, disk: for the report."""
    info: dict[str, Any] = {
        "nproc": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }
    try:
        for line in subprocess.run(
            ["lscpu"], capture_output=True, text=True, check=False
        ).stdout.splitlines():
            if line.startswith("Model name:"):
                info["cpu"] = line.split(":", 1)[1].strip()
    except OSError:
        pass
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemTotal:"):
                    info["ram_gib"] = round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    try:
        df = (
            subprocess.run(
                ["df", "-T", tempfile.gettempdir()], capture_output=True, text=True, check=False
            )
            .stdout.splitlines()[-1]
            .split()
        )
        info["disk"] = f"{df[0]} ({df[1]}, {int(df[2]) / 1024 / 1024:.0f} GiB)"
    except (OSError, IndexError, ValueError):
        pass
    return info


def fmt_ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def write_results(path: str | None, name: str, results: dict[str, Any]) -> None:
    """Save results as JSON (for run_all.py) when `--json-out` was given."""
    if not path:
        return
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {"benchmark": name, "machine": machine(), "idle": IDLE_STATS, **results},
            indent=2,
            default=str,
        )
        + "\n"
    )


def idle_note() -> str:
    """One line on how long rounds waited for other processes to leave the CPUs."""
    s = IDLE_STATS
    return (
        f"(rounds start when the CPUs are >= 70 % idle: waited {s['waits']} times, "
        f"{s['waited_s']:.0f} s in all, {s['timeouts']} gave up after 20 s)"
    )


def verdict(value: float, target: float, *, higher_is_better: bool = False) -> str:
    met = value >= target if higher_is_better else value <= target
    return "MET" if met else "NOT MET"
