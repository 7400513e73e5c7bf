"""Where the learnings are: the `*.md` files of the learnings and drafts folders, listed
without parsing them (the model and its pydantic stay unloaded), so a caller that only needs
the files -- the mirror's digest, `lore check` -- pays for a directory listing.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from ..paths import OUTSIDE, Layout
from ..problems import OnProblem, Problem


def learning_paths(layout: Layout, folders: Iterable[Path], report: OnProblem) -> list[Path]:
    """The `*.md` files of `folders`, sorted by name per folder; those that resolve outside the
    repository (a symlinked file or folder) are reported as problems and left out."""
    out: list[Path] = []
    for folder in folders:
        try:
            with os.scandir(folder) as entries:
                found = sorted(
                    (e.name, e.is_symlink(), e.is_file()) for e in entries if e.name.endswith(".md")
                )
        except (FileNotFoundError, NotADirectoryError):
            continue
        linked_folder = layout.leaves_repository(folder)  # once per folder: cheap
        for name, is_link, is_file in found:
            path = folder / name
            if (linked_folder or is_link) and layout.leaves_repository(path):
                report(Problem(layout.rel(path), 0, OUTSIDE))
            elif is_file:
                out.append(path)
    return out
