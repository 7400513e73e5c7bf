"""Concurrent `lore sync` from several clones of one remote: how many succeed.

    .venv/bin/python benchmarks/bench_sync_concurrent.py [--clones 6] [--rounds 6]
        [--src DIR]

A bare remote in a temp dir and `--clones` clones of it, all with a store. Each round every
clone logs one action into one shared session (the case that makes git's union merge repeat
lines) and one into its own, then every clone starts `lore sync` at the same moment (threads
behind a barrier). Printed: syncs that succeeded out of all, the errors' first lines by kind,
and, after a final settling sync in each clone, how many shards hold repeated lines and how
many clones `lore check` fails in. `--src` runs another version's `src` folder (e.g. from
`git archive <rev> src | tar -x -C /tmp/before`) for a before/after pair.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from _common import PYTHON, REPO

IDENTITY = {
    "GIT_AUTHOR_NAME": "Bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "Bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
}


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True)


def lore(src: Path, root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LORE_")}
    env.update(IDENTITY, PYTHONPATH=str(src), LORE_ROOT=str(root))
    return subprocess.run(
        [PYTHON, "-m", "lorebook", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def team(src: Path, base: Path, count: int) -> list[Path]:
    remote = base / "remote.git"
    git(base, "init", "-q", "--bare", "-b", "main", str(remote))
    clones = []
    for n in range(count):
        clone = base / f"c{n}"
        git(base, "clone", "-q", str(remote), str(clone))
        if n == 0:
            (clone / "README.md").write_text("# bench\n")
            assert lore(src, clone, "init").returncode == 0
            git(clone, "add", "-A")
            git(
                clone,
                "-c",
                "user.name=b",
                "-c",
                "user.email=b@example.invalid",
                "commit",
                "-q",
                "-m",
                "initial",
            )
            git(clone, "push", "-q", "-u", "origin", "HEAD")
        clones.append(clone)
    return clones


def repeated_shards(clone: Path) -> int:
    count = 0
    for path in (clone / "actionlog").rglob("*.jsonl"):
        lines = path.read_bytes().splitlines()
        count += len(lines) != len(set(lines))
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clones", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--src", type=Path, default=REPO / "src")
    args = parser.parse_args()
    src = args.src.resolve()
    with tempfile.TemporaryDirectory(prefix="lore-bench-sync-") as tmp:
        clones = team(src, Path(tmp), args.clones)
        ok = total = 0
        errors: collections.Counter[str] = collections.Counter()
        started = time.perf_counter()
        for step in range(args.rounds):
            for n, clone in enumerate(clones):
                for session in ("shared", f"own-{n}"):
                    lore(
                        src,
                        clone,
                        "log",
                        "plan",
                        "--session",
                        session,
                        "--context",
                        json.dumps({"clone": n, "step": step}),
                    )
            gate = threading.Barrier(len(clones))
            lock = threading.Lock()

            def one(
                clone: Path, gate: threading.Barrier = gate, lock: threading.Lock = lock
            ) -> None:
                nonlocal ok, total
                gate.wait()
                done = lore(src, clone, "sync")
                with lock:
                    total += 1
                    if done.returncode == 0:
                        ok += 1
                    else:
                        errors[done.stderr.strip().splitlines()[0][:90]] += 1

            threads = [threading.Thread(target=one, args=(c,)) for c in clones]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        elapsed = time.perf_counter() - started
        for clone in clones + clones:  # settle: everyone pulls everything
            lore(src, clone, "sync")
        repeats = sum(repeated_shards(c) for c in clones)
        failing = sum(lore(src, c, "check").returncode != 0 for c in clones)
    print(f"src: {src}")
    print(
        f"concurrent syncs: {ok}/{total} succeeded ({100 * ok / total:.0f} %), "
        f"{args.clones} clones x {args.rounds} rounds, {elapsed:.1f} s"
    )
    for line, count in errors.most_common():
        print(f"  {count} x {line}")
    print(
        f"after settling: {repeats} shard(s) with repeated lines; "
        f"lore check fails in {failing}/{len(clones)} clones"
    )


if __name__ == "__main__":
    main()
