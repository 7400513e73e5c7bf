"""Cold one-shot `lore log` wall time against `python -c pass` from the same venv.

    .venv/bin/python benchmarks/bench_cold_log.py [--runs 30]

Three commands run side by side, interleaved (the order rotates every round), `--runs` times
each, after one untimed warm-up (so bytecode caches exist, as on any installed machine):

* `python -c pass`                          the interpreter's own start-up
* `.venv/bin/lore log commit --context ...` the console script
* `python -m lorebook log commit ...`       the module entry point
* the console script again with PYTHONDONTWRITEBYTECODE=1 (informative, no target): every run
  recompiles lorebook's modules, as in a sandbox that sets that variable

`--baseline SRC` also times `python -m lorebook log` from another version's `src` folder (e.g.
`git archive <rev> src | tar -x -C /tmp/lore-before`, then `--baseline /tmp/lore-before/src`),
interleaved with this one: before/after in one run, as a paired ratio.

Bytecode is cached under a temp directory (PYTHONPYCACHEPREFIX), never in the source tree.

Each `lore log` appends one action with a realistic ~400-byte context to a fresh store (the
current directory). Medians, p10/p90 and the ratio of medians are printed (target: <= 3x), then
`python -X importtime` for the log path: the top contributors (median of 5 runs), the imports
beyond a bare interpreter, and whether any heavy module (click, torch, chromadb, ...) was loaded.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from _common import (
    PYTHON,
    clean_env,
    heavy_imports,
    idle_note,
    import_split,
    importtime_profile,
    interleaved,
    lore_script,
    median,
    pct,
    run_timed,
    wait_for_idle,
    write_results,
)

TARGET = 3.0
NO_PYC = "lore log, no .pyc cache"  # informative: how this sandbox's default env runs it
CONTEXT = json.dumps(
    {
        "commit_hash": "a1b2c3d",
        "message": "Fix token refresh race in the auth client\n\nSerialise refresh and retry.",
        "files": ["src/auth/client.py", "src/auth/session.py", "tests/unit/test_auth_client.py"],
        "branch": "consilio/epic-012-auth",
        "command": "git commit -m 'Fix token refresh race' --no-verify",
        "params": {"insertions": 42, "deletions": 7, "signed": False},
    }
)
LOG_ARGS = [
    "log",
    "commit",
    "--context",
    CONTEXT,
    "--epic",
    "epic-012",
    "--agent",
    "PS",
    "--project",
    "bench",
    "--session",
    "bench-cold-log",
]


PHASES = """
import sys, time
t0 = time.perf_counter()
from lorebook.cli import main
main(["log", *sys.argv[1:]])
t1 = time.perf_counter()
main(["log", *sys.argv[1:]])
t2 = time.perf_counter()
print(t1 - t0, t2 - t1, file=sys.stderr)
"""


def phase_split(root: Path, env: dict[str, str], runs: int) -> dict[str, float]:
    """Inside one `lore log` process: the first `main(["log", ...])` (imports + append) and a
    second one in the same process (the append alone, warm); imports = the difference."""
    first, second, normal_exit, hard_exit = [], [], [], []
    for _ in range(runs):
        wait_for_idle()
        wall, done = run_timed([PYTHON, "-c", PHASES, *LOG_ARGS[1:]], cwd=root, env=env)
        a, b = (float(x) for x in done.stderr.decode().split()[-2:])
        first.append(a)
        second.append(b)
        normal_exit.append(wall)
        wall, _ = run_timed(
            [PYTHON, "-c", PHASES + "import os; os._exit(0)\n", *LOG_ARGS[1:]], cwd=root, env=env
        )
        hard_exit.append(wall)
    return {
        "imports_s": median(first) - median(second),
        "append_s": median(second),
        "shutdown_s": median(normal_exit) - median(hard_exit),
    }


BASELINE = "python -m lorebook log (baseline)"


def measure(runs: int, workdir: Path | None, baseline: Path | None = None) -> dict[str, Any]:
    from lorebook import Lorebook

    root = Path(tempfile.mkdtemp(prefix="lore-cold-", dir=workdir))
    try:
        Lorebook.init(root)
        env = clean_env()
        commands = {
            "python -c pass": [PYTHON, "-c", "pass"],
            "lore log (console script)": [str(lore_script()), *LOG_ARGS],
            "python -m lorebook log": [PYTHON, "-m", "lorebook", *LOG_ARGS],
            NO_PYC: [str(lore_script()), *LOG_ARGS],
        }
        envs = {NO_PYC: clean_env(bytecode=False)}
        if baseline is not None:
            commands[BASELINE] = [PYTHON, "-m", "lorebook", *LOG_ARGS]
            envs[BASELINE] = clean_env(PYTHONPATH=str(baseline.resolve()))
        times = interleaved(commands, runs, cwd=root, env=env, envs=envs)
        base = median(times["python -c pass"])
        stats = {
            name: {
                "median_s": median(t),
                "p10_s": pct(t, 0.1),
                "p90_s": pct(t, 0.9),
                "ratio": median(t) / base,
            }
            for name, t in times.items()
        }
        # per-round ratio (each lore run against the baseline of its own round)
        paired = {
            name: median([a / b for a, b in zip(t, times["python -c pass"], strict=True)])
            for name, t in times.items()
            if name != "python -c pass"
        }
        phases = phase_split(root, env, max(5, runs // 3))
        shard_lines = sum(
            len(p.read_bytes().splitlines()) for p in root.glob("actionlog/*/*/*/*.jsonl")
        )
        baseline = importtime_profile(["-c", "pass"], cwd=root, env=env)
        module_path = importtime_profile(["-m", "lorebook", *LOG_ARGS], cwd=root, env=env)
        script_path = importtime_profile([str(lore_script()), *LOG_ARGS], cwd=root, env=env)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    extra = [m for m in script_path["modules"] if m not in baseline["modules"]]
    return {
        "runs": runs,
        "phases": phases,
        "stats": stats,
        "paired_ratio": paired,
        "appended_lines": shard_lines,
        "importtime": {
            "baseline_modules": len(baseline["modules"]),
            "log_modules": len(script_path["modules"]),
            "extra_modules": extra,
            "extra_self_us": sum(script_path["self_us"][m] for m in extra),
            "top_self": sorted(((script_path["self_us"][m], m) for m in extra), reverse=True)[:15],
            "top_cumulative": sorted(
                (
                    (script_path["cumulative_us"][m], m)
                    for m in extra
                    if script_path["depth"].get(m, 0) == 0
                ),
                reverse=True,
            )[:10],
            "lorebook_cumulative_us": sum(
                script_path["cumulative_us"][m]
                for m in extra
                if m.startswith("lorebook") and script_path["depth"].get(m, 0) == 0
            ),
            "split": import_split(script_path, baseline),
            "heavy_console_script": heavy_imports(script_path["modules"]),
            "heavy_module": heavy_imports(module_path["modules"]),
        },
    }


def report(res: dict[str, Any]) -> None:
    print(
        f"cold one-shot `lore log` ({res['runs']} runs each, interleaved; "
        f"{res['appended_lines']} lines appended)"
    )
    print(f"  {'command':<34} {'median':>9} {'p10':>9} {'p90':>9} {'ratio':>7} {'paired':>7}")
    for name, s in res["stats"].items():
        paired = res["paired_ratio"].get(name)
        print(
            f"  {name:<34} {s['median_s'] * 1000:7.1f}ms {s['p10_s'] * 1000:7.1f}ms "
            f"{s['p90_s'] * 1000:7.1f}ms {s['ratio']:6.2f}x "
            f"{f'{paired:6.2f}x' if paired else '':>7}"
        )
    if BASELINE in res["stats"]:
        now = res["stats"]["python -m lorebook log"]["median_s"]
        before = res["stats"][BASELINE]["median_s"]
        print(
            f"  this version vs the baseline (python -m lorebook log): {now / before:.3f}x "
            f"({now * 1000:.1f} ms vs {before * 1000:.1f} ms, medians, interleaved)"
        )
    for name in ("lore log (console script)", "python -m lorebook log"):
        ratio = res["stats"][name]["ratio"]
        print(
            f"  {name}: {ratio:.2f}x python -c pass, target <= {TARGET}x: "
            f"{'MET' if ratio <= TARGET else 'NOT MET'}"
        )
    ph = res["phases"]
    base = res["stats"]["python -c pass"]["median_s"]
    print(
        f"  inside one run (median): interpreter start-up ~{base * 1000:.1f} ms (python -c pass)"
        f" + importing lorebook ~{ph['imports_s'] * 1000:.1f} ms + the append itself (open the "
        f"store, redact, write; measured warm) {ph['append_s'] * 1000:.1f} ms + interpreter "
        f"shutdown with the extra modules ~{ph['shutdown_s'] * 1000:.1f} ms"
    )
    imp = res["importtime"]
    print(
        f"  -X importtime (console script, median of 5): {imp['log_modules']} modules vs "
        f"{imp['baseline_modules']} for `-c pass`; {len(imp['extra_modules'])} extra modules, "
        f"{imp['extra_self_us'] / 1000:.1f} ms of import time in them; lorebook's own "
        f"top-level imports cumulative {imp['lorebook_cumulative_us'] / 1000:.1f} ms"
    )
    split = imp["split"]
    print(
        f"  of which lorebook's own module bodies {split['own_us'] / 1000:.1f} ms, stdlib "
        f"modules they pull in {split['stdlib_us'] / 1000:.1f} ms "
        "(-X importtime inflates both a little)"
    )
    print("  biggest stdlib subtrees imported by lorebook (cumulative):")
    for us, module, importer in split["stdlib_subtrees"]:
        print(f"    {us / 1000:6.2f} ms  {module:<16} <- {importer}")
    print("  lorebook modules by own (self) time:")
    for us, module in split["own_top"]:
        print(f"    {us / 1000:6.2f} ms  {module}")
    print("  top extra imports by self time:")
    for us, module in imp["top_self"]:
        print(f"    {us / 1000:6.2f} ms  {module}")
    print("  top-level extra imports by cumulative time:")
    for us, module in imp["top_cumulative"]:
        print(f"    {us / 1000:6.2f} ms  {module}")
    for label, key in (
        ("console script", "heavy_console_script"),
        ("python -m lorebook", "heavy_module"),
    ):
        heavy = imp[key]
        print(
            f"  heavy modules imported ({label}): "
            f"{', '.join(heavy) if heavy else 'none (no click/torch/chromadb/ruamel/...)'}"
        )
    print(f"  {idle_note()}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n\n".join(__doc__.split("\n\n")[1:]),
    )
    parser.add_argument("--runs", type=int, default=30, help="timed runs of each command")
    parser.add_argument(
        "--workdir",
        type=Path,
        default=None,
        help="where the throwaway store goes (default: a temp dir)",
    )
    parser.add_argument("--json-out", help="write the results as JSON here")
    parser.add_argument(
        "--baseline",
        type=Path,
        default=None,
        metavar="SRC",
        help="another version's src folder, timed interleaved with this one",
    )
    args = parser.parse_args(argv)
    res = measure(args.runs, args.workdir, args.baseline)
    report(res)
    worst = max(
        res["stats"][n]["ratio"]
        for n in res["stats"]
        if n not in ("python -c pass", NO_PYC, BASELINE)
    )
    write_results(args.json_out, "cold_log", {**res, "target": TARGET, "met": worst <= TARGET})
    return 0


if __name__ == "__main__":
    sys.exit(main())
