"""One change to an expertise file, and the structured commit message that lists them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..redact.sanitize import clip

SUBJECT_PREFIX = "lore(expertise): "


@dataclass(frozen=True)
class Change:
    """`type` is one of: failure_learning, failure_merged, pattern_discovered, file_discovered,
    technique_learned, file_removed, stale_failures_removed, pruned."""

    type: str
    summary: str
    data: Any = None

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "summary": self.summary, "data": self.data}


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def commit_message(domain: str, changes: Sequence[Change], why: str) -> str:
    """`lore(expertise): <domain>: <n> changes`, a line saying why, then one line per change."""
    lines = [f"{SUBJECT_PREFIX}{domain}: {plural(len(changes), 'change')}", "", why, ""]
    lines += [f"- {c.type}: {one_line(c.summary)}" for c in changes]
    return "\n".join(lines) + "\n"


def one_line(text: str, limit: int = 160) -> str:
    """Redacted text on one line, cut to `limit` characters (never inside a marker)."""
    return clip(" ".join(str(text).split()), limit)
