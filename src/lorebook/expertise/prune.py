"""Keep a file under its line limit: prune in the seed's order, least valuable first.

1. learned_from_failures: keep the last 10    3. core_files: keep the first 30
2. effective_patterns: keep the last 15       4. successful_techniques: keep the last 10

Each step runs only while the file is still over the limit; what is left over is reported as a
warning, never silently cut further (people's own entries are theirs to shorten).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .changes import Change
from .files import ExpertiseDoc, line_count, seq_edit

ORDER = (
    ("learned_from_failures", "last", 10),
    ("effective_patterns", "last", 15),
    ("core_files", "first", 30),
    ("successful_techniques", "last", 10),
)


@dataclass
class PruneResult:
    lines: int
    changes: list[Change] = field(default_factory=list)
    warning: str | None = None


def enforce_limit(doc: ExpertiseDoc, max_lines: int) -> PruneResult:
    """Prune `doc` in place until it has at most `max_lines` lines (or nothing is left to cut)."""
    lines = line_count(doc)
    result = PruneResult(lines)
    for key, end, keep in ORDER:
        if lines <= max_lines:
            break
        items = doc.data.get(key)
        if not isinstance(items, list) or len(items) <= keep:
            continue
        dropped = len(items) - keep
        cut = slice(0, dropped) if end == "last" else slice(keep, None)

        def drop(seq: Any, cut: slice = cut) -> None:
            del seq[cut]

        seq_edit(items, drop)
        which = "oldest" if end == "last" else "last"
        result.changes.append(
            Change(
                "pruned",
                f"{key}: dropped the {which} {dropped} (kept {keep})",
                {"key": key, "dropped": dropped, "kept": keep},
            )
        )
        lines = line_count(doc)
    result.lines = lines
    if lines > max_lines:
        result.warning = (
            f"{doc.rel} still has {lines} lines after pruning (limit {max_lines}): shorten "
            "overview, patterns or best_practices by hand"
        )
    return result
