"""`lore actions` and `lore report`: their table entries and bodies. People and agents call them
to look things up, cold, where PostgreSQL answers in ~30 ms: standard library only.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

from ..cmdline.spec import JSON, SCOPE, Command, Group, Opt
from .longwork import catalog_hint, status_line

TYPE_CHECKING = False  # typing costs milliseconds on the cold path; mypy still sees it
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, TextIO

    from .. import Lorebook

ARCHIVE_HELP = "Also read shards archived by `lore archive`."

ACTIONS_OPTIONS = (
    Opt("--type", "action_type", "Only actions of this type (commit, deploy, ...)."),
    Opt("--outcome", "outcome", "success, failure, blocked or in_progress."),
    *SCOPE,
    Opt("--epic", "epic", "Only actions of this epic."),
    Opt("--issue", "issue", "Only actions of this issue."),
    Opt("--session", "session", "Only this session (a unique prefix of its id will do)."),
    Opt("--category", "category", "Only this category (deployment, git, testing, ...)."),
    Opt("--since", "since", "7d, 24h, 30m, 2w, YYYY-MM-DD or an ISO timestamp."),
    Opt("--until", "until", "Same forms as --since; exclusive."),
    Opt("--limit", "limit", "At most this many actions.", kind="count", default=50),
    Opt("--include-archive", "include_archive", ARCHIVE_HELP, kind="flag"),
    JSON,
)

ACTIONS_HELP = """List actions, newest first.

Examples:
  lore actions --type deploy --outcome failure --since 7d
  lore actions --epic epic-012 --json
"""

REPORT_OPTIONS = (
    Opt("--days", "days", "The last N days (default 7).", kind="days"),
    Opt("--since", "since", "Start: 7d, 24h, YYYY-MM-DD or an ISO timestamp."),
    Opt("--until", "until", "End (exclusive); same forms; default now."),
    *SCOPE,
    Opt(
        "--group-by",
        "group_by",
        "Breakdown by day, action type or outcome.",
        choices=("day", "type", "outcome"),  # = lorebook.log.report.GROUPS (a test holds it)
        default="day",
    ),
    Opt("--include-archive", "include_archive", ARCHIVE_HELP, kind="flag"),
    Opt(
        "--include-internal",
        "include_internal",
        "Also count lorebook's own bookkeeping (drafts, reviews, applications, searches).",
        kind="flag",
    ),
    Opt(
        "--html",
        "html",
        "Also write the report as one self-contained HTML file (inline CSS and SVG charts).",
        metavar="FILE",
    ),
    JSON,
)

REPORT_HELP = (
    ("Activity report: totals, success rate, busiest day, deployments, failures, durations.\n")
    + """
lorebook's own bookkeeping (learning_draft, learning_promoted, learning_rejected,
apply_learning, occurrence, search) is left out unless --include-internal.

--html FILE writes the report as one HTML page (no network, nothing external) to
attach to a pull request or a CI run; the text (or --json) is printed as usual.

Examples:
  lore report --days 7 --group-by type
  lore report --days 30 --html report.html
  lore report --since 2026-11-01 --until 2026-11-08 --project consilio --json
  lore report daily                 write docs/reports/daily/<yesterday>.md
  lore report weekly --week 2026-W47
"""
)


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
        query: dict[str, Any] = {
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
            "limit": values.get("limit") or 50,
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
            group_by=values.get("group_by") or "day",
            include_archive=bool(values.get("include_archive")),
            include_internal=bool(values.get("include_internal")),
        )
        written = _write_html(book, values, data) if values.get("html") else None
    if values.get("as_json"):
        return to_json(data)
    from ..render.report import render_text

    return render_text(data) + (f"\n\nHTML report written to {written}" if written else "")


def _write_html(book: Lorebook, values: Mapping[str, Any], data: Mapping[str, Any]) -> str:
    """`--html FILE`: the report and the sessions active in its window, as one HTML page."""
    from ..render.report_html import render_html

    w = data["window"]
    sessions = [
        s.to_dict()
        for s in book.sessions(project=values.get("project"), agent=values.get("agent"))
        if (s.last_activity or s.started or "") >= w["since"] and (s.started or "") < w["until"]
    ]
    return str(book.write_document(values["html"], render_html(data, sessions))["path"])


ACTIONS = Command(
    "actions",
    "queryspec:run_actions",
    options=ACTIONS_OPTIONS,
    help=ACTIONS_HELP,
    book=False,
    quick=True,
)

REPORT = Group(
    "report",
    (
        Command(
            "daily",
            "commands.report_cmd:daily",
            summary="Write docs/reports/daily/<date>.md (actions per hour).",
            options=(
                Opt("--date", "day", "UTC day YYYY-MM-DD (default: yesterday).", metavar="DAY"),
                *SCOPE,
                JSON,
            ),
            help="""Write docs/reports/daily/<date>.md with a Mermaid chart of actions per hour.

Idempotent: re-running it for a date rewrites the same content.

Example (cron, 09:00 UTC every day):
  0 9 * * *  cd /path/to/repo && lore report daily
""",
        ),
        Command(
            "weekly",
            "commands.report_cmd:weekly",
            summary="Write docs/reports/weekly/<iso-week>.md (actions per day).",
            options=(
                Opt(
                    "--week",
                    "week",
                    "ISO week like 2026-W47 (default: the last complete week).",
                    metavar="WEEK",
                ),
                *SCOPE,
                JSON,
            ),
            help="""Write docs/reports/weekly/<iso-week>.md with a Mermaid chart of actions per day.

Example:
  lore report weekly --week 2026-W47
""",
        ),
        Command(
            "kpis",
            "commands.report_cmd:kpis",
            summary="lorebook's success measures, from the action log.",
            options=(Opt("--days", "days", "The last N days (default 30).", kind="days"), JSON),
            help="""lorebook's success measures, from the action log: search before planning,
learning extraction, learning reuse, logging coverage, resume success, logging overhead, log
size.

Each shows its numerator, denominator and target; "n/a" when the log cannot tell.

Examples:
  lore report kpis
  lore report kpis --days 90 --json
""",
        ),
    ),
    help=REPORT_HELP,
    own=Command("report", "queryspec:run_report", options=REPORT_OPTIONS, book=False, quick=True),
)
