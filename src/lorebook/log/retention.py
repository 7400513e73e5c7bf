"""Retention: archive old shards as gzip (verified before the original goes), prune old archives.

`archive` moves every shard of a day older than the cut-off to
`actionlog/archive/YYYY/MM/DD-<session>.jsonl.gz`; the archive is written to a temporary file,
decompressed and compared with the shard's bytes, and only then put in place and the shard
removed. An archive that already exists (the shard came back with a pull) is merged line by line;
if it cannot be read it is reported and the shard kept. `prune` deletes archives older than the
second cut-off. Defaults: `retention.archive_days` (90) and `retention.prune_days` (365).
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from ..errors import LoreError
from ..store import refused_symlink, temp_path, write_temp
from ..timeutil import check_days
from .archive_io import archive_name, compress, iter_archives, read_archive_bytes
from .reader import shard_files, walk_days


@dataclass
class RetentionResult:
    """What `lore archive` / `lore prune` did (or would do with --dry-run)."""

    action: str
    cutoff: str
    dry_run: bool
    done: list[dict[str, Any]] = field(default_factory=list)
    failed: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _cutoff(now: datetime, days: int) -> str:
    """Days strictly before this one are older than `days` days."""
    check_days(days, "days")
    return (now - timedelta(days=days)).strftime("%Y-%m-%d")


def _lines(data: bytes) -> list[bytes]:
    return [line for line in data.split(b"\n") if line.strip()]


def _merged(existing: bytes, data: bytes) -> bytes:
    """The existing archive plus the shard's lines it does not hold yet, in order."""
    have = set(_lines(existing))
    extra = [line for line in _lines(data) if line not in have]
    if not extra:
        return existing
    head = existing if not existing or existing.endswith(b"\n") else existing + b"\n"
    return head + b"\n".join(extra) + b"\n"


def _remove_empty(directory: Path, stop: Path) -> None:
    while directory != stop and directory.is_dir():
        try:
            directory.rmdir()
        except OSError:
            return
        directory = directory.parent


def archive_shards(
    actionlog: Path, base: Path, *, days: int, now: datetime, dry_run: bool
) -> RetentionResult:
    """Archive every shard of the days older than `days` days."""
    cutoff = _cutoff(now, days)
    result = RetentionResult("archive", cutoff, dry_run)
    archive = actionlog / "archive"
    last = (datetime.strptime(cutoff, "%Y-%m-%d") - timedelta(days=1)).strftime("%Y-%m-%d")
    for day, day_dir in list(walk_days(actionlog, last=last)):
        for shard in shard_files(day_dir):
            rel = os.path.relpath(shard, base)
            target = archive / archive_name(day, shard.name[: -len(".jsonl")])
            entry = {"shard": rel, "archive": os.path.relpath(target, base)}
            if not shard.is_file():
                result.failed.append({**entry, "error": "not a regular file; left in place"})
                continue
            if dry_run:
                result.done.append({**entry, "bytes": shard.stat().st_size})
                continue
            try:
                entry.update(_archive_one(shard, target))
            except LoreError as exc:
                result.failed.append({**entry, "error": str(exc)})
                continue
            result.done.append(entry)
        if not dry_run:
            _remove_empty(day_dir, actionlog)
    return result


def _archive_one(shard: Path, target: Path) -> dict[str, Any]:
    """Write, verify, then remove the original; raise LoreError (original kept) on any doubt."""
    if shard.is_symlink():  # its target may lie anywhere: never copied into the archive
        raise refused_symlink(shard)
    try:
        data = shard.read_bytes()
    except OSError as exc:
        raise LoreError("cannot read the shard: {}", exc.strerror or exc) from None
    content = data
    if target.exists():
        existing, error = read_archive_bytes(target)
        if error is not None:
            shown = error.replace("; skipped", "")
            raise LoreError("existing archive {}: {}; the shard was kept", target.name, shown)
        content = _merged(existing, data)
    packed = compress(content)
    tmp = temp_path(target)
    try:
        write_temp(target, packed)
        check, error = read_archive_bytes(tmp)
        if error is not None or check != content or not set(_lines(data)) <= set(_lines(check)):
            raise LoreError("{}: the written archive does not match; shard kept", target.name)
        os.replace(tmp, target)
        shard.unlink()
    except OSError as exc:
        raise LoreError("cannot write {}: {}; shard kept", target, exc.strerror or exc) from None
    finally:
        tmp.unlink(missing_ok=True)
    return {"bytes": len(data), "compressed_bytes": len(packed)}


def prune_archives(
    actionlog: Path, base: Path, *, days: int, now: datetime, dry_run: bool
) -> RetentionResult:
    """Delete archived shards of the days older than `days` days."""
    cutoff = _cutoff(now, days)
    result = RetentionResult("prune", cutoff, dry_run)
    archive = actionlog / "archive"
    last = (datetime.strptime(cutoff, "%Y-%m-%d") - timedelta(days=1)).strftime("%Y-%m-%d")
    for day, _session, path in list(iter_archives(archive, last=last)):
        entry = {"archive": os.path.relpath(path, base), "day": day}
        if not dry_run:
            try:
                path.unlink()
            except OSError as exc:
                result.failed.append({**entry, "error": exc.strerror or str(exc)})
                continue
            _remove_empty(path.parent, archive)
        result.done.append(entry)
    return result
