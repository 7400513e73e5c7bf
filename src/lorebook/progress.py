"""The callback through which long work reports how far it is: exporting or loading the
embedding model, building the search index, building or checking the action catalog.

The library never prints: a skin that wants to show progress passes a `Progress` explicitly
(`Lorebook.on_progress`) and renders it (`lorebook.render.progress`). A task calls
`progress(task, done, total)` with `done` from 0, never decreasing, and ends with
`done == total` (total >= 1; a task of one indivisible step reports 0 of 1, then 1 of 1).
Standard library only: the catalog and the index import it on their cold paths.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs milliseconds on cold paths; mypy still sees it
if TYPE_CHECKING:
    from collections.abc import Callable

    Progress = Callable[[str, int, int], None]  # (task, done, total)

# the tasks (what a renderer names them is lorebook.render.progress.LABELS)
MODEL_EXPORT = "model.export"  # once per user and model: torch writes the ONNX export
MODEL_LOAD = "model.load"
INDEX_BUILD = "index.build"  # files looked at / embedded
CATALOG_BUILD = "catalog.build"  # shards read into a new catalog
CATALOG_CHECK = "catalog.check"  # every shard stat-ed (`lore catalog`)
TASKS = (MODEL_EXPORT, MODEL_LOAD, INDEX_BUILD, CATALOG_BUILD, CATALOG_CHECK)


def step(progress: Progress | None, task: str) -> Callable[[], None]:
    """Report a one-step `task` as started; the returned function reports it done."""
    if progress is None:
        return _nothing
    progress(task, 0, 1)
    return lambda: progress(task, 1, 1)


def _nothing() -> None:
    return None
