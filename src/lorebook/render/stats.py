"""`lore stats` for people: applications, success rates and pattern figures (pure)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .table import Row, table


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def stats_table(entries: Sequence[Mapping[str, Any]]) -> str:
    """A table for people; patterns get their solutions and trend underneath."""
    if not entries:
        return "no learnings yet (see `lore learn new` and `lore pattern new`)"
    lines: list[Row] = []
    for e in entries:
        last = (e["last_applied"] or "-")[:16].replace("T", " ")
        lines.append((e["id"], e["applications"], _pct(e["success_rate"]), last))
        pattern = e.get("pattern")
        if pattern:
            seen = (pattern["last_seen"] or "-")[:10]
            minutes = pattern["avg_resolution_minutes"]
            avg = "-" if minutes is None else f"{minutes:g} min"
            lines.append(
                f"    pattern: {pattern['occurrence_count']} occurrence(s), "
                f"{_pct(pattern['success_rate'])} resolved, avg {avg}, last seen {seen}, "
                f"trend {pattern['trend']}"
            )
            for sid, s in pattern["solutions"].items():
                lines.append(
                    f"    {sid}: {s['times_successful']}/{s['times_applied']} "
                    f"({_pct(s['success_rate'])})  {s.get('text') or ''}".rstrip()
                )
    return table(("ID", "APPLIED", "SUCCESS", "LAST APPLIED"), lines, right=(1, 2))
