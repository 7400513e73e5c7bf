"""One-line warnings and errors on stderr, redacted: what every layer and skin prints.

Warnings echo what a user typed or a file holds and end up in CI logs (disk too), so they go
through the sanitizer first: the store's, built from its `redaction` settings, whenever the
caller knows the store (every printer here takes it as `sanitizer`); the default rules only
when there is no store to ask (no `lore init` yet, or a config that cannot be read). Below the
skins, so the library's own modules can warn without importing the CLI.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing costs milliseconds on the append path; mypy still sees it
if TYPE_CHECKING:
    from typing import TextIO

    from .redact.sanitize import Sanitizer


class Notice(str):
    """A warning's text that remembers its template, as `LoreError` does: `Notice("skipped {}",
    problem)` is the finished string everywhere (lists, JSON, comparisons), and the printers
    redact only its values, so lorebook's own words are never taken for a secret."""

    template: str
    values: tuple[object, ...]

    def __new__(cls, template: str, *values: object) -> Notice:
        notice = super().__new__(cls, template.format(*values))
        notice.template, notice.values = template, values
        return notice


def redact_message(text: object, sanitizer: Sanitizer | None = None) -> str:
    """`text` with secrets and PII replaced by markers, as the log would store it. A
    `LoreError` built from a template and values (see `LoreError`) has only its values
    redacted: lorebook's own words are never taken for a secret."""
    from .redact.identifiers import redact_message as redact  # on the append path anyway

    template = getattr(text, "template", None)
    if not isinstance(template, str):
        return redact(str(text), sanitizer)
    values = []
    for value in getattr(text, "values", ()):
        shown = str(value)
        clean = redact_message(value, sanitizer)  # a LoreError value: its own values only
        values.append(value if clean == shown else clean)  # (a number keeps its `{!r}`)
    return template.format(*values)


def error_line(
    message: object, *, as_json: bool = False, sanitizer: Sanitizer | None = None
) -> str:
    """The single stderr line for a failure (a JSON object under --json), redacted with
    `sanitizer` (the store's when known): every skin (the CLI, the MCP server, the hooks,
    the TUI) prints its errors through this."""
    text = redact_message(message, sanitizer)
    if as_json:
        import json  # (the append path loads it anyway)

        return json.dumps({"error": text}, ensure_ascii=False)
    return f"lore: error: {text}"


def warning_line(message: object, sanitizer: Sanitizer | None = None) -> str:
    """The stderr line for a warning, redacted with `sanitizer` (the store's when known)."""
    return f"lore: warning: {redact_message(message, sanitizer)}"


def warn(message: object, stream: TextIO | None = None, sanitizer: Sanitizer | None = None) -> None:
    print(warning_line(message, sanitizer), file=stream or sys.stderr)
