"""`lore archive` / `lore prune` for people (pure, from `RetentionResult.to_dict()`)."""

from __future__ import annotations

from typing import Any

_VERBS = {"archive": "archived", "prune": "deleted"}


def retention_text(result: dict[str, Any]) -> str:
    """Each shard (or archive) handled, then a count with the cut-off and the failures."""
    verb = _VERBS[result["action"]]
    if result["dry_run"]:
        verb = f"would be {verb}"
    lines = [f"{entry.get('shard') or entry['archive']}" for entry in result["done"]]
    failed = f"; {len(result['failed'])} failed" if result["failed"] else ""
    lines.append(f"{len(result['done'])} shard(s) {verb} (days before {result['cutoff']}){failed}")
    return "\n".join(lines)


def first_failure(result: dict[str, Any]) -> str | None:
    """The error line for a run where some shards failed (None when all went well)."""
    if not result["failed"]:
        return None
    first = result["failed"][0]
    more = f" (and {len(result['failed']) - 1} more)" if len(result["failed"]) > 1 else ""
    return f"{first.get('shard') or first['archive']}: {first['error']}{more}"
