"""`lore index`."""

from __future__ import annotations

from typing import Any

from ... import Lorebook
from ...cmdline.spec import JSON, Command, Opt
from ...render.maintenance import index_text
from ..output import ProblemPrinter, to_json, warn

INDEX = Command(
    "index",
    "commands.index_cmd:index",
    options=(
        Opt(
            "--rebuild", "rebuild", "Drop the index and build it again from the files.", kind="flag"
        ),
        JSON,
    ),
    help="""Bring the search index up to date with learnings/ (incremental by content hash).

The index lives under .lore/cache/index/ and is derived: delete it any time and it is
rebuilt. Unchanged files are never embedded again; deleted files leave the index; files
that cannot be parsed are skipped with file:line.

Example:
  lore index             # added / updated / removed / unchanged
  lore index --rebuild --json
""",
)


def index(book: Lorebook, values: dict[str, Any]) -> str:
    searcher = book.index
    searcher.on_warning(lambda message: warn(message, None, book.sanitizer))
    problems = ProblemPrinter(sanitizer=book.sanitizer)
    report = searcher.update(rebuild=values["rebuild"], on_problem=problems)
    problems.finish()
    model = searcher.embedder()
    data = report.to_dict()
    data["model"] = model.name if model else None
    return to_json(data) if values["as_json"] else index_text(data, data["model"])
