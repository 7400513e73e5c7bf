"""The same records for PostgreSQL: seed 000's schema, and a generated store as COPY input.

Every action -> supervisor_actions (its ULID as the UUID, `parent` -> parent_action_id,
`epic`/`issue` -> related_*, `duration_s` rounded to the seed's integer seconds); every session
-> supervisor_sessions (start/end events, last activity, action count). The seed's
`supervisor_type VARCHAR(10)` cannot hold the agent `claude-code`: longer agent names are cut to
10 characters, the full name kept in `metadata.agent`.
"""

from __future__ import annotations

import csv
import json
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from _common import HERE, wait_for_idle
from _postgres import PrivatePostgres

SCHEMA = HERE / "seed_postgres_schema.sql"
HELPERS_MARK = '-- ---- seed 000, Part B, 1. Database Schema, "Helper Functions:"'
CROCKFORD = {c: i for i, c in enumerate("0123456789ABCDEFGHJKMNPQRSTVWXYZ")}
ACTION_COLUMNS = (
    "id",
    "session_id",
    "supervisor_type",
    "project",
    "action_type",
    "action_category",
    "context",
    "outcome",
    "error_message",
    "duration_seconds",
    "timestamp",
    "metadata",
    "parent_action_id",
    "related_epic_id",
    "related_issue_id",
)
SESSION_COLUMNS = (
    "session_id",
    "supervisor_type",
    "project",
    "started_at",
    "last_activity",
    "ended_at",
    "session_type",
    "disconnect_reason",
    "total_actions",
    "metadata",
)


def ulid_uuid(ulid: str) -> str:
    """A ULID's 128 bits as a UUID (the seed's primary key type)."""
    value = 0
    for char in ulid:
        value = value * 32 + CROCKFORD[char]
    return str(uuid.UUID(int=value))


def shard_records(root: Path) -> Iterator[dict[str, Any]]:
    for shard in sorted((root / "actionlog").glob("[0-9]*/*/*/*.jsonl")):
        with shard.open(encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    yield json.loads(line)


def dump(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def agent_columns(agent: str, meta: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """supervisor_type (VARCHAR(10) in the seed) and metadata for an agent name."""
    if len(agent) <= 10:
        return agent, meta
    return agent[:10], {**meta, "agent": agent}


def write_csv(root: Path, out: Path) -> dict[str, Any]:
    """Both tables as CSV files for COPY (cached beside the store); returns counts and the
    largest epic."""
    info_file = out / "info.json"
    if info_file.exists():
        return dict(json.loads(info_file.read_text()))
    out.mkdir(parents=True, exist_ok=True)
    sessions: dict[str, dict[str, Any]] = {}
    epics: Counter[str] = Counter()
    actions = 0
    with (out / "actions.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        for record in shard_records(root):
            sid = record["session"]
            info = sessions.setdefault(
                sid,
                {
                    "agent": record["agent"],
                    "project": record.get("project"),
                    "started": record["ts"],
                    "type": "cli",
                    "meta": {},
                    "ended": None,
                    "reason": None,
                    "count": 0,
                    "last": record["ts"],
                },
            )
            info["last"] = max(info["last"], record["ts"])
            if record["kind"] == "session":
                if record["event"] == "start":
                    info.update(
                        started=record["ts"],
                        type=record.get("session_type", "cli"),
                        meta=record.get("meta") or {},
                    )
                else:
                    info.update(ended=record["ts"], reason=record.get("reason"))
                continue
            info["count"] += 1
            actions += 1
            if record.get("epic"):
                epics[record["epic"]] += 1
            kind, meta = agent_columns(record["agent"], record.get("meta") or {})
            duration = record.get("duration_s")
            writer.writerow(
                [
                    ulid_uuid(record["id"]),
                    sid,
                    kind,
                    record.get("project"),
                    record["type"],
                    record.get("category"),
                    dump(record.get("context") or {}),
                    record["outcome"],
                    record.get("error"),
                    None if duration is None else round(duration),
                    record["ts"],
                    dump(meta),
                    ulid_uuid(record["parent"]) if record.get("parent") else None,
                    record.get("epic"),
                    record.get("issue"),
                ]
            )
    with (out / "sessions.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        for sid, s in sessions.items():
            kind, meta = agent_columns(s["agent"], s["meta"])
            writer.writerow(
                [
                    sid,
                    kind,
                    s["project"],
                    s["started"],
                    s["last"],
                    s["ended"],
                    s["type"],
                    s["reason"],
                    s["count"],
                    dump(meta),
                ]
            )
    epic, epic_rows = epics.most_common(1)[0]
    info = {"actions": actions, "sessions": len(sessions), "epic": epic, "epic_rows": epic_rows}
    info_file.write_text(json.dumps(info) + "\n")
    return info


def create_schema(pg: PrivatePostgres) -> str | None:
    """The seed's tables and indexes (must succeed); then its helper functions and view, whose
    failure is reported, not fatal (the benchmark uses the seed's query patterns, not them)."""
    text = SCHEMA.read_text()
    tables, _, helpers = text.partition(HELPERS_MARK)
    pg.psql(stdin=tables)
    done = pg.psql(stdin=HELPERS_MARK + helpers, check=False)
    if done.returncode != 0:
        return done.stderr.strip().splitlines()[0] if done.stderr.strip() else "failed"
    return None


def copy_load(conn: Any, csv_dir: Path) -> float:
    """COPY both tables (emptied first, untimed); seconds from the first byte to the commit."""
    with conn.cursor() as cur:
        cur.execute("TRUNCATE supervisor_actions, supervisor_sessions")
    conn.commit()
    wait_for_idle()
    started = time.perf_counter()
    with conn.cursor() as cur:
        for table, columns in (
            ("supervisor_sessions", SESSION_COLUMNS),
            ("supervisor_actions", ACTION_COLUMNS),
        ):
            sql = f"COPY {table} ({', '.join(columns)}) FROM STDIN (FORMAT csv)"
            with cur.copy(sql) as copy, (csv_dir / f"{table.split('_')[1]}.csv").open("rb") as f:
                while block := f.read(1 << 20):
                    copy.write(block)
    conn.commit()
    return time.perf_counter() - started
