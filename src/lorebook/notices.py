"""One-line warnings and errors on stderr, redacted: what every layer and skin prints.

Warnings echo what a user typed or a file holds and end up in CI logs (disk too), so they go
through the sanitizer first. Below the skins, so the library's own modules can warn without
importing the CLI.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing costs milliseconds on the append path; mypy still sees it
if TYPE_CHECKING:
    from typing import TextIO


def redact_message(text: str) -> str:
    """`text` with secrets and PII replaced by markers, as the log would store it."""
    from .redact.identifiers import redact_message as redact  # on the append path anyway

    return redact(text)


def error_line(message: object, *, as_json: bool = False) -> str:
    """The single stderr line for a failure (a JSON object under --json), redacted: every skin
    (the CLI, the MCP server, the hooks, the TUI) prints its errors through this."""
    text = redact_message(str(message))
    if as_json:
        import json  # (the append path loads it anyway)

        return json.dumps({"error": text}, ensure_ascii=False)
    return f"lore: error: {text}"


def warning_line(message: object) -> str:
    """The stderr line for a warning, redacted."""
    return f"lore: warning: {redact_message(str(message))}"


def warn(message: object, stream: TextIO | None = None) -> None:
    print(warning_line(message), file=stream or sys.stderr)
