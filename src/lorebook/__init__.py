"""lorebook: git-native, file-based memory for coding agents.

`from lorebook import Lorebook` is the library API; importing the package loads only the
standard library and lorebook's own light modules. Every skin (the CLI, the MCP server, hooks,
the TUI) imports this package and `lorebook.render`, nothing below them: the other public names
here load their module on first use.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

from .errors import LoreError, UsageError

TYPE_CHECKING = False  # importing typing costs milliseconds on the append path
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path
    from typing import Any

    from .book import Lorebook, Session
    from .index.preflight import PHASES as PREFLIGHT_PHASES
    from .index.rank import MODES as SEARCH_MODES
    from .index.rank import Filters as SearchFilters
    from .knowledge.docload import read_input
    from .log.append import Appender
    from .log.export import FORMATS as EXPORT_FORMATS
    from .log.nesting import clip_json_text, decode_context
    from .log.query import ActionFilter
    from .log.report import GROUPS as REPORT_GROUPS
    from .log.sessions import STATUSES as SESSION_STATUSES
    from .log.timeline import Timeline, TimelineRow
    from .log.tool_activity import error_digest
    from .log.toolsummary import tool_summary
    from .log.workrefs import issue_in_branch, issue_in_text
    from .model import END_REASONS
    from .notices import Notice, error_line, redact_message, warn, warning_line
    from .paths import find_root
    from .problems import Problem
    from .redact.sanitize import Sanitizer
    from .repoid import head_branch
    from .timeutil import format_ts, parse_ts, parse_when

__all__ = [
    "END_REASONS",
    "EXPORT_FORMATS",
    "PREFLIGHT_PHASES",
    "REPORT_GROUPS",
    "SEARCH_MODES",
    "SESSION_STATUSES",
    "ActionFilter",
    "Appender",
    "LoreError",
    "Lorebook",
    "Notice",
    "Problem",
    "Sanitizer",
    "SearchFilters",
    "Session",
    "Timeline",
    "TimelineRow",
    "UsageError",
    "clip_json_text",
    "decode_context",
    "error_digest",
    "error_line",
    "find_root",
    "format_ts",
    "head_branch",
    "issue_in_branch",
    "issue_in_text",
    "open_appender",
    "parse_ts",
    "parse_when",
    "read_input",
    "redact_message",
    "run_demo",
    "store_sanitizer",
    "tool_summary",
    "warn",
    "warning_line",
]
__version__ = "0.1.0"

# public name -> (module under lorebook, its name there); imported on first use
_LAZY = {
    "Lorebook": ("book", "Lorebook"),
    "Session": ("book", "Session"),
    "ActionFilter": ("log.query", "ActionFilter"),
    "Problem": ("problems", "Problem"),
    "Sanitizer": ("redact.sanitize", "Sanitizer"),
    "find_root": ("paths", "find_root"),
    "Appender": ("log.append", "Appender"),
    "decode_context": ("log.nesting", "decode_context"),
    "clip_json_text": ("log.nesting", "clip_json_text"),
    "SearchFilters": ("index.rank", "Filters"),
    "SEARCH_MODES": ("index.rank", "MODES"),
    "PREFLIGHT_PHASES": ("index.preflight", "PHASES"),
    "EXPORT_FORMATS": ("log.export", "FORMATS"),
    "REPORT_GROUPS": ("log.report", "GROUPS"),
    "SESSION_STATUSES": ("log.sessions", "STATUSES"),
    "END_REASONS": ("model", "END_REASONS"),
    "format_ts": ("timeutil", "format_ts"),
    "parse_when": ("timeutil", "parse_when"),
    "parse_ts": ("timeutil", "parse_ts"),
    "read_input": ("knowledge.docload", "read_input"),
    "redact_message": ("notices", "redact_message"),
    "error_line": ("notices", "error_line"),
    "warn": ("notices", "warn"),
    "Notice": ("notices", "Notice"),
    "warning_line": ("notices", "warning_line"),
    "tool_summary": ("log.toolsummary", "tool_summary"),
    "Timeline": ("log.timeline", "Timeline"),
    "TimelineRow": ("log.timeline", "TimelineRow"),
    "error_digest": ("log.tool_activity", "error_digest"),
    "issue_in_branch": ("log.workrefs", "issue_in_branch"),
    "issue_in_text": ("log.workrefs", "issue_in_text"),
    "head_branch": ("repoid", "head_branch"),
    # an application above the facade: named here for `lore demo`, with no import of it
    "run_demo": ("demo", "run_demo"),
}


def __getattr__(name: str) -> Any:
    found = _LAZY.get(name)
    if found is None:
        raise AttributeError(f"module 'lorebook' has no attribute {name!r}")
    module, attr = found
    value = getattr(__import__(f"{__name__}.{module}", fromlist=[attr]), attr)
    globals()[name] = value  # once: later lookups do not come back here
    return value


def open_appender(path: str | Path | None = None, env: Mapping[str, str] | None = None) -> Appender:
    """An `Appender` for one-shot appends (`lore log`, hooks): the knowledge subscribers
    (automatic drafts, RCA lessons) are woken only by the records that concern them, and only
    then is a `Lorebook` built around it, so an ordinary append loads no more than the log."""
    from .knowledge.gate import install_knowledge_triggers
    from .log.append import Appender

    appender = Appender.open(path, env)

    def open_book() -> Lorebook:  # only when a record wakes the gate: the API is not cheap
        from .book import Lorebook

        return Lorebook.around(appender)

    install_knowledge_triggers(
        appender.events, lambda: open_book().knowledge, appender.config.drafts
    )
    return appender


def store_sanitizer(
    path: str | Path | None = None, env: Mapping[str, str] | None = None
) -> Sanitizer | None:
    """The sanitizer of the store at `path` (else LORE_ROOT, else the nearest store), built
    from its `redaction` settings (`extra_patterns` included): what an error line printed
    after a command failed to start is redacted with. None when there is no store or its
    config cannot be read; the printers then fall back to the default rules. The error path
    only: the config is read from its cache, so this costs a few milliseconds."""
    import os

    try:
        return open_appender(path, os.environ if env is None else env).sanitizer
    except Exception:  # the error being reported may be this very store's: say it anyway
        return None
