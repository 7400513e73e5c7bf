"""Cost of `Expertise.learn` on a long session, as a ratio to just reading that session.

    python benchmarks/bench_expertise.py [--actions 10000] [--rounds 5] [--json-out FILE]

Builds a git repository in a temp dir with a store and one session of N actions written through
`Lorebook.log` (a mix of Read/Edit/Glob/Bash tool calls, some failing, commits naming files),
then, interleaved per round: (a) read the session's records with the log reader, (b) learn from
it without committing (`commit=False`, the file removed between rounds so every round does the
full work), (c) learn with the commit. Reported: medians and the ratios (b)/(a) and (c)/(b).
Standalone: puts the repository's src/ on sys.path itself.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from lorebook import Lorebook
from lorebook.log.reader import iter_records

TOOLS = ["Glob", "Read", "Edit", "Bash", "Grep", "Read", "Edit", "Bash"]


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def build(root: Path, actions: int) -> Lorebook:
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.name", "Bench")
    git(root, "config", "user.email", "bench@example.invalid")
    for i in range(50):
        (root / "src").mkdir(exist_ok=True)
        (root / "src" / f"m{i}.py").write_text(f"X = {i}\n")
    book = Lorebook.init(root, env={})
    git(root, "add", "src")
    git(root, "commit", "-q", "-m", "src")
    s = book.start_session(session_id="long-1", meta={"task": "refactor the query layer"})
    for i in range(actions):
        name = TOOLS[i % len(TOOLS)]
        failed = name == "Bash" and i % 40 == 3
        context: dict[str, Any] = {"tool": name, "file_path": f"src/m{i % 50}.py"}
        if name == "Bash":
            context = {"tool": name, "command": "pytest -q tests/test_query.py"}
        if i % 500 == 499:
            book.log("commit", session=s.id, context={"files": [f"src/m{i % 50}.py"]})
            continue
        book.log(
            "tool_call",
            session=s.id,
            context=context,
            outcome="failure" if failed else "success",
            error=f"AssertionError: expected {i} rows" if failed else None,
        )
    s.end()
    return book


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--actions", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json-out")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="lore-bench-expertise-") as tmp:
        root = Path(tmp)
        book = build(root, args.actions)
        path = book.expertise.path("database")
        times: dict[str, list[float]] = {"read": [], "learn": [], "learn+commit": []}
        result: dict[str, Any] = {}
        for _ in range(args.rounds):
            t0 = time.perf_counter()
            count = sum(
                1 for _ in iter_records(book.layout.actionlog, base=root, sessions=["long-1"])
            )
            t1 = time.perf_counter()
            path.unlink(missing_ok=True)
            result = book.expertise.learn("long-1", domain="database", commit=False)
            t2 = time.perf_counter()
            path.unlink()
            book.expertise.learn("long-1", domain="database")
            t3 = time.perf_counter()
            git(root, "rm", "-q", "--cached", str(path))
            git(root, "commit", "-q", "-m", "reset")
            times["read"].append(t1 - t0)
            times["learn"].append(t2 - t1)
            times["learn+commit"].append(t3 - t2)
        med = {k: statistics.median(v) for k, v in times.items()}
        figures = {
            "records": count,
            "median_s": med,
            "learn_over_read": med["learn"] / med["read"],
            "commit_over_learn": med["learn+commit"] / med["learn"],
            "changes": result.get("changes_count"),
        }
    for name, value in med.items():
        print(f"{name:<14} {value * 1000:8.1f} ms (median of {args.rounds})")
    print(f"records read   {figures['records']}")
    print(f"learn / read   {figures['learn_over_read']:.2f}x")
    print(f"commit / learn {figures['commit_over_learn']:.2f}x")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
