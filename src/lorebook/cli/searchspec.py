"""`lore search` and `lore preflight`: their table entries and bodies. An agent asks at every
prompt, and a keyword search is meant to answer in a few times an empty interpreter's start.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

from .. import PREFLIGHT_PHASES, SEARCH_MODES
from ..cmdline.spec import JSON, Arg, Command, Opt
from .longwork import catalog_hint, status_line

TYPE_CHECKING = False  # typing costs milliseconds on the cold path; mypy still sees it
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, TextIO

    from .. import Lorebook
    from ..contracts import SearchOutput

SEVERITIES = ("high", "medium", "low")

_MODE_HELP = "hybrid = keywords + meaning; keyword = BM25 only; semantic = vectors only."

SEARCH_OPTIONS = (
    Opt("--limit", "limit", "How many results.", kind="count", default=5),
    Opt("--mode", "mode", _MODE_HELP, choices=SEARCH_MODES, default="hybrid"),
    Opt(
        "--no-refresh",
        "no_refresh",
        "Search the index as it is (skip the incremental refresh; e.g. when `lore watch` runs).",
        kind="flag",
    ),
    Opt(
        "--threshold",
        "threshold",
        "Minimum similarity 0..1 (default: search.threshold, 0.15).",
        kind="fraction",
        metavar="FLOAT",
    ),
    Opt("--kind", "kind", "Only this kind (lesson, pattern, rca, guide)."),
    Opt("--category", "category", "Only this category."),
    Opt("--severity", "severity", "Only this severity.", choices=SEVERITIES),
    Opt("--tag", "tags", "Must carry this tag (repeatable).", kind="many"),
    Opt("--status", "status", "Only this status (shows superseded/retired ones too)."),
    Opt("--since", "created_from", "Created on or after this day.", metavar="YYYY-MM-DD"),
    Opt("--until", "created_to", "Created on or before this day.", metavar="YYYY-MM-DD"),
    Opt("--all", "include_hidden", "Include superseded and retired learnings.", kind="flag"),
    Opt(
        "--explain",
        "explain",
        "Show each result's score as its keyword, dense and boost parts.",
        kind="flag",
    ),
    JSON,
)

SEARCH_HELP = (
    ("Search the learnings: keyword precision where words match, meaning where they do not.\n")
    + """
Results are ranked by similarity, proven success, recency and specificity; superseded and
retired learnings are hidden unless --all or --status asks for them. The index refreshes
itself from the files first (incrementally).

Example:
  lore search "RLS policy blocks insert"
  lore search deploy port conflict --category deployment --severity high --json
  lore search "RLS policy blocks insert" --explain
"""
)

PREFLIGHT_OPTIONS = (
    Opt(
        "--phase",
        "phase",
        "deploy puts deployment learnings and high severity first.",
        choices=PREFLIGHT_PHASES,
        default="plan",
    ),
    Opt("--mode", "mode", _MODE_HELP, choices=SEARCH_MODES, default="hybrid"),
    Opt("--limit", "limit", "How many learnings.", kind="count", default=5),
    JSON,
)

PREFLIGHT_HELP = """Before planning, implementing or deploying: what the team already learned.

Prints a block to paste into a prompt: RELEVANT PAST LEARNINGS (title + key takeaway),
matching patterns with their best solution and success rate, a prevention checklist and the
domain expertise summary when .expertise/ has one, framed as quoted data (not instructions)
between <lorebook-data> delimiters. Every line is redacted again before it is printed; the
call is logged as a `search` action. `--mode keyword` answers from the
keyword index alone (no model, no vector store).

Example:
  lore preflight "add row level security to the orders table"
  lore preflight "ship the api service" --phase deploy --json
"""


def _open(root: str | None, env: Mapping[str, str], stderr: TextIO | None) -> Lorebook:
    """The store, with its subscribers (the CLI acts for the user) and warnings on stderr."""
    from .. import Lorebook
    from .output import warn

    book = Lorebook.open(root, env=env)
    book.install_subscribers()
    book.index.on_warning(lambda message: warn(message, stderr, book.sanitizer))
    return book


def run_search(
    values: Mapping[str, Any],
    env: Mapping[str, str],
    root: str | None = None,
    stderr: TextIO | None = None,
) -> str:
    """The results for the parsed options, as JSON or text (warnings on stderr)."""
    from .. import SearchFilters
    from ..render.search import search_text
    from .output import to_json

    book = _open(root, env, stderr)
    searcher = book.index
    text = " ".join(values["query"])
    filters = SearchFilters(
        kind=values.get("kind"),
        category=values.get("category"),
        severity=values.get("severity"),
        status=values.get("status"),
        tags=tuple(values.get("tags") or ()),
        created_from=values.get("created_from"),
        created_to=values.get("created_to"),
        include_hidden=bool(values.get("include_hidden")),
    )
    with status_line(book, bool(values.get("as_json")), stderr):
        results = searcher.search(
            text,
            mode=values.get("mode") or "hybrid",
            limit=int(values.get("limit") or 5),
            threshold=values.get("threshold"),
            filters=filters,
            refresh=not values.get("no_refresh"),
        )
    catalog_hint(book, stderr)
    explain = bool(values.get("explain"))
    if values.get("as_json"):
        payload: SearchOutput = {
            "query": results.query,
            "mode": results.mode,
            "results": [r.to_dict(explain=explain) for r in results],
            "warnings": results.warnings,
            "degraded": results.degraded,
        }
        return to_json(payload)
    return search_text(
        results.query, [r.to_dict(explain=explain) for r in results], explain=explain
    )


def run_preflight(
    values: Mapping[str, Any],
    env: Mapping[str, str],
    root: str | None = None,
    stderr: TextIO | None = None,
) -> str:
    """The preflight brief for the parsed options, as JSON or the prompt block."""
    from .output import to_json

    book = _open(root, env, stderr)
    with status_line(book, bool(values.get("as_json")), stderr):
        brief = book.preflight(
            " ".join(values["task"]),
            phase=values.get("phase") or "plan",
            mode=values.get("mode") or "hybrid",
            limit=int(values.get("limit") or 5),
        )
    catalog_hint(book, stderr)
    return to_json(brief) if values.get("as_json") else str(brief["text"])


SEARCH = Command(
    "search",
    "searchspec:run_search",
    args=(Arg("query", "The words to look for.", nargs="+"),),
    options=SEARCH_OPTIONS,
    help=SEARCH_HELP,
    book=False,
)

PREFLIGHT = Command(
    "preflight",
    "searchspec:run_preflight",
    args=(Arg("task", "The task, in words.", nargs="+"),),
    options=PREFLIGHT_OPTIONS,
    help=PREFLIGHT_HELP,
    book=False,
)
