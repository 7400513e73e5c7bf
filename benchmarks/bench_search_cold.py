"""Cold `lore search` (a new process per query) against the bare imports it cannot avoid.

    .venv/bin/python benchmarks/bench_search_cold.py [--learnings 2000] [--runs 7]
                                                     [--baseline OLD/src] [--json-out F]

One store of generated learnings (bench_search.py's generator), indexed once; then, paired and
interleaved in one run (order rotated every round, each round after the CPUs went idle):
* `lore search Q --json` (hybrid, index fresh) vs `python -c "import chromadb, onnxruntime"`
  (goal <= 2x);
* `lore search Q --mode keyword --json`, `... --no-refresh` and `lore preflight Q --mode
  keyword --json` vs `python -c pass` (goal <= 10x);
* with `--baseline SRC` (the `src` folder of another lorebook version, e.g. one extracted with
  `git archive <commit> src | tar -x -C /tmp/before`), the same three searches through it:
  before and after in the same rounds. Each version searches its own copy of the same index
  (same pins): each saves its keyword index in its own format.
* with `--keyword-only`, the keyword searches alone (e.g. on a store indexed without vectors);
* with `--store DIR` (a store indexed earlier, e.g. a previous run's), a copy of it instead of
  generating and indexing a new one.
Also lists the heavy modules each search imports (`-X importtime`, one run each).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import (  # noqa: E402
    PYTHON,
    REPO,
    clean_env,
    interleaved,
    machine,
    median,
    parse_importtime,
    run_timed,
)
from bench_search import build  # noqa: E402

HEAVY = ("torch", "sentence_transformers", "transformers", "chromadb", "onnxruntime")
QUERY = "connection pool times out under load"
GOALS = {
    "hybrid": ("import chromadb+onnxruntime", 2.0),
    "keyword": ("python -c pass", 10.0),
    "keyword --no-refresh": ("python -c pass", 10.0),
    "preflight keyword": ("python -c pass", 10.0),
}
SEARCHES = {
    "hybrid": ["search"],
    "keyword": ["search", "--mode", "keyword"],
    "keyword --no-refresh": ["search", "--mode", "keyword", "--no-refresh"],
    "preflight keyword": ["preflight", "--mode", "keyword"],
}


def search_cmd(extra: list[str]) -> list[str]:
    return [PYTHON, "-m", "lorebook", extra[0], QUERY, "--json", *extra[1:]]


def heavy_imports(cmd: list[str], env: dict[str, str]) -> list[str]:
    _, done = run_timed([cmd[0], "-X", "importtime", *cmd[1:]], env=env)
    found = {row[0].split(".")[0] for row in parse_importtime(done.stderr.decode())}
    return sorted(found & set(HEAVY))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--learnings", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--baseline", type=Path, default=None, metavar="SRC")
    parser.add_argument("--json-out", type=Path, default=None)
    parser.add_argument("--store", type=Path, default=None, metavar="DIR")
    parser.add_argument(
        "--keyword-only",
        action="store_true",
        help="leave out the hybrid search and its import line",
    )
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="lore-bench-cold-"))
    root = workdir / "store"
    if args.store is not None:
        shutil.copytree(args.store, root, symlinks=True)
        args.learnings = len(list((root / "learnings").glob("*.md")))
    else:
        build(root, args.learnings, args.seed)
    cache = os.environ.get("LORE_MODEL_CACHE")  # the per-user ONNX export, if set elsewhere
    extra = {"LORE_ROOT": str(root), **({"LORE_MODEL_CACHE": cache} if cache else {})}
    after = clean_env(PYTHONPATH=str(REPO / "src"), **extra)
    print(f"indexing {args.learnings} learnings (and exporting the model if not cached)...")
    run_timed([PYTHON, "-m", "lorebook", "index"], env=after)

    commands: dict[str, list[str]] = {"python -c pass": [PYTHON, "-c", "pass"]}
    if not args.keyword_only:
        commands["import chromadb+onnxruntime"] = [PYTHON, "-c", "import chromadb, onnxruntime"]
    searches = {k: v for k, v in SEARCHES.items() if not (args.keyword_only and k == "hybrid")}
    envs: dict[str, dict[str, str]] = {}
    for name, flags in searches.items():
        commands[f"after: {name}"] = search_cmd(flags)
        envs[f"after: {name}"] = after
    if args.baseline is not None:
        shutil.copytree(root, workdir / "store-before", symlinks=True)
        extra["LORE_ROOT"] = str(workdir / "store-before")
        before = clean_env(PYTHONPATH=str(args.baseline.resolve()), **extra)
        for name, flags in searches.items():
            commands[f"before: {name}"] = search_cmd(flags)
            envs[f"before: {name}"] = before
    times = interleaved(commands, args.runs, env=after, envs=envs)

    med = {name: median(values) for name, values in times.items()}
    print(
        f"\ncold lore search, {args.learnings} learnings, {args.runs} interleaved runs "
        f"(median, min-max seconds); {machine()}"
    )
    for name, values in times.items():
        print(f"  {name:<34} {med[name]:7.3f}  ({min(values):.3f}-{max(values):.3f})")
    result: dict[str, Any] = {
        "learnings": args.learnings,
        "runs": args.runs,
        "machine": machine(),
        "times": times,
        "ratios": {},
    }
    print("\nratios (median over median):")
    for side in ("after", "before"):
        for name, (reference, goal) in GOALS.items():
            key = f"{side}: {name}"
            if key not in med:
                continue
            ratio = med[key] / med[reference]
            result["ratios"][f"{key} / {reference}"] = ratio
            verdict = "met" if ratio <= goal else "NOT met"
            print(f"  {key:<28} / {reference:<28} {ratio:6.2f}x  (goal <= {goal:g}x: {verdict})")
    if args.baseline is not None:
        for name in searches:
            ratio = med[f"before: {name}"] / med[f"after: {name}"]
            result["ratios"][f"before/after: {name}"] = ratio
            print(f"  before / after, {name:<20} {ratio:6.1f}x faster")
    print("\nheavy modules imported:")
    result["imports"] = {}
    for name in commands:
        if ":" in name:
            found = heavy_imports(commands[name], envs[name])
            result["imports"][name] = found
            print(f"  {name:<34} {', '.join(found) or '-'}")
    if args.json_out:
        args.json_out.write_text(json.dumps(result, indent=1))
    shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
