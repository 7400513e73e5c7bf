"""`lore search`."""

from __future__ import annotations

import click

from ... import SEARCH_MODES, Lorebook, SearchFilters
from ...render.search import search_text
from ..output import to_json
from .common import COUNT, FRACTION, json_option, pass_book
from .index_cmd import warn


def filter_options(func: click.decorators.FC) -> click.decorators.FC:
    for option in reversed(
        [
            click.option("--kind", help="Only this kind (lesson, pattern, rca, guide)."),
            click.option("--category", help="Only this category."),
            click.option(
                "--severity",
                type=click.Choice(["high", "medium", "low"]),
                help="Only this severity.",
            ),
            click.option("--tag", "tags", multiple=True, help="Must carry this tag (repeatable)."),
            click.option("--status", help="Only this status (shows superseded/retired ones too)."),
            click.option(
                "--since",
                "created_from",
                metavar="YYYY-MM-DD",
                help="Created on or after this day.",
            ),
            click.option(
                "--until", "created_to", metavar="YYYY-MM-DD", help="Created on or before this day."
            ),
            click.option(
                "--all",
                "include_hidden",
                is_flag=True,
                help="Include superseded and retired learnings.",
            ),
        ]
    ):
        func = option(func)
    return func


@click.command("search")
@click.argument("query", nargs=-1, required=True)
@click.option("--limit", type=COUNT, default=5, show_default=True, help="How many results.")
@click.option(
    "--mode",
    type=click.Choice(SEARCH_MODES),
    default="hybrid",
    show_default=True,
    help="hybrid = keywords + meaning; keyword = BM25 only; semantic = vectors only.",
)
@click.option(
    "--no-refresh",
    "no_refresh",
    is_flag=True,
    help="Search the index as it is (skip the incremental refresh; e.g. when `lore watch` runs).",
)
@click.option(
    "--threshold",
    type=FRACTION,
    default=None,
    help="Minimum similarity 0..1 (default: search.threshold, 0.15).",
)
@filter_options
@json_option
@pass_book
def search(
    book: Lorebook,
    query: tuple[str, ...],
    limit: int,
    mode: str,
    threshold: float | None,
    no_refresh: bool,
    as_json: bool,
    kind: str | None,
    category: str | None,
    severity: str | None,
    tags: tuple[str, ...],
    status: str | None,
    created_from: str | None,
    created_to: str | None,
    include_hidden: bool,
) -> None:
    """Search the learnings: keyword precision where words match, meaning where they do not.

    Results are ranked by similarity, proven success, recency and specificity; superseded and
    retired learnings are hidden unless --all or --status asks for them. The index refreshes
    itself from the files first (incrementally).

    \b
    Example:
      lore search "RLS policy blocks insert"
      lore search deploy port conflict --category deployment --severity high --json
    """
    text = " ".join(query)
    searcher = book.index
    searcher.on_warning(warn)
    filters = SearchFilters(
        kind=kind,
        category=category,
        severity=severity,
        status=status,
        tags=tags,
        created_from=created_from,
        created_to=created_to,
        include_hidden=include_hidden,
    )
    results = searcher.search(
        text, mode=mode, limit=limit, threshold=threshold, filters=filters, refresh=not no_refresh
    )
    used = searcher.mode_used
    if as_json:
        payload = {
            "query": text,
            "mode": used,
            "results": [r.to_dict() for r in results],
            "warnings": searcher.warnings,
            "degraded": searcher.degraded,
        }
        click.echo(to_json(payload))
    else:
        click.echo(search_text(text, [r.to_dict() for r in results]))
