"""The body of `lore log`, shared by the fast path and the click command."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path

from ..errors import UsageError
from ..log.depth import text_too_deep, too_deep_message

TYPE_CHECKING = False  # typing costs milliseconds on the append path; mypy still sees it
if TYPE_CHECKING:
    from typing import Any, TextIO

    from ..book import Lorebook
    from ..log.append import Appender


def _decode_context(text: str, source: str, max_depth: int) -> Any:
    if text_too_deep(text, max_depth):  # before the decoder recurses into it
        raise UsageError(too_deep_message(source, max_depth))
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"{source}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg} (char {exc.pos})"
        ) from None
    if not isinstance(value, dict):
        raise UsageError(f"{source}: context must be a JSON object, not {type(value).__name__}")
    return value


def parse_context(
    raw: str | None, stdin: TextIO | None = None, max_depth: int = 64
) -> dict[str, Any]:
    """`--context` as JSON text, `@file` or `-` (stdin), nested at most `max_depth` deep."""
    if raw is None:
        return {}
    if raw == "-":
        text = (stdin or sys.stdin).read()
        return dict(_decode_context(text, "--context (stdin)", max_depth))
    if raw.startswith("@"):
        path = Path(raw[1:])
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = getattr(exc, "strerror", None) or str(exc)
            raise UsageError(f"--context {raw}: cannot read {path}: {reason}") from None
        return dict(_decode_context(text, str(path), max_depth))
    return dict(_decode_context(raw, "--context", max_depth))


def watch_knowledge(appender: Appender) -> None:
    """Wake the knowledge subscribers (automatic drafts, RCA lessons) for the records that
    concern them; ordinary records pay one field check and import nothing more."""
    from ..knowledge.gate import install_knowledge_triggers

    def open_book() -> Lorebook:
        from ..book import Lorebook

        return Lorebook.around(appender)

    install_knowledge_triggers(appender.events, open_book, appender.config.drafts)


def run_log(
    values: Mapping[str, Any],
    env: Mapping[str, str],
    stdin: TextIO | None = None,
    root: str | None = None,
) -> str:
    """Append the action described by parsed options; return what to print."""
    from ..log.append import Appender

    appender = Appender.open(root, env)
    watch_knowledge(appender)
    context = parse_context(values.get("context"), stdin, appender.config.log.max_depth)
    record = appender.log(
        str(values["type"]),
        session=values.get("session"),
        agent=values.get("agent"),
        project=values.get("project"),
        context=context,
        outcome=values.get("outcome") or "success",
        category=values.get("category"),
        error=values.get("error"),
        duration_s=values.get("duration"),
        parent=values.get("parent"),
        epic=values.get("epic"),
        issue=values.get("issue"),
    )
    if values.get("json"):
        return json.dumps(record, ensure_ascii=False, sort_keys=True)
    return str(record["id"])
