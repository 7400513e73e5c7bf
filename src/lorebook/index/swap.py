"""A rebuilt index is built beside the live one and swapped in whole.

A rebuild writes its Chroma folder and manifest into `index.building/` next to `index/`; only
when both are complete does it take the access lock and rename `index/` -> `index.trash/`,
`index.building/` -> `index/`, then delete the trash. A rebuild killed before the swap leaves the
old index serving searches; one killed between the two renames leaves a complete new index
(its manifest is written last) beside the trash, and `settle` moves it in. Leftovers are only
touched under the writer lock, so a running rebuild's folder is never taken from it.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from .lock import IndexBusy, IndexLocks, IndexReadOnly

BUILDING = ".building"  # suffixes of the index folder's siblings
TRASH = ".trash"
COMPLETE = "manifest.json"  # written last: a staged index with one is whole


def building(folder: Path) -> Path:
    return folder.with_name(folder.name + BUILDING)


def trash(folder: Path) -> Path:
    return folder.with_name(folder.name + TRASH)


def recover(folder: Path) -> None:
    """Finish or undo a swap a crash interrupted, and delete what is left over (callers hold
    the writer lock: no rebuild is running)."""
    new, old = building(folder), trash(folder)
    if not folder.exists():
        if (new / COMPLETE).is_file():
            os.rename(new, folder)
        elif old.is_dir():
            os.rename(old, folder)
    for leftover in (new, old):
        if leftover.exists():
            shutil.rmtree(leftover, ignore_errors=True)


def settle(folder: Path, locks: IndexLocks) -> None:
    """`recover` before a search when a rebuild left something behind, unless one is running
    (then its folder is its own and the live index is whole): two stats when nothing is."""
    if not (building(folder).exists() or trash(folder).exists()):
        return
    try:
        with locks.writer(0.0):
            recover(folder)
    except (IndexBusy, IndexReadOnly):
        pass


def swap_in(folder: Path, locks: IndexLocks) -> None:
    """Replace `folder` with its complete staged twin while no search reads either."""
    new, old = building(folder), trash(folder)
    with locks.write():
        if old.exists():
            shutil.rmtree(old)
        if folder.exists():
            os.rename(folder, old)
        os.rename(new, folder)
    shutil.rmtree(old, ignore_errors=True)
