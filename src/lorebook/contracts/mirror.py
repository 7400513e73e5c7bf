"""The `lore mirror postgres --json` contract."""

from __future__ import annotations

from typing_extensions import TypedDict


class MirrorResult(TypedDict):
    """What one mirror did (or, with `dry_run`, would do): rows newly stored per table
    (sessions: upserted; learnings: how many the database holds for the repository, sent again
    only when they changed), shards read, batches committed; `dsn` is masked;
    `warnings`: one line each (a password written in the committed config)."""

    repository: str
    name: str
    dsn: str
    dry_run: bool
    schema_version: int
    actions: int
    sessions: int
    learnings: int
    applications: int
    shards_read: int
    shards_resynced: int
    lines_skipped: int
    batches: int
    seconds: float
    warnings: list[str]
