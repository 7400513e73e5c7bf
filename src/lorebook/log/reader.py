"""Stream the action log in (ts, id) order, skipping and reporting every line that is not a record.

Shards are grouped by UTC day directory; a day's shards are read, de-duplicated by id and sorted,
so memory is bounded by one day of logging, never by the history. Union merges can duplicate a
line only inside its own shard (the shard is fixed by the record's session and day), so
per-shard de-duplication is complete.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from ..model import decode_line
from ..problems import OnProblem, Problem, ignore

TYPE_CHECKING = False  # typing costs milliseconds on cold paths; mypy still sees it
if TYPE_CHECKING:
    from typing import Any

MAX_LINE_BYTES = 1 << 20  # lines past this are reported, never parsed
_CHUNK = 1 << 16


def _digits(name: str, width: int) -> bool:
    return len(name) == width and name.isdigit()


def _subdirs(path: Path, width: int) -> list[str]:
    try:
        with os.scandir(path) as entries:
            return [e.name for e in entries if _digits(e.name, width) and e.is_dir()]
    except (FileNotFoundError, NotADirectoryError):
        return []


def walk_days(
    actionlog: Path,
    *,
    newest_first: bool = False,
    first: str | None = None,
    last: str | None = None,
) -> Iterator[tuple[str, Path]]:
    """`YYYY/MM/DD` directories as (`YYYY-MM-DD`, path) with first <= day <= last, lazily.

    Years and months outside the bounds are never listed, so reading the newest days costs
    the same after two years of logging as after two days. The archive is not a day directory.
    """
    lo, hi = first or "0000-00-00", last or "9999-99-99"
    for year in sorted(_subdirs(actionlog, 4), reverse=newest_first):
        if not lo[:4] <= year <= hi[:4]:
            continue
        for month in sorted(_subdirs(actionlog / year, 2), reverse=newest_first):
            if not lo[:7] <= f"{year}-{month}" <= hi[:7]:
                continue
            for day in sorted(_subdirs(actionlog / year / month, 2), reverse=newest_first):
                name = f"{year}-{month}-{day}"
                if lo <= name <= hi:
                    yield name, actionlog / year / month / day


def day_dirs(actionlog: Path) -> list[tuple[str, Path]]:
    """Every day directory, oldest first."""
    return list(walk_days(actionlog))


def newest_days_within(actionlog: Path, budget: int, most: int) -> tuple[list[str], bool]:
    """The newest day directories (newest first, at most `most`) whose shards hold `budget`
    bytes or less together, and always the newest one: how much of the log a quick first
    answer can read while the catalog is built; and whether the budget left a day out."""
    days: list[str] = []
    total = 0
    for name, path in walk_days(actionlog, newest_first=True):
        size = _day_bytes(path)
        if days and len(days) >= most:
            break
        if days and total + size > budget:
            return days, True
        days.append(name)
        total += size
    return days, False


def shards_over(actionlog: Path, budget: int) -> bool:
    """Whether the day directories' shards hold more than `budget` bytes (newest first, it
    stops as soon as they do)."""
    total = 0
    for _, path in walk_days(actionlog, newest_first=True):
        total += _day_bytes(path)
        if total > budget:
            return True
    return False


def _day_bytes(path: Path) -> int:
    try:
        with os.scandir(path) as entries:
            return sum(e.stat().st_size for e in entries if e.name.endswith(".jsonl"))
    except OSError:  # gone meanwhile, or not a directory: read as empty
        return 0


def shard_files(day_dir: Path) -> list[Path]:
    """The `.jsonl` entries of one day directory, by name (directories included, reported later)."""
    try:
        with os.scandir(day_dir) as entries:
            return sorted(Path(e.path) for e in entries if e.name.endswith(".jsonl"))
    except (FileNotFoundError, NotADirectoryError):
        return []


def _lines(handle: Any) -> Iterator[tuple[int, bytes | None, bool]]:
    """(line number, bytes or None when oversize, terminated by newline)."""
    number = 0
    while True:
        raw = handle.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        number += 1
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            while raw and not raw.endswith(b"\n"):
                raw = handle.readline(_CHUNK)
            yield number, None, True
            continue
        yield number, raw, raw.endswith(b"\n")


def type_needle(action_type: str | None) -> bytes | None:
    """What every line holding a record of `action_type` contains, unparsed: a type is a
    lowercase word, so its JSON string is the word itself between quotes -- unless the line
    writes characters as `\\u` escapes, which `may_hold` lets through to the parser."""
    return None if action_type is None else b'"' + action_type.encode() + b'"'


def may_hold(raw: bytes, needle: bytes | None) -> bool:
    return needle is None or needle in raw or b"\\u" in raw


def read_shard(
    path: Path,
    rel: str,
    on_problem: OnProblem = ignore,
    *,
    dedupe: bool = True,
    needle: bytes | None = None,
) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, record) for every valid line of one shard, in file order; with `needle`
    (`type_needle`), lines that cannot hold a record of that type are skipped unparsed (and
    so, when invalid, unreported: for a caller that ignores problems)."""
    seen: set[str] = set()
    if path.name.endswith(".gz"):
        yield from _read_archive(path, rel, on_problem, dedupe=dedupe)
        return
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below, generator-friendly
    except IsADirectoryError:
        on_problem(Problem(rel, 0, "is a directory, not a shard file"))
        return
    except OSError as exc:
        on_problem(Problem(rel, 0, f"cannot be read: {exc.strerror or exc}"))
        return
    with handle:
        for number, raw, terminated in _lines(handle):
            if raw is None:
                on_problem(
                    Problem(rel, number, f"line longer than {MAX_LINE_BYTES} bytes, skipped")
                )
                continue
            if not raw.strip() or not may_hold(raw, needle):
                continue
            record, reason = decode_line(raw)
            if record is None:
                if not terminated:
                    reason = f"torn line at end of file ({reason})"
                on_problem(Problem(rel, number, str(reason)))
                continue
            if dedupe:
                if record["id"] in seen:
                    continue
                seen.add(record["id"])
            yield number, record


