"""`lore mirror postgres` for people (pure, from the mirror's result)."""

from __future__ import annotations

from typing import Any


def mirror_text(result: dict[str, Any]) -> str:
    """One line of what was stored (or would be, with --dry-run), and where."""
    verb = "would send" if result["dry_run"] else "stored"
    line = (
        f"{result['name']}: {verb} {result['actions']} action(s), "
        f"{result['applications']} application(s), {result['sessions']} session(s), "
        f"{result['learnings']} learning(s) -> {result['dsn']}"
    )
    extra = []
    if result["shards_resynced"]:
        extra.append(f"{result['shards_resynced']} rewritten shard(s) re-synced by key")
    if result["lines_skipped"]:
        extra.append(f"{result['lines_skipped']} line(s) skipped (see `lore check`)")
    return line + (f" ({'; '.join(extra)})" if extra else "")
