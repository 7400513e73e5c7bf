"""The body of `lore log`.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping

from .. import UsageError, decode_context

TYPE_CHECKING = False  # typing costs milliseconds on the append path; mypy still sees it
if TYPE_CHECKING:
    from typing import Any, TextIO

    from .. import Appender


def parse_context(
    raw: str | None, stdin: TextIO | None = None, max_depth: int = 64
) -> dict[str, Any]:
    """`--context` as JSON text, `@file` or `-` (stdin), nested at most `max_depth` deep."""
    if raw is None:
        return {}
    if raw == "-":
        text = (stdin or sys.stdin).read()
        return decode_context(text, "--context (stdin)", max_depth)
    if raw.startswith("@"):
        from pathlib import Path  # only here: `lore log` does not import pathlib otherwise

        path = Path(raw[1:])
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = getattr(exc, "strerror", None) or str(exc)
            raise UsageError("--context {}: cannot read {}: {}", raw, path, reason) from None
        return decode_context(text, str(path), max_depth)
    return decode_context(raw, "--context", max_depth)


def run_log(
    values: Mapping[str, Any],
    env: Mapping[str, str],
    stdin: TextIO | None = None,
    root: str | None = None,
    stderr: TextIO | None = None,
) -> str:
    """Append the action described by parsed options; return what to print. Logging into a
    session that has ended is kept (an agent's record is never dropped) with one warning."""
    from .. import open_appender

    appender = open_appender(root, env)
    context = parse_context(values.get("context"), stdin, appender.config.log.max_depth)
    session = appender.default_session(values.get("session"))
    if session:
        _warn_if_ended(appender, session, stderr)
    record = appender.log(
        str(values["type"]),
        session=session,
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


def _warn_if_ended(appender: Appender, session: str, stderr: TextIO | None) -> None:
    end = appender.ended(session)
    if end is None:
        return
    from .. import Notice, warn

    ts = str(end.get("ts") or "")
    warn(
        Notice(
            "session {} ended at {} {} UTC ({}); this action is logged in it anyway - log into a "
            "new session (`lore session start` prints its id)",
            session,
            ts[:10],
            ts[11:19],
            end.get("reason") or "normal",
        ),
        stderr,
        appender.sanitizer,
    )
