"""`lore actions` and `lore report`: their options, declared once for the stdlib fast path and the
click commands, and the bodies both run. People and agents call them to look things up; click
and its imports cost 40-80 ms of a cold call that PostgreSQL answers in ~30."""

from __future__ import annotations

from .logspec import Opt
from .longwork import catalog_hint, status_line

TYPE_CHECKING = False  # typing costs milliseconds on the cold path; mypy still sees it
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, TextIO

    from .. import Lorebook

ARCHIVE_HELP = "Also read shards archived by `lore archive`."
JSON_HELP = "Print JSON (stable contract)."

ACTIONS_OPTIONS = (
    Opt("--type", "action_type", "Only actions of this type (commit, deploy, ...)."),
    Opt("--outcome", "outcome", "success, failure, blocked or in_progress."),
    Opt("--project", "project", ""),
    Opt("--agent", "agent", ""),
    Opt("--epic", "epic", ""),
    Opt("--issue", "issue", ""),
    Opt("--session", "session", ""),
    Opt("--category", "category", ""),
    Opt("--since", "since", "7d, 24h, 30m, 2w, YYYY-MM-DD or an ISO timestamp."),
    Opt("--until", "until", "Same forms as --since; exclusive."),
    Opt("--limit", "limit", "", kind="count"),
    Opt("--include-archive", "include_archive", ARCHIVE_HELP, kind="flag"),
    Opt("--json", "as_json", JSON_HELP, kind="flag"),
)
ACTIONS_DEFAULTS: dict[str, Any] = {"limit": 50}

ACTIONS_HELP = """List actions, newest first.

\b
Examples:
  lore actions --type deploy --outcome failure --since 7d
  lore actions --epic epic-012 --json
"""

REPORT_OPTIONS = (
    Opt("--days", "days", "The last N days (default 7).", kind="int"),
    Opt("--since", "since", "Start: 7d, 24h, YYYY-MM-DD or an ISO timestamp."),
    Opt("--until", "until", "End (exclusive); same forms; default now."),
    Opt("--project", "project", ""),
    Opt("--agent", "agent", ""),
    Opt("--group-by", "group_by", "Breakdown by day, action type or outcome.", kind="choice"),
    Opt("--include-archive", "include_archive", ARCHIVE_HELP, kind="flag"),
    Opt(
        "--include-internal",
        "include_internal",
        "Also count lorebook's own bookkeeping (drafts, reviews, applications, searches).",
        kind="flag",
    ),
    Opt("--json", "as_json", JSON_HELP, kind="flag"),
)
REPORT_DEFAULTS: dict[str, Any] = {"group_by": "day"}
REPORT_GROUPS = ("day", "type", "outcome")  # = lorebook.log.report.GROUPS (a test holds it)

REPORT_HELP = (
    ("Activity report: totals, success rate, busiest day, deployments, failures, durations.\n")
    + """
lorebook's own bookkeeping (learning_draft, learning_promoted, learning_rejected,
apply_learning, occurrence, search) is left out unless --include-internal.

\b
Examples:
  lore report --days 7 --group-by type
  lore report --since 2026-11-01 --until 2026-11-08 --project consilio --json
  lore report daily                 write docs/reports/daily/<yesterday>.md
  lore report weekly --week 2026-W47
"""
)


def parse_fast(args: list[str]) -> tuple[Any, dict[str, Any]] | None:
    """(the body to run, its options) for `actions ...` or `report ...` (the command name first);
    None lets click answer."""
    if args[0] == "actions":
        values = parse_actions(args[1:])
        return None if values is None else (run_actions, values)
    values = parse_report(args[1:])
    return None if values is None else (run_report, values)


def parse_actions(args: list[str]) -> dict[str, Any] | None:
    """`actions` arguments parsed without click; None lets click answer (help, errors)."""
    from .logspec import parse_simple

    values = parse_simple(args, ACTIONS_OPTIONS, ())
    return None if values is None else {**ACTIONS_DEFAULTS, **values}


def parse_report(args: list[str]) -> dict[str, Any] | None:
    """`report` arguments (no subcommand) parsed without click; None lets click answer: help,
    `daily`/`weekly`, a --days that is not plain digits, an unknown --group-by."""
    from .logspec import parse_simple

    values = parse_simple(args, REPORT_OPTIONS, ())
    if values is None:
        return None
    days = values.get("days")
    if days is not None:
        if not (isinstance(days, str) and days.isascii() and days.isdigit()):
            return None
        values["days"] = int(days)
    if values.get("group_by", "day") not in REPORT_GROUPS:
        return None
    return {**REPORT_DEFAULTS, **values}


def run_actions(
    values: Mapping[str, Any],
    env: Mapping[str, str],
    root: str | None = None,
    stderr: TextIO | None = None,
) -> str:
    """The matching actions as JSON or a table; skipped lines and the catalog note on stderr."""
    from .. import Lorebook

    book = Lorebook.open(root, env=env)
    try:  # the process ends without interpreter shutdown: close SQLite cleanly first
        return _actions(book, values, stderr)
    finally:
        book.close()


def _actions(book: Lorebook, values: Mapping[str, Any], stderr: TextIO | None) -> str:
    from .. import format_ts, parse_when
    from .output import ProblemPrinter, stdout_is_terminal, to_json

    problems = ProblemPrinter(stream=stderr, sanitizer=book.sanitizer)
    since, until = values.get("since"), values.get("until")
    as_json = bool(values.get("as_json"))
    piped = as_json and not stdout_is_terminal()  # compact JSON, mostly the shards' own bytes
    with status_line(book, as_json, stderr):
        query = {
            "type": values.get("action_type"),
            "outcome": values.get("outcome"),
            "project": values.get("project"),
            "agent": values.get("agent"),
            "epic": values.get("epic"),
            "issue": values.get("issue"),
            "session": values.get("session"),
            "category": values.get("category"),
            "since": format_ts(parse_when(since, option="--since")) if since else None,
            "until": format_ts(parse_when(until, option="--until")) if until else None,
            "limit": values.get("limit") or ACTIONS_DEFAULTS["limit"],
            "on_problem": problems,
            "include_archive": bool(values.get("include_archive")),
        }
        text = book.actions_json(**query) if piped else None
        found = [] if piped else book.actions(**query)
    if text is None and as_json:
        text = to_json(found, tty=True)
    elif text is None:  # the table's module only for people
        from ..render.actions import actions_table

        text = actions_table(found)
    problems.finish()
    catalog_hint(book, stderr)
    return text


def run_report(
    values: Mapping[str, Any],
    env: Mapping[str, str],
    root: str | None = None,
) -> str:
    """The activity report as JSON or text for people."""
    from .. import Lorebook

    book = Lorebook.open(root, env=env)
    try:  # the process ends without interpreter shutdown: close SQLite cleanly first
        return _report(book, values)
    finally:
        book.close()


def _report(book: Lorebook, values: Mapping[str, Any]) -> str:
    from .output import to_json

    with status_line(book, bool(values.get("as_json"))):
        data = book.report(
            days=values.get("days"),
            since=values.get("since"),
            until=values.get("until"),
            project=values.get("project"),
            agent=values.get("agent"),
            group_by=values.get("group_by") or REPORT_DEFAULTS["group_by"],
            include_archive=bool(values.get("include_archive")),
            include_internal=bool(values.get("include_internal")),
        )
    if values.get("as_json"):
        return to_json(data)
    from ..render.report import render_text

    return render_text(data)
