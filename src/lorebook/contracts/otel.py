"""The `--json` contract of `lore otel export` (see lorebook.contracts)."""

from __future__ import annotations

from typing_extensions import TypedDict


class OtelExport(TypedDict):
    """`lore otel export --json`: what was sent (or, with --dry-run, would be) and where."""

    endpoint: str  # the traces URL without credentials, query or fragment
    dry_run: bool
    content: str  # none | redacted
    semconv: str  # the semantic conventions version the attributes follow
    sessions: int  # sessions sent, one trace each
    unchanged_sessions: int  # left out by --since-last: the receiver has them as they are
    spans: int
    batches: int  # requests the receiver accepted (with --dry-run: that would be sent)
    skipped_lines: int  # invalid log lines left out (lore check names them)
