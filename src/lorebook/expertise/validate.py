"""Check a file against the code (validate) and discover the domain's files (improve).

validate: drop core_files that no longer exist, drop failure lessons older than the configured
age (lessons without a readable timestamp are kept: a person wrote them), stamp last_validated.
improve: add files matching the domain's globs, at most 20 per glob, skipping what git ignores.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

from ..timeutil import parse_ts
from .changes import Change
from .files import ExpertiseDoc, seq_edit
from .schema import glob_regex

MAX_PER_GLOB = 20
_GLOB_CHARS = re.compile(r"[*?\[]")
_SKIP_DIRS = {
    ".git",
    ".lore",
    ".venv",
    "venv",
    "node_modules",
    "__pycache__",
    ".tox",
    "dist",
    "build",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
}


def _as_datetime(value: Any) -> datetime | None:
    from datetime import UTC

    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    if isinstance(value, str) and value.strip():
        try:
            if len(value.strip()) == 10:
                d = date.fromisoformat(value.strip())
                return datetime(d.year, d.month, d.day, tzinfo=UTC)
            return parse_ts(value.strip())
        except ValueError:
            return None
    return None


def _exists(root: Path, entry: str) -> bool:
    if _GLOB_CHARS.search(entry):  # a person may list a glob: valid while it matches something
        return any(root.glob(entry))
    return (root / entry).exists()


def validate_doc(doc: ExpertiseDoc, root: Path, now: datetime, max_age_days: float) -> list[Change]:
    """Correct `doc` in place; return the corrections (last_validated is stamped by the caller)."""
    changes: list[Change] = []
    core = doc.data.get("core_files")
    if isinstance(core, list):
        missing = [i for i, f in enumerate(core) if isinstance(f, str) and not _exists(root, f)]
        if missing:
            names = [str(core[i]) for i in missing]

            def drop(seq: Any) -> None:
                for i in reversed(missing):
                    del seq[i]

            seq_edit(core, drop)
            changes += [Change("file_removed", f"{n} no longer exists", n) for n in names]
    lessons = doc.data.get("learned_from_failures")
    if isinstance(lessons, list) and lessons:
        cutoff = now - timedelta(days=max_age_days)
        stale = []
        for i, entry in enumerate(lessons):
            when = _as_datetime(entry.get("timestamp")) if isinstance(entry, dict) else None
            if when is not None and when < cutoff:
                stale.append(i)
        if stale:
            issues = [str(lessons[i].get("issue", "")) for i in stale]

            def drop_stale(seq: Any) -> None:
                for i in reversed(stale):
                    del seq[i]

            seq_edit(lessons, drop_stale)
            changes.append(
                Change(
                    "stale_failures_removed",
                    f"{len(stale)} failure lesson(s) older than {max_age_days:g} days",
                    {"count": len(stale), "issues": issues},
                )
            )
    return changes


# -- improve ------------------------------------------------------------------------------------
def project_files(root: Path, listed: Iterable[str] | None) -> list[str]:
    """Every file of the project, sorted: git's list (tracked + untracked, not ignored) when
    given, else a walk that skips hidden folders and virtualenvs."""
    if listed is not None:
        return sorted(p for p in listed if p)
    found = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
        base = Path(folder).relative_to(root)
        found += [(base / n).as_posix() for n in names]
    return sorted(found)


def improve_doc(
    doc: ExpertiseDoc, globs: Iterable[str], files: list[str], skip: Iterable[str] = ()
) -> list[Change]:
    """Add files matching `globs` to core_files (at most 20 new per glob)."""
    core = doc.get_list("core_files")
    known = {str(f) for f in core}
    skip = tuple(skip)
    new: list[str] = []
    changes: list[Change] = []
    for pattern in globs:
        regex = glob_regex(pattern)
        added = 0
        for path in files:
            if added >= MAX_PER_GLOB:
                break
            if path in known or any(path == s or path.startswith(s + "/") for s in skip):
                continue
            if regex.match(path):
                known.add(path)
                new.append(path)
                added += 1
                changes.append(Change("file_discovered", f"{path} (matches {pattern})", path))
    if new:
        seq_edit(core, lambda seq: seq.extend(new))
    return changes
