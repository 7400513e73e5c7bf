"""Parsing 10,000 learning files: the model, the store, `lore learnings` and `lore check`.

    .venv/bin/python benchmarks/bench_learnings.py [--workdir /tmp/lore-bench] [--count 10000]
        [--rounds 3] [--json-out FILE]

A store with `--count` generated learnings (DESIGN front matter: kind, category, severity,
tags, source, anchors, half of the patterns with two solutions, prevention; a Problem / Root
Cause / Solution / Key Takeaway body of ~1.2 KB; one in ten a draft) is written once under
`--workdir` and reused. Measured, medians of `--rounds` (interleaved where compared):

* parse     `read_learning` on every file, split into its parts: read, split (at the `---` lines),
            YAML (libyaml base composer + a small node walk), model (pydantic validation)
* store     `LearningStore.all()`, cold (parse cache removed: every file parsed, the cache
            written) and warm (unchanged files from `.lore/cache/learnings-v1.json`)
* ruamel    the same front matter through ruamel.yaml's safe loader, on a 500-file sample:
            the alternative we did not take, for the ratio
* check     `check_learnings` (parse + secret scan of every line + duplicate/supersedes checks)
* cli       `lore learnings --json` (cold and warm cache) and `lore check` as fresh processes
            (one run each per round)
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from _common import PYTHON, REPO, clean_env, machine, median, run_timed, wait_for_idle

sys.path.insert(0, str(REPO / "src"))

from lorebook import Lorebook
from lorebook.knowledge.check import check_learnings
from lorebook.knowledge.fileformat import _load_yaml, _split, parse_learning
from lorebook.knowledge.ids import new_learning_id
from lorebook.knowledge.store import LearningStore

WORDS = (
    "rls",
    "policy",
    "insert",
    "anon",
    "key",
    "service",
    "role",
    "migration",
    "index",
    "cache",
    "timeout",
    "retry",
    "flaky",
    "test",
    "deploy",
    "rollback",
    "queue",
    "worker",
    "memory",
    "leak",
    "pool",
    "connection",
    "lock",
    "deadlock",
    "schema",
    "token",
    "refresh",
    "build",
    "wheel",
    "torch",
    "pin",
    "import",
    "startup",
    "hook",
    "merge",
    "union",
    "shard",
)
CATEGORIES = ("database", "build", "git", "search", "performance", "security", "ci")


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def generate(root: Path, count: int, seed: int = 1) -> None:
    """Write `count` learning files into a fresh store at `root`."""
    rng = random.Random(seed)
    book = Lorebook.init(root, env={})
    start = date(2024, 1, 1)
    for i in range(count):
        created = start + timedelta(days=rng.randrange(700))
        title = _sentence(rng, rng.randint(4, 10)).rstrip(".")
        kind = rng.choice(("lesson", "lesson", "pattern", "rca", "guide"))
        draft = i % 10 == 0
        lid = new_learning_id(title, created)
        solutions = ""
        if kind == "pattern":
            solutions = "solutions:\n" + "".join(
                f"  - id: s{k}\n    text: {_sentence(rng, 8)}\n" for k in (1, 2)
            )
        body = "".join(
            f"## {name}\n{' '.join(_sentence(rng, 12) for _ in range(5))}\n\n"
            for name in ("Problem", "Root Cause", "Solution", "Key Takeaway")
        )
        text = (
            f"---\nid: {lid}\ntitle: {title}\nkind: {kind}\n"
            f"category: {rng.choice(CATEGORIES)}\n"
            f"severity: {rng.choice(('high', 'medium', 'low'))}\n"
            f"tags: [{', '.join(rng.sample(WORDS, 3))}]\n"
            f"status: {'draft' if draft else 'published'}\ncreated: {created.isoformat()}\n"
            f"source: {{epic: epic-{rng.randrange(300):03d}, issue: null, session: null}}\n"
            f"anchors: [src/{rng.choice(WORDS)}.py]\nsupersedes: []\n{solutions}"
            f"prevention:\n  - {_sentence(rng, 9)}\n---\n{body.rstrip()}\n"
        )
        folder = book.layout.drafts if draft else book.layout.learnings
        (folder / f"{lid}.md").write_text(text, encoding="utf-8")
    (root / ".generated").write_text(str(count))


def _parts(files: list[Path]) -> dict[str, float]:
    """Seconds for each stage over all files."""
    from lorebook.knowledge.fileformat import _normalize
    from lorebook.knowledge.model import KNOWN_KEYS, Learning

    t = time.perf_counter()
    texts = [p.read_text(encoding="utf-8") for p in files]
    read = time.perf_counter() - t
    t = time.perf_counter()
    split = [_split(x) for x in texts]
    splitting = time.perf_counter() - t
    t = time.perf_counter()
    raws = [_load_yaml(fm, "bench", 1) for fm, _ in split]
    loading = time.perf_counter() - t
    t = time.perf_counter()
    for raw, (_, body) in zip(raws, split, strict=True):
        data = _normalize({k: v for k, v in raw.items() if k in KNOWN_KEYS})
        Learning(**data, body=body)
    model = time.perf_counter() - t
    return {"read": read, "split": splitting, "yaml": loading, "model": model}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/lore-bench"))
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args(argv)
    root = args.workdir / f"learnings-{args.count}"
    if not (root / ".generated").exists():
        print(f"generating {args.count:,} learnings in {root} ...", flush=True)
        root.mkdir(parents=True, exist_ok=True)
        generate(root, args.count)
    book = Lorebook.open(root, env={})
    store = LearningStore(book.layout, book.sanitizer)
    files = store.files()
    total_bytes = sum(p.stat().st_size for p in files)
    print(f"{len(files):,} files, {total_bytes / len(files):,.0f} bytes each on average")
    from ruamel.yaml import YAML

    ruamel = YAML(typ="safe", pure=True)
    sample = [_split(p.read_text(encoding="utf-8"))[0] for p in files[:500]]
    ours: dict[str, list[float]] = {
        "parse": [],
        "store_cold": [],
        "store_warm": [],
        "check": [],
        "ruamel_sample": [],
        "ours_sample": [],
    }
    cache_file = book.layout.cache / "learnings-v1.json"
    parts: list[dict[str, float]] = []
    cli: dict[str, list[float]] = {
        "lore learnings --json (cold)": [],
        "lore learnings --json": [],
        "lore check": [],
    }
    env = clean_env(LORE_ROOT=str(root))
    for _ in range(args.rounds):
        wait_for_idle()
        t = time.perf_counter()
        for path in files:
            parse_learning(path.read_text(encoding="utf-8"), path, path.name)
        ours["parse"].append(time.perf_counter() - t)
        cache_file.unlink(missing_ok=True)
        t = time.perf_counter()
        assert sum(1 for _ in store.all()) == len(files)
        ours["store_cold"].append(time.perf_counter() - t)
        t = time.perf_counter()
        assert sum(1 for _ in store.all()) == len(files)
        ours["store_warm"].append(time.perf_counter() - t)
        problems: list[Any] = []
        t = time.perf_counter()
        check_learnings(book.layout, book.sanitizer, problems.append)
        ours["check"].append(time.perf_counter() - t)
        assert not problems, problems[:3]
        t = time.perf_counter()
        for fm in sample:
            _load_yaml(fm, "bench", 1)
        ours["ours_sample"].append(time.perf_counter() - t)
        t = time.perf_counter()
        for fm in sample:
            ruamel.load(fm)
        ours["ruamel_sample"].append(time.perf_counter() - t)
        parts.append(_parts(files))
        cache_file.unlink(missing_ok=True)
        for name, cmd in (
            ("lore learnings --json (cold)", ["learnings", "--json"]),
            ("lore learnings --json", ["learnings", "--json"]),
            ("lore check", ["check"]),
        ):
            elapsed, _ = run_timed([PYTHON, "-m", "lorebook", *cmd], env=env)
            cli[name].append(elapsed)
    n = len(files)
    fig = {name: median(values) for name, values in ours.items()}
    part = {k: median([p[k] for p in parts]) for k in parts[0]}
    cli_med = {k: median(v) for k, v in cli.items()}
    ratio = fig["ruamel_sample"] / fig["ours_sample"]
    print(f"\nparse {n:,} files: {fig['parse']:.2f} s = {fig['parse'] / n * 1e6:.0f} µs/file")
    print("  parts (µs/file): " + ", ".join(f"{k} {v / n * 1e6:.0f}" for k, v in part.items()))
    print(f"store.all(): cold {fig['store_cold']:.2f} s, warm {fig['store_warm']:.2f} s")
    print(f"check_learnings: {fig['check']:.2f} s = {fig['check'] / n * 1e6:.0f} µs/file")
    print(
        f"front matter, 500 files: libyaml base {fig['ours_sample'] * 1000:.0f} ms vs ruamel "
        f"safe {fig['ruamel_sample'] * 1000:.0f} ms = {ratio:.1f}x"
    )
    for name, value in cli_med.items():
        print(f"`{name}` (fresh process): {value:.2f} s")
    result = {
        "count": n,
        "figures": fig,
        "parts": part,
        "cli": cli_med,
        "ruamel_ratio": ratio,
        "machine": machine(),
    }
    if args.json_out:
        args.json_out.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
