"""Generate a realistic synthetic lorebook store, fast, by writing shards directly.

    python benchmarks/generate_store.py DIR --actions 1000000 --days 730 [--seed 1] [--end DATE]

The store is created with `Lorebook.init(DIR)`; shards are then written directly (not through the
writer, which would redact and lock every line) as canonical lines built with
`lorebook.log.writer.encode`, at the path given by `lorebook.log.writer.shard_path`.

What it contains, for every day of the window and every (project, agent) pair:

* 5-15 sessions a day, each a `start` event, its actions and (for ~93 % of them) an `end` event;
  the rest have no end (disconnected). Sessions that run past midnight continue in the next
  day's shard, exactly as the writer would put them.
* actions of the seed's types (spawn, commit, push, pr, deploy, plan, validate, search,
  tool_call) with contexts of ~200-600 bytes, ~5 % failures, ~1 % blocked, an epic per project
  that moves on every few days, and `in_progress` spawns/deploys closed by a later action with
  `parent` (left open when the session disconnects first).
* the newest session of the first project is a disconnected one with a subagent still running:
  the case `lore resume` is for.

The output depends only on (--actions, --days, --seed, --end): session plans and per-session
random streams are derived from the seed, so the worker count does not change a byte. ULIDs use
lorebook's encoding (`lorebook.ids`) with the seeded random part: `new_ulid` itself draws from
`os.urandom` and could not be reproducible. Every record is checked with
`lorebook.model.validate_record` before it is written.

The history ends at `--end` (a date means 00:00 UTC of that day; default: today), so with the
default the newest records are less than a day old.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from lorebook.ids import ulid_ms
from lorebook.log.writer import encode, shard_path
from lorebook.model import ULID_RE, infer_category, validate_record
from lorebook.timeutil import format_ts

# -- vocabulary --------------------------------------------------------------------------------

PAIRS = (  # (project, agent, session_type)
    ("consilio", "PS", "cli"),
    ("consilio", "claude-code", "hook"),
    ("odin-api", "PS", "cli"),
    ("odin-api", "codex", "mcp"),
    ("atlas-web", "claude-code", "hook"),
)
HOSTS = ("dev-ws-01", "dev-ws-02", "ci-runner-7", "laptop-ps")
TYPE_WEIGHTS = (
    ("tool_call", 28),
    ("search", 12),
    ("commit", 12),
    ("validate", 10),
    ("plan", 7),
    ("spawn", 10),
    ("push", 8),
    ("pr", 5),
    ("deploy", 8),
)
TYPES = [t for t, _ in TYPE_WEIGHTS]
WEIGHTS = [w for _, w in TYPE_WEIGHTS]
END_REASONS = (
    ("normal", 90),
    ("timeout", 4),
    ("user_exit", 4),
    ("network_disconnect", 1),
    ("error", 1),
)
DIRS = (
    "src/auth",
    "src/api",
    "src/db",
    "src/ui/components",
    "src/billing",
    "tests/unit",
    "tests/integration",
    "supabase/migrations",
    "infra/terraform",
    "docs",
)
STEMS = (
    "session",
    "policy",
    "handler",
    "client",
    "schema",
    "router",
    "models",
    "service",
    "cache",
    "queue",
    "retry",
    "config",
    "middleware",
    "views",
    "serializers",
    "worker",
)
EXTS = (".py", ".ts", ".tsx", ".sql", ".yaml", ".md")
VERBS = (
    "Fix",
    "Add",
    "Refactor",
    "Remove",
    "Rename",
    "Harden",
    "Speed up",
    "Document",
    "Test",
    "Handle",
)
OBJECTS = (
    "RLS policy for anon inserts",
    "retry on 429 from the payments API",
    "token refresh race in the auth client",
    "N+1 query in the orders endpoint",
    "flaky websocket reconnect test",
    "migration for invoice line items",
    "pagination cursor encoding",
    "timezone handling in daily reports",
    "feature flag for the new onboarding flow",
    "error boundary on the settings page",
    "rate limiter configuration",
    "dead-letter queue consumer",
    "health check endpoint",
    "CSV export of audit events",
)
SERVICES = ("api", "web", "worker", "billing", "auth", "search-indexer")
ENVS = ("staging", "staging", "staging", "production", "preview")
TOOLS = (
    ("Bash", "command"),
    ("Read", "file_path"),
    ("Edit", "file_path"),
    ("Grep", "pattern"),
    ("Write", "file_path"),
    ("WebFetch", "url"),
)
COMMANDS = (
    "pytest -q tests/unit -k {stem}",
    "npm run test -- {stem}",
    "ruff check src/",
    "alembic upgrade head",
    "docker compose up -d db",
    "make lint typecheck",
    "git diff --stat HEAD~1",
    "supabase db push --dry-run",
    "mypy src/{stem}.py",
)
QUERIES = (
    "rls policy blocks insert",
    "auth token refresh",
    "deploy rollback procedure",
    "flaky test websocket",
    "database migration lock timeout",
    "rate limit 429 retry",
    "supabase anon key mutation",
    "react hydration mismatch",
    "celery task retries",
)
SUBAGENTS = ("implementer", "reviewer", "tester", "researcher", "planner")
VALIDATIONS = ("acceptance", "unit", "integration", "lint", "typecheck", "e2e")
FAILURES = (
    "test_login_redirect",
    "test_invoice_totals",
    "AC-3 export includes header",
    "AC-5 empty state shown",
    "test_retry_backoff",
    "type error in router.ts:42",
    "E501 line too long",
    "test_websocket_reconnect",
)
ERRORS = {
    "deploy": (
        "health check failed after 120s: /healthz returned 503",
        "image pull back-off: manifest unknown",
        "migration lock timeout",
    ),
    "validate": ("2 acceptance criteria failed", "3 tests failed", "lint found 4 problems"),
    "push": ("rejected: non-fast-forward", "remote: permission denied to protected branch"),
    "pr": ("required check 'ci' failed", "merge conflict in src/api/router.py"),
    "commit": ("pre-commit hook failed: ruff", "nothing to commit, working tree clean"),
    "spawn": ("subagent exited with status 1", "subagent timed out after 30 minutes"),
    "tool_call": ("exit status 1", "file not found", "command timed out after 120s"),
    "search": ("index not ready: rebuild running",),
    "plan": ("plan rejected: missing acceptance criteria",),
}
ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"  # Crockford base32, as lorebook.ids


# -- helpers -------------------------------------------------------------------------------------


def ulid(ms: int, rng: random.Random) -> str:
    """A ULID for `ms` with a seeded random part (same layout as `lorebook.ids.new_ulid`)."""
    value = (ms << 80) | (rng.getrandbits(80) >> 1)
    out = []
    for _ in range(26):
        out.append(ALPHABET[value & 31])
        value >>= 5
    return "".join(reversed(out))


def files(rng: random.Random, count: int) -> list[str]:
    return sorted(
        {f"{rng.choice(DIRS)}/{rng.choice(STEMS)}{rng.choice(EXTS)}" for _ in range(count)}
    )


def short_hash(rng: random.Random) -> str:
    return f"{rng.getrandbits(28):07x}"


def subject(rng: random.Random) -> str:
    return f"{rng.choice(VERBS)} {rng.choice(OBJECTS)}"


@dataclass
class Ctx:
    """What a session knows while it generates its actions."""

    rng: random.Random
    epic: str
    issue: str | None
    branch: str


def context_for(kind: str, c: Ctx) -> dict[str, Any]:
    """A realistic context (~200-600 bytes encoded) for an action type."""
    rng = c.rng
    if kind == "commit":
        return {
            "commit_hash": short_hash(rng),
            "message": f"{subject(rng)}\n\nRefs {c.epic}.",
            "files": files(rng, rng.randint(2, 10)),
            "branch": c.branch,
            "author": rng.choice(["agent", "PS", "claude-code"]),
            "insertions": rng.randint(1, 400),
            "deletions": rng.randint(0, 200),
        }
    if kind == "push":
        return {
            "branch": c.branch,
            "remote": "origin",
            "commits": rng.randint(1, 6),
            "head": short_hash(rng),
            "files_changed": files(rng, rng.randint(1, 6)),
            "message": subject(rng),
            "upstream": f"origin/{c.branch}",
            "forced": False,
        }
    if kind == "pr":
        number = rng.randint(100, 4000)
        return {
            "number": number,
            "title": subject(rng),
            "branch": c.branch,
            "base": "main",
            "url": f"https://github.com/example/{c.branch.split('/')[0]}/pull/{number}",
            "reviewers": rng.sample(["alice", "bob", "carol", "dan"], 2),
            "labels": rng.sample(["bug", "backend", "frontend", "db", "security"], 2),
        }
    if kind == "deploy":
        service = rng.choice(SERVICES)
        return {
            "service": service,
            "environment": rng.choice(ENVS),
            "version": f"v{rng.randint(1, 4)}.{rng.randint(0, 40)}.{rng.randint(0, 20)}",
            "commit_hash": short_hash(rng),
            "epic_id": c.epic,
            "url": f"https://{service}.staging.example.com",
            "health_check": {"path": "/healthz", "timeout_s": 120, "retries": 3},
            "strategy": rng.choice(["rolling", "blue-green", "canary"]),
        }
    if kind == "plan":
        return {
            "task": subject(rng),
            "epic_id": c.epic,
            "approach": "Reproduce with a failing test, fix the narrowest layer, then "
            "re-run the suite and update the docs.",
            "steps": [subject(rng) for _ in range(rng.randint(2, 5))],
            "estimate_minutes": rng.choice([15, 30, 45, 60, 90, 120]),
        }
    if kind == "validate":
        return {
            "validation_type": rng.choice(VALIDATIONS),
            "epic_id": c.epic,
            "checks": rng.randint(5, 60),
            "duration_ms": rng.randint(800, 90000),
            "criteria": [subject(rng) for _ in range(rng.randint(1, 3))],
            "command": rng.choice(COMMANDS).format(stem=rng.choice(STEMS)),
            "files": files(rng, rng.randint(1, 4)),
        }
    if kind == "search":
        return {
            "query": rng.choice(QUERIES),
            "scope": rng.choice(["learnings", "code", "docs"]),
            "results": rng.randint(0, 12),
            "filters": {
                "kind": rng.choice(["lesson", "pattern", "rca"]),
                "severity": rng.choice(["high", "medium"]),
                "min_similarity": 0.35,
            },
            "top": [
                f"2025-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}-"
                f"{rng.choice(STEMS)}-{rng.choice(STEMS)}"
                for _ in range(rng.randint(2, 6))
            ],
            "latency_ms": rng.randint(3, 400),
        }
    if kind == "spawn":
        return {
            "agent_id": f"{rng.getrandbits(40):010x}",
            "subagent_type": rng.choice(SUBAGENTS),
            "task_description": f"{subject(rng)} ({c.epic})",
            "epic_id": c.epic,
            "files": files(rng, rng.randint(1, 5)),
            "model": "sonnet",
            "max_turns": rng.choice([20, 40, 80]),
        }
    tool, arg = rng.choice(TOOLS)
    value: Any
    if arg == "command":
        value = rng.choice(COMMANDS).format(stem=rng.choice(STEMS))
    elif arg == "url":
        value = f"https://docs.example.com/{rng.choice(STEMS)}/{rng.choice(STEMS)}"
    elif arg == "pattern":
        value = rng.choice(["def .*refresh", "TODO\\(", "anon_key", "retry_after", "useEffect"])
    else:
        value = files(rng, 1)[0]
    return {
        "tool_name": tool,
        "params": {arg: value, "timeout_s": 120},
        "description": f"{subject(rng)} for {c.epic}",
        "exit_code": 0,
        "output_bytes": rng.randint(0, 50000),
        "cwd": f"/home/dev/{c.branch.split('/')[0]}",
        "files": files(rng, rng.randint(0, 5)),
    }


def pick_outcome(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.05:
        return "failure"
    if roll < 0.06:
        return "blocked"
    return "success"


# -- planning ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SessionPlan:
    index: int
    pair: int
    start_ms: int
    actions: int
    ends: bool
    epic: str
    forced_open: bool = False  # the newest session: disconnected with a running subagent


def epic_of(project_index: int, day_index: int, seed: int) -> str:
    """Epics move on every ~5 days per project (deterministic)."""
    offset = (seed * 7 + project_index * 3) % 5
    return f"epic-{(day_index + offset) // 5 + 1 + project_index * 200:03d}"


def plan(actions: int, days: int, seed: int, end: datetime) -> list[SessionPlan]:
    """Every session's pair, start time and action count; the counts add up to `actions`."""
    rng = random.Random(f"plan:{seed}")
    first_day = end - timedelta(days=days)
    raw: list[tuple[int, int, int]] = []  # (start_ms, pair, day_index)
    for day_index in range(days):
        day_start = first_day + timedelta(days=day_index)
        day_ms = int(day_start.timestamp() * 1000)
        for pair in range(len(PAIRS)):
            for _ in range(rng.randint(5, 15)):
                # agents work around the clock: a session may run past midnight UTC
                raw.append((day_ms + rng.randint(0, 24 * 3600 * 1000 - 1), pair, day_index))
    max_sessions = max(1, actions // 10)  # small stores: fewer, longer sessions
    if len(raw) > max_sessions:
        keep = sorted(rng.sample(range(len(raw)), max_sessions))
        raw = [raw[i] for i in keep]
    raw.sort()
    weights = [rng.lognormvariate(0, 0.5) for _ in raw]
    total = sum(weights)
    counts = [max(1, int(w / total * actions)) for w in weights]
    diff = actions - sum(counts)
    step = 1 if diff > 0 else -1
    while diff:
        j = rng.randrange(len(counts))
        if step > 0 or counts[j] > 1:
            counts[j] += step
            diff -= step
    plans = []
    newest_of_first = max((k for k, r in enumerate(raw) if r[1] == 0), default=None)
    for k, ((start_ms, pair, day_index), count) in enumerate(zip(raw, counts, strict=True)):
        project_index = sorted({p for p, _, _ in PAIRS}).index(PAIRS[pair][0])
        forced = k == newest_of_first
        plans.append(
            SessionPlan(
                index=k,
                pair=pair,
                start_ms=start_ms,
                actions=count,
                ends=(not forced) and rng.random() >= 0.07,
                epic=epic_of(project_index, day_index, seed),
                forced_open=forced,
            )
        )
    return plans


# -- generation ----------------------------------------------------------------------------------


def ts_of(ms: int) -> str:
    return format_ts(datetime.fromtimestamp(ms / 1000, UTC))


def session_lines(p: SessionPlan, seed: int, end_ms: int) -> list[tuple[str, str, bytes]]:
    """(ts, session, line) for every record of one session, in time order."""
    rng = random.Random(f"session:{seed}:{p.index}")
    project, agent, session_type = PAIRS[p.pair]
    # every record's time first: the start, one per action, the end (if any)
    times = [p.start_ms]
    for _ in range(p.actions):
        times.append(times[-1] + 1000 + int(rng.expovariate(1 / 40_000)))
    if p.ends:
        times.append(times[-1] + 1000 + rng.randint(0, 30_000))
    overshoot = times[-1] - (end_ms - 1000)
    if overshoot > 0:  # the history ends at --end: start this session earlier
        times = [t - overshoot for t in times]
    sid = ulid(times[0], rng)
    ctx = Ctx(
        rng=rng,
        epic=p.epic,
        issue=f"ISS-{rng.randint(100, 999)}" if rng.random() < 0.3 else None,
        branch=f"{project}/{p.epic}-{rng.choice(STEMS)}",
    )
    records: list[dict[str, Any]] = []
    ms = times[0]
    records.append(
        {
            "v": 1,
            "kind": "session",
            "event": "start",
            "id": ulid(ms, rng),
            "ts": ts_of(ms),
            "session": sid,
            "agent": agent,
            "project": project,
            "session_type": session_type,
            "meta": {"host": HOSTS[(p.pair + p.index) % len(HOSTS)]},
        }
    )
    pending: list[tuple[int, dict[str, Any]]] = []  # (close at action number, opened record)
    forced_spawn_at = p.actions - 2 if p.forced_open else -1
    n = 0
    while n < p.actions:
        ms = times[n + 1]
        due = [item for item in pending if item[0] <= n]
        if due:
            _, opened = due[0]
            pending.remove(due[0])
            outcome = pick_outcome(rng)
            rec = action(
                opened["type"],
                ms,
                sid,
                agent,
                project,
                ctx,
                outcome,
                context=opened["context"],
                parent=opened["id"],
            )
            records.append(rec)
            n += 1
            continue
        kind = "spawn" if n == forced_spawn_at else rng.choices(TYPES, WEIGHTS)[0]
        opens = kind in ("spawn", "deploy") and (n == forced_spawn_at or rng.random() < 0.6)
        can_close = p.actions - n - 1 > 0 and n != forced_spawn_at
        if opens and (can_close or n == forced_spawn_at or not p.ends):
            rec = action(kind, ms, sid, agent, project, ctx, "in_progress")
            records.append(rec)
            if n != forced_spawn_at and can_close:
                pending.append((min(p.actions - 1, n + 1 + rng.randint(1, 8)), rec))
        else:
            rec = action(kind, ms, sid, agent, project, ctx, pick_outcome(rng))
            if kind == "validate" and rec["outcome"] == "failure":
                rec["context"]["failures"] = rng.sample(FAILURES, rng.randint(1, 3))
            records.append(rec)
        n += 1
    if p.ends:
        ms = times[-1]
        reason = rng.choices([r for r, _ in END_REASONS], [w for _, w in END_REASONS])[0]
        records.append(
            {
                "v": 1,
                "kind": "session",
                "event": "end",
                "id": ulid(ms, rng),
                "ts": ts_of(ms),
                "session": sid,
                "agent": agent,
                "project": project,
                "reason": reason,
                "meta": {},
            }
        )
    out = []
    for rec in records:
        problem = validate_record(rec)
        if problem:
            raise SystemExit(f"generated an invalid record ({problem}): {rec}")
        out.append((rec["ts"], sid, encode(rec)))
    out.sort(key=lambda item: item[0])
    return out


def action(
    kind: str,
    ms: int,
    sid: str,
    agent: str,
    project: str,
    ctx: Ctx,
    outcome: str,
    *,
    context: dict[str, Any] | None = None,
    parent: str | None = None,
) -> dict[str, Any]:
    rng = ctx.rng
    failed = outcome in ("failure", "blocked")
    return {
        "v": 1,
        "kind": "action",
        "id": ulid(ms, rng),
        "ts": ts_of(ms),
        "session": sid,
        "agent": agent,
        "project": project,
        "type": kind,
        "category": infer_category(kind),
        "outcome": outcome,
        "context": dict(context) if context is not None else context_for(kind, ctx),
        "error": rng.choice(ERRORS[kind]) if failed else None,
        "duration_s": None if outcome == "in_progress" else round(rng.uniform(0.05, 240), 3),
        "parent": parent,
        "epic": ctx.epic,
        "issue": ctx.issue,
        "meta": {},
    }


def write_chunk(args: tuple[list[SessionPlan], int, int, str]) -> tuple[int, int, int]:
    """Generate and write a chunk of sessions; (actions, records, bytes) written."""
    plans, seed, end_ms, actionlog_dir = args
    actionlog = Path(actionlog_dir)
    made_dirs: set[Path] = set()
    n_actions = n_records = n_bytes = 0
    for p in plans:
        lines = session_lines(p, seed, end_ms)
        by_shard: dict[Path, list[bytes]] = {}
        for ts, sid, line in lines:
            by_shard.setdefault(Path(shard_path(actionlog, ts, sid)), []).append(line)
        for path, chunk in by_shard.items():
            if path.parent not in made_dirs:
                path.parent.mkdir(parents=True, exist_ok=True)
                made_dirs.add(path.parent)
            data = b"".join(chunk)
            with open(path, "ab") as handle:
                handle.write(data)
            n_bytes += len(data)
        n_records += len(lines)
        n_actions += p.actions
    return n_actions, n_records, n_bytes


def parse_end(text: str | None) -> datetime:
    if not text:
        today = datetime.now(UTC).date()
        return datetime(today.year, today.month, today.day, tzinfo=UTC)
    value = datetime.fromisoformat(text)
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def generate(
    root: Path, actions: int, days: int, seed: int, end: datetime, workers: int
) -> dict[str, Any]:
    from lorebook import Lorebook

    started = time.perf_counter()
    if root.exists() and any((root / "actionlog").glob("[0-9][0-9][0-9][0-9]")):
        raise SystemExit(f"{root} already holds shards: generate into a new directory")
    root.mkdir(parents=True, exist_ok=True)
    book = Lorebook.init(root)
    plans = plan(actions, days, seed, end)
    end_ms = int(end.timestamp() * 1000)
    chunks = max(1, workers * 8)
    size = -(-len(plans) // chunks)
    jobs = [
        (plans[i : i + size], seed, end_ms, str(book.layout.actionlog))
        for i in range(0, len(plans), size)
    ]
    if workers > 1:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            results = list(pool.map(write_chunk, jobs))
    else:
        results = [write_chunk(job) for job in jobs]
    n_actions = sum(r[0] for r in results)
    n_records = sum(r[1] for r in results)
    n_bytes = sum(r[2] for r in results)
    elapsed = time.perf_counter() - started
    summary = {
        "root": str(root),
        "actions": n_actions,
        "records": n_records,
        "sessions": len(plans),
        "days": days,
        "seed": seed,
        "end": format_ts(end),
        "bytes": n_bytes,
        "seconds": round(elapsed, 2),
        "workers": workers,
    }
    (book.layout.cache).mkdir(parents=True, exist_ok=True)
    (book.layout.cache / "bench-store.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


def self_check() -> None:
    rng = random.Random(0)
    ms = 1_700_000_000_123
    value = ulid(ms, rng)
    assert ULID_RE.match(value) and ulid_ms(value) == ms, value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Generate a synthetic lorebook store (sessions, actions, epics, failures, "
        "open spawns) by writing shards directly.",
        epilog="example: python benchmarks/generate_store.py /tmp/lore-1m --actions 1000000 "
        "--days 730 --seed 1",
    )
    parser.add_argument("dir", type=Path, help="store root to create (must hold no shards)")
    parser.add_argument(
        "--actions",
        type=int,
        default=1_000_000,
        help="actions to write (exact; session events come on top)",
    )
    parser.add_argument("--days", type=int, default=730, help="days of history")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--end",
        help="end of the history: YYYY-MM-DD (00:00 UTC) or an ISO "
        "timestamp; default: today 00:00 UTC",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=os.cpu_count() or 1,
        help="processes (the output does not depend on it)",
    )
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = parser.parse_args(argv)
    if args.actions < 1 or args.days < 1:
        parser.error("--actions and --days must be positive")
    self_check()
    summary = generate(
        args.dir.resolve(),
        args.actions,
        args.days,
        args.seed,
        parse_end(args.end),
        max(1, args.workers),
    )
    if args.json:
        print(json.dumps(summary))
    else:
        print(
            f"wrote {summary['actions']:,} actions ({summary['records']:,} records, "
            f"{summary['sessions']:,} sessions, {summary['days']} days to {summary['end']}) "
            f"in {summary['seconds']:.1f} s: {summary['bytes'] / 1e6:,.1f} MB "
            f"-> {summary['root']}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
