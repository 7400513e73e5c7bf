"""The stale learnings' ids, cached per commit and learning files: standard library only, so a
keyword search ranks by staleness without loading the front-matter reader (YAML, pydantic)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from contextlib import suppress

from ..errors import LoreError
from ..paths import Layout

STALE_CACHE = "stale-v1.json"


def cached_stale_ids(layout: Layout, compute: Callable[[], Iterable[str]]) -> frozenset[str]:
    """Ids of the stale learnings, for ranking. Staleness only changes with a commit or an
    edited learning, so the answer (`compute()`, which reads every learning) is cached under
    `.lore/cache/` keyed by HEAD and the learning files' sizes and times: a search pays the git
    work once per commit."""
    from ..git.binary import head
    from ..store import atomic_write

    files = _file_stats(layout)
    if not files:
        return frozenset()
    commit = head(layout.root)
    if commit is None:  # not a repository, or no commit yet: nothing can be stale
        return frozenset()
    key = [commit, files]
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


def _file_stats(layout: Layout) -> list[list[object]]:
    """[name, size, mtime] of each learning and draft, published first, by name: what says that
    a learning changed (a scandir; Path objects for 2,000 files cost a cold search ~10 ms)."""
    found: list[list[object]] = []
    for folder in (layout.learnings, layout.drafts):
        try:
            with os.scandir(folder) as entries:
                named = sorted((e.name, e) for e in entries if e.name.endswith(".md"))
        except OSError:  # no such folder (no drafts yet)
            continue
        for name, entry in named:
            try:
                st = entry.stat()
            except OSError:  # vanished, or a dangling link: not a learning to rank
                continue
            if entry.is_file():
                found.append([name, st.st_size, st.st_mtime_ns])
    return found
