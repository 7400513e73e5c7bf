"""Prompt-time lessons: `lore hook user-prompt-submit` as Claude Code runs it, on a big store.

    nice .venv/bin/python benchmarks/bench_prompt_hook.py [--quick] [--store DIR] [--runs 20]

A store of 1,000,000 actions (90 days, `generate_store.py`) and 10,000 learnings
(`bench_learnings.generate`, whose small vocabulary makes every generated learning a near miss
for a database prompt), among them a dozen hand-written lessons (`LESSONS`), keyword-indexed by
`lore index` (embedding off: no model download), is built once under `--store` and reused
(`--quick`: 100,000 actions / 1,000 learnings). Then, each hook a fresh process fed a
Claude-shaped UserPromptSubmit payload on stdin, with the store's default budget (1 s):

* latency   p50/p95 wall time over `--runs` sequential runs (target: p95 <= 300 ms);
* prompts   each long natural prompt (`LESSONS`: several sentences of chat around the technical
            words) once: whether its lesson was injected (target: all);
* parallel  `--rounds` rounds of 8 hooks started at once, each with another prompt and session:
            lessons delivered of those asked (target: >= 95 %).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _common import (
    PYTHON,
    clean_env,
    idle_note,
    lore_script,
    machine,
    median,
    pct,
    wait_for_idle,
    write_results,
)

HERE = Path(__file__).resolve().parent
TARGET_P95 = 0.300
TARGET_PARALLEL = 0.95

# (id, title, takeaway, tags, a long natural prompt that needs the lesson)
LESSONS = [
    ("supabase-rls-anon-insert", "Supabase RLS blocks INSERT with the anon key",
     "Use the service role key for server-side inserts into RLS-protected tables.",
     ["supabase", "rls"],
     "Good morning! I hope the weekend went well for you. So yesterday I was working on the "
     "signup flow again and whenever a new user registers, the insert into the profiles table "
     "just fails with a permission error. I think it might be something with Supabase, but "
     "honestly I am not sure where to look. Could you take a look and tell me what is going on? "
     "Thanks a lot!"),
    ("docker-port-8080-in-use", "Deploy fails when the old container still holds port 8080",
     "Stop and remove the previous container before starting the new one.",
     ["docker", "deploy"],
     "Hey, quick one before lunch. I tried to roll out the new version of the billing service "
     "this morning and the container refuses to start, it keeps saying the address is already "
     "in use on 8080. It worked fine last week and nobody changed the compose file as far as I "
     "know. Can you figure out what is wrong and get it running again? Much appreciated."),
    ("jwt-clock-skew", "Authentication tokens rejected because of clock skew",
     "Allow a small leeway when validating the iat and nbf claims.",
     ["jwt", "auth"],
     "So this is a weird one and it has been bugging me all afternoon. Some of our users get "
     "logged out right after they sign in, but only on one of the servers. The JWT looks "
     "perfectly valid when I decode it by hand, yet the API says the token is not valid yet. "
     "I have no idea why it only happens there. Would you mind digging into it with me?"),
    ("k8s-liveness-slow-start", "Kubernetes liveness probe kills slow-starting pods",
     "Give slow services a startupProbe instead of a longer liveness delay.",
     ["kubernetes", "k8s"],
     "Hi there. After we added the big model warm-up to the search service, the pods on the "
     "cluster keep restarting in a loop and never become ready. The logs look normal until "
     "they suddenly stop, and then kubectl shows another restart. I am honestly a bit lost, I "
     "thought the deployment yaml was fine. Can you have a look and suggest what to change?"),
    ("pandas-csv-memory", "Reading a large CSV exhausts memory",
     "Read the file in chunks and choose narrow dtypes.",
     ["pandas", "memory"],
     "Okay so I have a favour to ask. The nightly report job crashed again last night, and the "
     "box ran out of RAM while it was loading the export, which is a CSV of about eleven "
     "gigabytes now. We use pandas for the whole thing. I would rather not just buy a bigger "
     "machine, so could you see how we can make it fit? No rush, but today would be nice."),
    ("alembic-lock-timeout", "A migration adding a column with a default locks a big table",
     "Add the column nullable, backfill in batches, then set the default.",
     ["postgres", "alembic", "migration"],
     "Morning! Heads up, the release got stuck yesterday evening. The alembic upgrade on the "
     "orders table just hung for twenty minutes and every request to checkout timed out while "
     "it ran, so we had to kill it. The migration only adds one column with a default value, "
     "nothing fancy. What would be the safe way to ship this? I would love your take on it."),
    ("npm-ci-lockfile", "npm ci fails when package-lock.json is out of sync",
     "Run npm install locally and commit the updated lockfile.",
     ["npm", "ci"],
     "Hey hey. The pipeline went red on my branch and I really do not get why. Locally "
     "everything builds fine, but on the runner the install step exits right away complaining "
     "that the lockfile does not match package.json. I only bumped one dependency version by "
     "hand. Could you sort it out so I can merge this before the end of the day? Cheers."),
    ("celery-visibility-timeout", "Celery tasks run twice after the Redis visibility timeout",
     "Raise visibility_timeout above the longest task's runtime.",
     ["celery", "redis"],
     "Something odd is going on with the background jobs and I would like a second pair of "
     "eyes. Customers got two invoice emails this morning, and looking at the worker logs, "
     "the same long task started again about an hour after the first run, on another worker. "
     "We use Celery with Redis as the broker. Any idea what causes that and how to stop it?"),
    ("nginx-413-body-size", "Uploads fail with 413 Request Entity Too Large behind nginx",
     "Raise client_max_body_size in the nginx server block.",
     ["nginx", "upload"],
     "Hello! A customer wrote in saying they cannot upload their video files anymore, the "
     "browser just shows an error page that says 413 and the request never reaches our app "
     "as far as I can see. Small pictures still go through without any problem. Could you "
     "find out where the limit comes from and lift it to something like 500 megabytes?"),
    ("vite-env-prefix", "Vite hides environment variables without the VITE_ prefix",
     "Name variables the client needs VITE_* and read them from import.meta.env.",
     ["vite", "frontend"],
     "Hi, I am a bit stuck on something that is probably silly. I added the analytics key "
     "to the .env file of the frontend, but in the browser it is always undefined, even "
     "after restarting the dev server a couple of times. We build the app with Vite. The "
     "backend reads its variables fine. What am I missing here? Thank you so much."),
    ("git-lfs-pointers-ci", "CI checks out Git LFS pointer files instead of the assets",
     "Enable lfs: true in the checkout step (or run git lfs pull).",
     ["git", "lfs", "ci"],
     "Hiya. The visual regression tests fail on CI but pass for everyone locally. When I "
     "downloaded the artifacts, the reference PNG files turned out to be tiny text files that "
     "start with version https://git-lfs.github.com/spec. We moved the images to LFS last "
     "sprint. How do we fix the workflow so the tests see the real pictures again?"),
    ("pytest-timezone-flaky", "Date tests fail around midnight UTC on CI runners",
     "Freeze the clock and pin TZ in the tests that compare dates.",
     ["pytest", "flaky"],
     "Another flaky test report, sorry! The test for the daily summary fails maybe once a "
     "week on the runners, always late in the evening our time, and never when I rerun it "
     "in the morning. It compares today's date with the date on the generated summary. I "
     "suspect something about time zones. Could you make it reliable for good?"),
]  # fmt: skip
SID = "0b1e2c3d-4f5a-6b7c-8d9e-{:012d}"


def lesson_text(lid: str, title: str, takeaway: str, tags: list[str]) -> str:
    body = (f"## Problem\n{title}.\n\n## Solution\n{takeaway}\n\n"
            f"## Key Takeaway\n{takeaway}\n")  # fmt: skip
    return (
        f"---\nid: {lid}\ntitle: {title}\nkind: lesson\ncategory: ops\nseverity: high\n"
        f"tags: [{', '.join(tags)}]\nstatus: published\ncreated: 2026-10-01\n---\n{body}"
    )


def build(root: Path, actions: int, learnings: int) -> float:
    """The store at `root`, built unless it is already there; seconds spent."""
    started = time.perf_counter()
    if (root / ".built").exists():
        index(root)  # a no-op unless another version of lorebook built the caches
        return 0.0
    sys.path.insert(0, str(HERE))
    from bench_learnings import generate

    root.mkdir(parents=True, exist_ok=True)
    if not (root / ".git").exists():
        subprocess.run(["git", "init", "-q", str(root)], check=True)
    if not (root / "actionlog").is_dir():
        print(f"generating {actions:,} actions in {root} ...", flush=True)
        subprocess.run([PYTHON, str(HERE / "generate_store.py"), str(root), "--actions",
                        str(actions), "--days", "90"], check=True, capture_output=True)  # fmt: skip
    print(f"generating {learnings:,} learnings and indexing them ...", flush=True)
    generate(root, learnings - len(LESSONS))
    for lid, title, takeaway, tags, _ in LESSONS:
        (root / "learnings" / f"{lid}.md").write_text(lesson_text(lid, title, takeaway, tags))
    (root / ".lore" / "config.yaml").write_text("embedding:\n  enabled: false\n")
    index(root)
    (root / ".built").write_text(f"{actions} {learnings}\n")
    return time.perf_counter() - started


def index(root: Path) -> None:
    """`lore index`, as a user runs it: the caches in the format of the code measured."""
    subprocess.run([str(lore_script()), "index"], cwd=root, check=True, capture_output=True,
                   env=clean_env())  # fmt: skip


def payload(root: Path, prompt: str, n: int) -> bytes:
    return json.dumps({
        "session_id": SID.format(n), "transcript_path": str(root / "t.jsonl"), "cwd": str(root),
        "permission_mode": "default", "hook_event_name": "UserPromptSubmit", "prompt": prompt,
    }).encode()  # fmt: skip


def injected(out: bytes) -> str:
    if not out.strip():
        return ""
    return str(json.loads(out)["hookSpecificOutput"]["additionalContext"])


def run_one(root: Path, case: int, n: int, env: dict[str, str]) -> tuple[float, bool, float]:
    """One hook run for LESSONS[case]: (seconds, whether its lesson was injected, CPU seconds
    it used: what eight at once share the cores for, whatever else the machine runs)."""
    lid, *_, prompt = LESSONS[case]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([str(lore_script()), "hook", "user-prompt-submit"], cwd=root, env=env,
                          input=payload(root, prompt, n), capture_output=True)  # fmt: skip
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"the hook exited {done.returncode}: {done.stderr.decode()}")
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return elapsed, lid in injected(done.stdout), cpu


def parallel(
    root: Path, rounds: int, width: int, env: dict[str, str]
) -> tuple[int, int, list[float]]:
    """`rounds` rounds of `width` hooks started at once: (lessons delivered, asked, each
    round's slowest hook in seconds)."""
    hook = [str(lore_script()), "hook", "user-prompt-submit"]
    delivered = asked = 0
    slowest = []
    for r in range(rounds):
        wait_for_idle(timeout=5)
        started = time.perf_counter()
        procs = []
        for k in range(width):
            case = (r * width + k) % len(LESSONS)
            proc = subprocess.Popen(hook, cwd=root, env=env, stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
            procs.append((case, proc, payload(root, LESSONS[case][4], 1000 + r * width + k)))
        for case, proc, data in procs:
            out, _ = proc.communicate(data)
            asked += 1
            delivered += LESSONS[case][0] in injected(out)
        slowest.append(time.perf_counter() - started)
    return delivered, asked, slowest


def measure(root: Path, actions: int, learnings: int, runs: int, rounds: int) -> dict[str, Any]:
    built = build(root, actions, learnings)
    env = clean_env()
    run_one(root, 0, 0, env)  # warm-up (bytecode, page cache)
    load = [os.getloadavg()[0]]
    times: list[float] = []
    hits: list[bool] = []
    cpus: list[float] = []
    for i in range(runs):
        wait_for_idle(timeout=5)
        elapsed, hit, cpu = run_one(root, i % len(LESSONS), 1 + i, env)
        times.append(elapsed)
        hits.append(hit)
        cpus.append(cpu)
    found = {}
    log = root / ".lore" / "cache" / "hooks.log"
    for case in range(len(LESSONS)):
        wait_for_idle(timeout=5)
        noted = log.read_text() if log.exists() else ""
        hit = run_one(root, case, 100 + case, env)[1]
        spent = "budget" in (log.read_text() if log.exists() else "")[len(noted) :]
        found[LESSONS[case][0]] = "found" if hit else "budget spent" if spent else "missed"
    delivered, asked, slowest = parallel(root, rounds, 8, env)
    load.append(os.getloadavg()[0])
    return {
        "store": {"actions": actions, "learnings": learnings, "build_s": round(built, 1),
                  "path": str(root)},
        "latency": {"p50_s": median(times), "p95_s": pct(times, 0.95), "runs": runs,
                    "delivered": sum(hits), "cpu_p50_s": median(cpus)},
        "prompts": found,
        "parallel": {"delivered": delivered, "asked": asked, "width": 8,
                     "slowest_p50_s": median(slowest)},
        "load_average": load,
    }  # fmt: skip


def report(res: dict[str, Any]) -> None:
    s, lat, par = res["store"], res["latency"], res["parallel"]
    built = f" (built in {s['build_s']} s)" if s["build_s"] else " (reused)"
    print(f"store: {s['actions']:,} actions, {s['learnings']:,} learnings at {s['path']}{built}")
    verdict = "MET" if lat["p95_s"] <= TARGET_P95 else "NOT MET"
    print(f"  latency   p50 {lat['p50_s'] * 1000:6.0f} ms  p95 {lat['p95_s'] * 1000:6.0f} ms "
          f"(target p95 <= {TARGET_P95 * 1000:.0f} ms: {verdict}); lesson injected in "
          f"{lat['delivered']} of {lat['runs']} runs")  # fmt: skip
    cores = os.cpu_count() or 1
    shared = 8 * lat["cpu_p50_s"] / cores * 1000
    print(f"            CPU per hook p50 {lat['cpu_p50_s'] * 1000:.0f} ms (8 at once on {cores} "
          f"cores: ~{shared:.0f} ms each on an idle machine)")  # fmt: skip
    hits = sum(v == "found" for v in res["prompts"].values())
    total = len(res["prompts"])
    print(f"  prompts   lesson found for {hits} of {total} long natural prompts"
          f" ({'MET' if hits == total else 'NOT MET'})")  # fmt: skip
    for lid, what in res["prompts"].items():
        if what != "found":
            print(f"            {what}: {lid}")
    rate = par["delivered"] / max(1, par["asked"])
    print(f"  parallel  {par['width']} hooks at once: {par['delivered']} of {par['asked']} "
          f"lessons delivered ({rate:.0%}; target >= {TARGET_PARALLEL:.0%}: "
          f"{'MET' if rate >= TARGET_PARALLEL else 'NOT MET'}); a round's slowest hook took "
          f"{par['slowest_p50_s'] * 1000:.0f} ms (median; budget 1 s)")  # fmt: skip
    print(f"  load average (1 min) before and after: {res['load_average']}")
    print(f"  {idle_note()}")
    print(f"  machine: {machine()}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        help="100,000 actions / 1,000 learnings instead of 1,000,000 / 10,000",
    )
    parser.add_argument("--store", type=Path, help="where the store is built once and reused "
                        "(default: /tmp/lore-bench-prompt/store-ACTIONS-LEARNINGS)")  # fmt: skip
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=6, help="rounds of 8 concurrent hooks")
    parser.add_argument("--json-out")
    parser.add_argument("--actions", type=int, help="another size (the suite's smoke run)")
    parser.add_argument("--learnings", type=int, help="another size (at least the lessons')")
    args = parser.parse_args(argv)
    actions, learnings = (100_000, 1_000) if args.quick else (1_000_000, 10_000)
    actions, learnings = args.actions or actions, args.learnings or learnings
    root = args.store or Path(f"/tmp/lore-bench-prompt/store-{actions}-{learnings}")
    res = measure(root, actions, learnings, args.runs, args.rounds)
    report(res)
    write_results(args.json_out, "prompt_hook", res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
