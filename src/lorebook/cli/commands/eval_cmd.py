"""`lore eval`: search quality on the golden queries kept in git."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ... import SEARCH_MODES, Lorebook
from ...cmdline.spec import JSON, Command, Opt
from ...render.eval import eval_text
from ..output import ProblemPrinter, to_json, warn

EVAL = Command(
    "eval",
    "commands.eval_cmd:eval_",
    options=(
        Opt(
            "--queries",
            "queries_file",
            "Golden-set YAML (default: learnings/eval.yaml in the store).",
            metavar="FILE",
        ),
        Opt(
            "--mode",
            "modes",
            "Evaluate only these modes (repeatable; default: all three).",
            kind="many",
            choices=SEARCH_MODES,
        ),
        JSON,
    ),
    help="""Measure search quality: recall@1, recall@5 and MRR@10 per mode, next to a plain
word-overlap baseline, on golden queries (query + expected learning ids).

The golden set is YAML kept in git:
  queries:
    - query: why is a one-shot lore log slow to start
      expected: [2026-11-22-append-path-import-cost]

Examples:
  lore eval
  lore eval --queries bench/golden.yaml --json
""",
)


def eval_(book: Lorebook, values: dict[str, Any]) -> str:
    problems = ProblemPrinter(sanitizer=book.sanitizer)
    queries = values["queries_file"]
    report = book.evaluate(
        Path(queries) if queries else None, modes=values["modes"], on_problem=problems
    ).to_dict()
    problems.finish()
    if values["as_json"]:
        return to_json(report)
    for warning in report["warnings"]:
        warn(warning, None, book.sanitizer)
    return eval_text(report)
