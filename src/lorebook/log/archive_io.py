"""Archived shards: `archive/YYYY/MM/DD-<session>.jsonl.gz`, one per live shard (day, session).

Kept apart from the reader so the normal read path never imports gzip (imported where an
archive is read or written: the catalog, which every read opens, imports this module).

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path

SUFFIX = ".jsonl.gz"


def archive_name(day: str, session: str) -> str:
    """`YYYY/MM/DD-<session>.jsonl.gz`: the day and the session keep the name unique."""
    return f"{day[:4]}/{day[5:7]}/{day[8:10]}-{session}{SUFFIX}"


def parse_name(year: str, month: str, name: str) -> tuple[str, str] | None:
    """(day, session) of an archive file name, or None when it is not one."""
    if not name.endswith(SUFFIX) or len(name) < 4 + len(SUFFIX) or name[2] != "-":
        return None
    day = name[:2]
    if not day.isdigit():
        return None
    return f"{year}-{month}-{day}", name[3 : -len(SUFFIX)]


def _digits(name: str, width: int) -> bool:
    return len(name) == width and name.isdigit()


def iter_archives(
    archive: Path, *, first: str | None = None, last: str | None = None
) -> Iterator[tuple[str, str, Path]]:
    """(day, session, path) of every archived shard with first <= day <= last, oldest first."""
    lo, hi = first or "0000-00-00", last or "9999-99-99"
    try:
        years = sorted(e.name for e in os.scandir(archive) if _digits(e.name, 4) and e.is_dir())
    except (FileNotFoundError, NotADirectoryError):
        return
    for year in years:
        if not lo[:4] <= year <= hi[:4]:
            continue
        try:
            months = sorted(
                e.name for e in os.scandir(archive / year) if _digits(e.name, 2) and e.is_dir()
            )
        except OSError:
            continue
        for month in months:
            if not lo[:7] <= f"{year}-{month}" <= hi[:7]:
                continue
            try:
                names = sorted(e.name for e in os.scandir(archive / year / month))
            except OSError:
                continue
            for name in names:
                parsed = parse_name(year, month, name)
                if parsed and lo <= parsed[0] <= hi:
                    yield parsed[0], parsed[1], archive / year / month / name


def archived_days(
    archive: Path,
    *,
    first: str | None = None,
    last: str | None = None,
    sessions: Iterable[str] | None = None,
) -> dict[str, list[Path]]:
    """Archived shards grouped by day (optionally only some sessions')."""
    wanted = set(sessions) if sessions is not None else None
    days: dict[str, list[Path]] = {}
    for day, session, path in iter_archives(archive, first=first, last=last):
        if wanted is None or session in wanted:
            days.setdefault(day, []).append(path)
    return days


def read_archive_bytes(path: Path) -> tuple[bytes, str | None]:
    """The decompressed content, or (b"", why it cannot be read)."""
    try:
        import gzip

        with gzip.open(path, "rb") as handle:
            return handle.read(), None
    except (OSError, EOFError, zlib.error) as exc:
        return b"", f"corrupt or unreadable gzip archive ({exc}); skipped"


def compress(data: bytes) -> bytes:
    """Deterministic gzip (no timestamp, no file name): the same shard gives the same bytes."""
    import gzip

    return gzip.compress(data, compresslevel=6, mtime=0)
