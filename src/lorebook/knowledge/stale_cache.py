"""The stale learnings' ids, cached per commit and learning files: standard library only, so a
keyword search ranks by staleness without loading the front-matter reader (YAML, pydantic).

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from contextlib import suppress

from ..errors import LoreError
from ..paths import Layout

STALE_CACHE = "stale-v2.json"  # keyed by the files' state as the search index recorded it
STALE_FILES_CACHE = "stale-files-v2.json"  # keyed by the files' stats: two callers never thrash


class StaleIds:
    """Ids of the stale learnings, for ranking. Staleness only changes with a commit or an
    edited learning, so the answer (`compute()`, which reads every learning) is cached under
    `.lore/cache/` keyed by HEAD and the learning files' state, and kept in memory while that
    key holds: a search pays the git work once per commit, and a warm search no file read.

    The files' state is `files_key` when the caller has one (a search passes a digest of the
    files' sizes and times as its index recorded them: as it checked them, or as
    `refresh=False` trusts them), else the learning files' sizes and times (a scandir)."""

    def __init__(self, layout: Layout, compute: Callable[[], Iterable[str]]) -> None:
        self.layout = layout
        self.compute = compute
        self._last: tuple[list[object], frozenset[str]] | None = None

    def __call__(self, files_key: str | None = None) -> frozenset[str]:
        from ..git.binary import head

        files: object = files_key or _file_stats(self.layout)
        if not files:
            return frozenset()
        commit = head(self.layout.root)
        if commit is None:  # not a repository, or no commit yet: nothing can be stale
            return frozenset()
        key: list[object] = [commit, files]
        if self._last is not None and self._last[0] == key:
            return self._last[1]
        found = self._cached(key, STALE_CACHE if files_key else STALE_FILES_CACHE)
        self._last = (key, found)
        return found

    def _cached(self, key: list[object], name: str) -> frozenset[str]:
        from ..store import atomic_write

        cache = self.layout.cache / name
        try:
            saved = json.loads(cache.read_text())
            if saved.get("key") == key:
                return frozenset(saved["stale"])
        except (OSError, ValueError, AttributeError, KeyError, TypeError):
            pass  # missing or unreadable cache: recompute below
        found = sorted(self.compute())
        with suppress(LoreError):  # a read-only cache only costs the recomputation next time
            atomic_write(cache, json.dumps({"key": key, "stale": found}).encode())
        return frozenset(found)


def cached_stale_ids(layout: Layout, compute: Callable[[], Iterable[str]]) -> frozenset[str]:
    """`StaleIds` asked once, keyed by the learning files' stats."""
    return StaleIds(layout, compute)()


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
