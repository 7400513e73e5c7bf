"""Which learning files a store has, and the stale ids cached by them: standard library only, so
a keyword search ranks by staleness without loading the front-matter reader (YAML, pydantic)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from contextlib import suppress
from pathlib import Path

from ..errors import LoreError
from ..paths import OUTSIDE, Layout
from ..problems import OnProblem, Problem

STALE_CACHE = "stale-v1.json"


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


def cached_stale_ids(layout: Layout, compute: Callable[[], Iterable[str]]) -> frozenset[str]:
    """Ids of the stale learnings, for ranking. Staleness only changes with a commit or an
    edited learning, so the answer (`compute()`, which reads every learning) is cached under
    `.lore/cache/` keyed by HEAD and the learning files' sizes and times: a search pays the git
    work once per commit."""
    from ..git.binary import head
    from ..problems import ignore
    from ..store import atomic_write

    files = learning_paths(layout, (layout.learnings, layout.drafts), ignore)
    if not files:
        return frozenset()
    commit = head(layout.root)
    if commit is None:  # not a repository, or no commit yet: nothing can be stale
        return frozenset()
    stats = [(p.name, p.stat()) for p in files]
    key = [commit, [[n, st.st_size, st.st_mtime_ns] for n, st in stats]]
    cache = layout.cache / STALE_CACHE
    try:
        saved = json.loads(cache.read_text())
        if saved.get("key") == key:
            return frozenset(saved["stale"])
    except (OSError, ValueError, AttributeError, KeyError, TypeError):
        pass  # missing or unreadable cache: recompute below
    found = sorted(compute())
    with suppress(LoreError):  # a read-only cache only costs the recomputation next time
        atomic_write(cache, json.dumps({"key": key, "stale": found}).encode())
    return frozenset(found)
