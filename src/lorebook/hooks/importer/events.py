"""What a client's session file becomes: the hook events it would have fired, in order.

Shared by the parsers (`claude`, `codex`), the importer (`run`) and the replay benchmark.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TOOL_EVENTS = ("post-tool-use", "post-tool-use-failure")


@dataclass
class Event:
    """One hook event: its normalised name, Claude Code's own name for it, when it happened
    (the line's ISO timestamp, "" when the line had none) and the payload's fields."""

    event: str
    name: str
    at: str
    fields: dict[str, Any]

    @property
    def call(self) -> str | None:
        """The tool-use id of a tool call's event (the dedupe key with client and session)."""
        value = self.fields.get("tool_use_id") if self.event in TOOL_EVENTS else None
        return value if isinstance(value, str) and value else None


@dataclass
class Transcript:
    """One client session read from its files: its id, working directory, events, and the
    lines that could not be read (`file:line: why`, one each)."""

    session: str
    cwd: str
    path: Path
    events: list[Event] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    branch: str = ""

    @property
    def last(self) -> str:
        return max((e.at for e in self.events if e.at), default="")


def read_lines(path: Path, problems: list[str]) -> list[dict[str, Any]]:
    """The JSON objects of a JSONL file; a line that is not one is named in `problems` and
    skipped. OSError (an unreadable file) is the caller's to report."""
    out = []
    with open(path, encoding="utf-8", errors="replace") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except (ValueError, RecursionError):
                problems.append(f"{path}:{number}: not a JSON line; skipped")
                continue
            if isinstance(value, dict):
                out.append(value)
            else:
                problems.append(f"{path}:{number}: not a JSON object; skipped")
    return out


def inside(cwd: str, root: Path) -> bool:
    """True when the directory `cwd` is `root` or lies under it."""
    if not cwd:
        return False
    try:
        path = Path(cwd).resolve()
    except (OSError, RuntimeError):
        return False
    return path == root or root in path.parents
