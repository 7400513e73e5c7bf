"""Pure helpers between the facade's data and the widgets: rows, filters, pretty context."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from lorebook import LoreError

STATUS_STYLE = {"active": "green", "ended": "dim", "disconnected": "yellow"}
OUTCOME_STYLE = {"success": "green", "failure": "red", "blocked": "yellow", "in_progress": "cyan"}
FILTER_KEYS = ("type", "outcome", "project", "agent", "epic", "issue", "session", "since", "until")


def selected_key(table: Any) -> str | None:
    """The row key under a DataTable's cursor (None for an empty table)."""
    if not table.row_count:
        return None
    value = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
    return str(value) if value is not None else None


def short_ts(ts: str | None) -> str:
    return f"{ts[:10]} {ts[11:19]}" if ts else "-"


def duration(seconds: Any) -> str:
    if not isinstance(seconds, int | float):
        return "-"
    if seconds < 60:
        return f"{seconds:.1f}s"
    return f"{seconds / 60:.1f}m"


def parse_filters(text: str) -> dict[str, str]:
    """`type=deploy outcome=failure since=7d` -> filters for `Lorebook.actions`; a bare word
    is a type. Unknown keys are a LoreError naming them."""
    found: dict[str, str] = {}
    for word in text.split():
        key, sep, value = word.partition("=")
        if not sep:
            key, value = "type", word
        if key not in FILTER_KEYS:
            raise LoreError(f"unknown filter {key!r}: use one of {', '.join(FILTER_KEYS)}")
        if not value:
            raise LoreError(f"filter {key!r} has no value: write {key}=VALUE")
        found[key] = value
    return found


def pretty_record(record: dict[str, Any]) -> str:
    """An action as indented JSON (the facade already redacted it)."""
    return json.dumps(record, indent=2, sort_keys=True, ensure_ascii=False, default=str)


class Collector:
    """An `on_problem` callback that keeps what readers skipped, as lines."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def __call__(self, problem: object) -> None:
        self.lines.append(str(problem))

    @property
    def callback(self) -> Callable[[object], None]:
        return self