def _read_archive(
    path: Path, rel: str, on_problem: OnProblem, *, dedupe: bool
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Records of a gzip-compressed (archived) shard; a corrupt archive is reported, not fatal."""
    from .archive_io import read_archive_bytes

    data, error = read_archive_bytes(path)
    if error is not None:
        on_problem(Problem(rel, 0, error))
        return
    seen: set[str] = set()
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        record, reason = decode_line(raw)
        if record is None:
            on_problem(Problem(rel, number, str(reason)))
            continue
        if dedupe:
            if record["id"] in seen:
                continue
            seen.add(record["id"])
        yield number, record


def _sort_key(record: dict[str, Any]) -> tuple[str, str]:
    return record["ts"], record["id"]


def relative(path: Path, base: Path) -> str:
    """`path` relative to the store root, for messages."""
    try:
        return str(path.relative_to(base))
    except ValueError:
        return str(path)


def read_day(
    day_dir: Path,
    base: Path,
    on_problem: OnProblem = ignore,
    sessions: Iterable[str] | None = None,
    needle: bytes | None = None,
) -> list[dict[str, Any]]:
    """All records of one day (optionally only some sessions' shards, and with `needle` only
    the lines that may hold a record of one type: see `read_shard`), sorted by (ts, id)."""
    if sessions is None:
        paths = shard_files(day_dir)
    else:
        paths = [day_dir / f"{s}.jsonl" for s in sessions if (day_dir / f"{s}.jsonl").exists()]
    records: list[dict[str, Any]] = []
    for path in paths:
        records.extend(
            record
            for _, record in read_shard(path, relative(path, base), on_problem, needle=needle)
        )
    records.sort(key=_sort_key)
    return records


def _unique(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Drop repeated ids (a shard both live and archived after a pull), keeping the first."""
    seen: set[str] = set()
    out = []
    for record in records:
        if record["id"] not in seen:
            seen.add(record["id"])
            out.append(record)
    return out


def iter_records(
    actionlog: Path,
    *,
    base: Path | None = None,
    since: str | None = None,
    until: str | None = None,
    newest_first: bool = False,
    sessions: Iterable[str] | None = None,
    on_problem: OnProblem = ignore,
    include_archive: bool = False,
    action_type: str | None = None,
) -> Iterator[dict[str, Any]]:
    """Every valid record with `since <= ts < until` (canonical timestamps), in time order.

    Day directories outside the range are never opened. With `include_archive`, the gzip
    shards under `archive/` are read too, merged into their days. `action_type` lets live
    shards' lines that cannot hold a record of that type go unparsed (the caller still
    filters; their problems go unreported: for callers that ignore them).
    """
    wanted = list(sessions) if sessions is not None else None
    first, last = (since[:10] if since else None), (until[:10] if until else None)
    days: Iterable[tuple[str, Path | None]] = walk_days(
        actionlog, newest_first=newest_first, first=first, last=last
    )
    archived: dict[str, list[Path]] = {}
    if include_archive:
        from .archive_io import archived_days

        archived = archived_days(actionlog / "archive", first=first, last=last, sessions=wanted)
        live = dict(days)
        order = sorted(set(live) | set(archived), reverse=newest_first)
        days = [(day, live.get(day)) for day in order]
    needle = type_needle(action_type)
    for day, path in days:
        records = (
            read_day(path, base or actionlog.parent, on_problem, wanted, needle) if path else []
        )
        if day in archived:
            records.extend(
                record
                for archive in archived[day]
                for _, record in read_shard(
                    archive, relative(archive, base or actionlog.parent), on_problem
                )
            )
            records = _unique(sorted(records, key=_sort_key))
        if newest_first:
            records.reverse()
        for record in records:
            if since is not None and record["ts"] < since:
                continue
            if until is not None and record["ts"] >= until:
                continue
            yield record
