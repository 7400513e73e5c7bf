"""`lore eval`: search quality on the golden queries kept in git."""

from __future__ import annotations

from pathlib import Path

import click

from ...book import Lorebook
from ...index.evaluate import MODES, EvalReport, evaluate_index, load_golden
from ..output import ProblemPrinter, to_json, warning_line
from .common import json_option, pass_book


def render_report(report: EvalReport, shown_misses: int = 10) -> str:
    """The human table: one row per mode, then the hybrid misses."""
    golden = report.golden
    lines = [f"{golden.path}: {len(golden.queries)} golden queries", ""]
    lines.append(f"{'mode':<10} {'recall@1':>9} {'recall@5':>9} {'MRR@10':>8}")
    for mode, m in report.metrics().items():
        lines.append(f"{mode:<10} {m.recall_at_1:>9.2f} {m.recall_at_5:>9.2f} {m.mrr_at_10:>8.2f}")
    if "hybrid" in report.modes:
        misses = report.misses("hybrid")
        if misses:
            lines += ["", "Not in the hybrid top 5:"]
            for q in misses[:shown_misses]:
                lines.append(f"  line {q.line}: {q.query}  (expected {', '.join(q.expected)})")
            if len(misses) > shown_misses:
                lines.append(f"  … {len(misses) - shown_misses} more (see --json)")
    return "\n".join(lines)


@click.command("eval")
@click.option(
    "--queries",
    "queries_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Golden-set YAML (default: learnings/eval.yaml in the store).",
)
@click.option(
    "--mode",
    "modes",
    type=click.Choice(MODES),
    multiple=True,
    help="Evaluate only these modes (repeatable; default: all three).",
)
@json_option
@pass_book
def eval_(book: Lorebook, queries_file: Path | None, modes: tuple[str, ...], as_json: bool) -> None:
    """Measure search quality: recall@1, recall@5 and MRR@10 per mode, next to a plain
    word-overlap baseline, on golden queries (query + expected learning ids).

    \b
    The golden set is YAML kept in git:
      queries:
        - query: why is a one-shot lore log slow to start
          expected: [2026-11-22-append-path-import-cost]

    \b
    Examples:
      lore eval
      lore eval --queries bench/golden.yaml --json
    """
    golden = load_golden(queries_file or book.layout.learnings / "eval.yaml")
    problems = ProblemPrinter()
    report = evaluate_index(book.index, golden, modes=modes or MODES, on_problem=problems)
    problems.finish()
    if as_json:
        click.echo(to_json(report.to_dict()))
    else:
        for warning in report.golden.warnings:
            click.echo(warning_line(warning), err=True)
        click.echo(render_report(report))
