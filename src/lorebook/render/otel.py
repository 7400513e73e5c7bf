"""`lore otel export`'s one line (pure, from the JSON shape the API returns)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def otel_exported(result: Mapping[str, Any]) -> str:
    """What was sent where (or would be, with --dry-run), and what the watermark skipped."""
    verb = "would send" if result["dry_run"] else "sent"
    line = (
        f"{verb} {result['sessions']} session(s) as {result['spans']} span(s) in "
        f"{result['batches']} batch(es) to {result['endpoint']}"
    )
    if result["unchanged_sessions"]:
        line += f"; {result['unchanged_sessions']} session(s) unchanged since the last export"
    if result["skipped_lines"]:
        line += f"; {result['skipped_lines']} invalid line(s) skipped (lore check names them)"
    return line
