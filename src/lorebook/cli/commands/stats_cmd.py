"""`lore stats`: applications, success rates and pattern figures, derived from the log."""

from __future__ import annotations

from typing import Any

import click

from ...book import Lorebook
from ..output import ProblemPrinter, to_json
from .common import json_option, pass_book


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def render(entries: list[dict[str, Any]]) -> str:
    """A table for people; patterns get their solutions and trend underneath."""
    if not entries:
        return "no learnings yet (see `lore learn new` and `lore pattern new`)"
    lines = [f"{'ID':<48} {'APPLIED':>7} {'SUCCESS':>7}  LAST APPLIED"]
    for e in entries:
        last = (e["last_applied"] or "-")[:16].replace("T", " ")
        lines.append(f"{e['id']:<48} {e['applications']:>7} {_pct(e['success_rate']):>7}  {last}")
        pattern = e.get("pattern")
        if pattern:
            seen = (pattern["last_seen"] or "-")[:10]
            minutes = pattern["avg_resolution_minutes"]
            avg = "-" if minutes is None else f"{minutes:g} min"
            lines.append(
                f"    pattern: {pattern['occurrence_count']} occurrence(s), "
                f"{_pct(pattern['success_rate'])} resolved, avg {avg}, last seen {seen}, "
                f"trend {pattern['trend']}"
            )
            for sid, s in pattern["solutions"].items():
                lines.append(
                    f"    {sid}: {s['times_successful']}/{s['times_applied']} "
                    f"({_pct(s['success_rate'])})  {s.get('text') or ''}".rstrip()
                )
    return "\n".join(lines)


@click.command("stats")
@click.argument("learning_id", metavar="[ID]", required=False)
@json_option
@pass_book
def stats(book: Lorebook, learning_id: str | None, as_json: bool) -> None:
    """Applications, success rate and last applied per learning, plus pattern figures.

    Every figure is computed from `apply_learning` and `occurrence` actions in the log
    (de-duplicated by action id); nothing is stored in the learning files.

    \b
    Examples:
      lore stats
      lore stats 2026-11-22-rls-policy-blocks-insert-k3x9qa --json
    """
    problems = ProblemPrinter()
    entries = book.knowledge.stats(learning_id, on_problem=problems)
    if as_json:
        click.echo(to_json(entries[0] if learning_id else entries))
    else:
        click.echo(render(entries))
    problems.finish()
