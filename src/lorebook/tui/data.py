"""Pure helpers between the facade's data and the widgets: rows, filters, pretty context."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from lorebook import Lorebook, LoreError, redact_message

STATUS_STYLE = {"active": "green", "ended": "dim", "disconnected": "yellow"}
OUTCOME_STYLE = {"success": "green", "failure": "red", "blocked": "yellow", "in_progress": "cyan"}
SESSION_KEYS = ("project", "agent", "status", "since", "until")
FILTER_KEYS = ("type", "outcome", "project", "agent", "epic", "issue", "session", "since", "until")


def selected_key(table: Any) -> str | None:
    """The row key under a DataTable's cursor (None for an empty table)."""
    if not table.row_count:
        return None
    value = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
    return str(value) if value is not None else None


def focus_now(widget: Any) -> None:
    """Focus `widget` before the next event is handled. `Widget.focus` waits its turn in the
    message queue: keys typed in a burst while the app was busy (a model loading) are queued
    before it and went to the old focus, as hotkeys or lost."""
    widget.screen.set_focus(widget)


def failure(exc: object, book: Lorebook) -> str:
    """A failure as the one line a notification shows, redacted like the CLI's error line:
    with the store's rules (its extra patterns too), and a LoreError's values only, so that
    lorebook's words stay readable."""
    return redact_message(exc, book.sanitizer)


def short_ts(ts: str | None) -> str:
    return f"{ts[:10]} {ts[11:19]}" if ts else "-"


def parse_filters(text: str) -> dict[str, str]:
    """`type=deploy outcome=failure since=7d` -> filters for `Lorebook.actions`; a bare word
    is a type. Unknown keys are a LoreError naming them."""
    found: dict[str, str] = {}
    for word in text.split():
        key, sep, value = word.partition("=")
        if not sep:
            key, value = "type", word
        if key not in FILTER_KEYS:
            raise LoreError("unknown filter {!r}: use one of {}", key, ", ".join(FILTER_KEYS))
        if not value:
            raise LoreError("filter {!r} has no value: write {}=VALUE", key, key)
        found[key] = value
    return found


def parse_session_filters(text: str) -> dict[str, str]:
    """`project=web status=failed since=7d deploy` -> filters for `Lorebook.sessions`; bare
    words are free text (matched together). Unknown keys are a LoreError naming them."""
    found: dict[str, str] = {}
    words: list[str] = []
    for word in text.split():
        key, sep, value = word.partition("=")
        if not sep:
            words.append(word)
            continue
        if key not in SESSION_KEYS:
            raise LoreError("unknown filter {!r}: use one of {}", key, ", ".join(SESSION_KEYS))
        if not value:
            raise LoreError("filter {!r} has no value: write {}=VALUE", key, key)
        found[key] = value
    if words:
        found["text"] = " ".join(words)
    return found


Boundary = tuple[str, str]  # (ts, id) of the last row of a page: where the next one starts


def page_after(
    book: Lorebook,
    filters: dict[str, Any],
    boundary: Boundary | None,
    size: int,
    on_problem: Callable[[Any], None] | None = None,
) -> list[dict[str, Any]]:
    """Up to `size` actions matching `filters`, newest first, strictly older than `boundary`
    (None: from the newest). A keyset page: one short query whose cost does not grow with how
    far back it is, so paging back is as cheap as paging on, and no cursor stays open.

    Rows come in (ts, id) order, newest first; the window ends 1 ms after the boundary's
    timestamp (the query's `until` is exclusive, to the millisecond) and the rows of that
    millisecond at or above the boundary are dropped. Every row shown is older than a filter's
    own `until`, so the boundary's window is always within it."""
    query = dict(filters)
    if boundary is not None:
        moment = datetime.fromisoformat(boundary[0].replace("Z", "+00:00"))
        query["until"] = moment + timedelta(milliseconds=1)
    stream = book.stream_actions(on_problem=on_problem or (lambda _: None), **query)
    rows: list[dict[str, Any]] = []
    try:
        for record in stream:
            if boundary is not None and (record["ts"], record["id"]) >= boundary:
                continue  # the boundary's millisecond: shown on the page before
            rows.append(record)
            if len(rows) >= size:
                break
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            close()  # the catalog's connection and files, now
    return rows


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
