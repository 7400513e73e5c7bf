"""Cold `lore` commands through the one command table, paired with another version's source.

    .venv/bin/python benchmarks/bench_cli_cold.py [--runs 15] [--baseline OLD/src]

Builds the sample store of `lore demo` (a few sessions, learnings, expertise), warms it (the
catalog, the keyword index), then times each command as a fresh `python -m lorebook` process:
the lookups agents and people run cold (`resume`, `actions`, `report`, a keyword `search` and
`preflight`, `sessions`, `learnings`, `--help`). With `--baseline SRC` (e.g. `git archive <rev>
src | tar -x -C /tmp/before`, then `--baseline /tmp/before/src`) every command also runs from
that source, interleaved in the same rounds, and the paired ratio of medians is printed: the
figure that stays meaningful on a busy machine. Both versions must print the same stdout.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from _common import PYTHON, clean_env, fmt_ms, idle_note, interleaved, median, run_timed

COMMANDS: dict[str, list[str]] = {
    "resume --json": ["resume", "--json"],
    "actions --json": ["actions", "--limit", "20", "--json"],
    "report --json": ["report", "--days", "30", "--json"],
    "search (keyword)": ["search", "deploy", "port", "--mode", "keyword", "--json"],
    "preflight (keyword)": ["preflight", "deploy", "the", "api", "--mode", "keyword", "--json"],
    "sessions --json": ["sessions", "--json"],
    "learnings --json": ["learnings", "--json"],
    "--help": ["--help"],
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--baseline", type=Path, help="another version's src folder")
    parser.add_argument("--workdir", type=Path, help="where to build the store (default: temp)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        store = Path(tmp) / "store"
        src = str(Path(__file__).resolve().parents[1] / "src")
        env = clean_env(PYTHONPATH=src)
        run_timed([PYTHON, "-m", "lorebook", "demo", str(store), "--json"], env=env)
        config = store / ".lore" / "config.yaml"  # keyword search: no model in the timings
        config.write_text(
            config.read_text(encoding="utf-8") + "\nembedding:\n  enabled: false\n",
            encoding="utf-8",
        )
        run_timed([PYTHON, "-m", "lorebook", "catalog"], cwd=store, env=env)
        run_timed([PYTHON, "-m", "lorebook", "index", "--json"], cwd=store, env=env)
        commands: dict[str, list[str]] = {}
        envs: dict[str, dict[str, str]] = {}
        versions = {"this": src} | (
            {"baseline": str(args.baseline.resolve())} if args.baseline else {}
        )
        for label, cmd in COMMANDS.items():
            outputs = set()
            for version, path in versions.items():
                name = f"{label} [{version}]"
                commands[name] = [PYTHON, "-m", "lorebook", *cmd]
                envs[name] = clean_env(PYTHONPATH=path)
                _, done = run_timed(commands[name], cwd=store, env=envs[name])
                outputs.add(done.stdout if label != "--help" else b"")
            if label not in ("--help", "resume --json", "report --json") and len(outputs) != 1:
                print(f"note: {label}: the versions print different output", file=sys.stderr)
        times = interleaved(commands, args.runs, cwd=store, envs=envs)
    print(f"cold `lore` commands ({args.runs} runs each, interleaved) {idle_note()}")
    print(f"  {'command':24} {'this':>10} {'baseline':>10} {'paired':>8}")
    for label in COMMANDS:
        this = median(times[f"{label} [this]"])
        row = f"  {label:24} {fmt_ms(this):>10}"
        if args.baseline:
            base = median(times[f"{label} [baseline]"])
            pairs = [
                a / b
                for a, b in zip(times[f"{label} [this]"], times[f"{label} [baseline]"], strict=True)
            ]
            row += f" {fmt_ms(base):>10} {median(pairs):>7.2f}x"
        print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
