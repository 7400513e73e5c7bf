"""`lore stats`: applications, success rates and pattern figures, derived from the log."""

from __future__ import annotations

from typing import Any

from ... import Lorebook
from ...cmdline.spec import JSON, Arg, Command
from ...render.stats import stats_table
from ..output import ProblemPrinter, to_json

STATS = Command(
    "stats",
    "commands.stats_cmd:stats",
    args=(Arg("id", "Only this learning (its id or a unique prefix).", nargs="?"),),
    options=(JSON,),
    help="""Applications, success rate and last applied per learning, plus pattern figures.

Every figure is computed from `apply_learning` and `occurrence` actions in the log
(de-duplicated by action id); nothing is stored in the learning files.

Examples:
  lore stats
  lore stats 2026-11-22-rls-policy-blocks-insert-k3x9qa --json
""",
)


def stats(book: Lorebook, values: dict[str, Any]) -> None:
    learning_id = values["id"]
    problems = ProblemPrinter(sanitizer=book.sanitizer)
    entries = book.knowledge.stats(learning_id, on_problem=problems)
    if values["as_json"]:
        print(to_json(entries[0] if learning_id else entries))
    else:
        print(stats_table(entries))
    problems.finish()
