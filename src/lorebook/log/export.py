"""Training-data export: actions as the seed's training records, streamed in constant memory.

A record: {input: {task, epic_id, context}, output: {action_taken, outcome, error (when the
action has one), duration_seconds},
metadata: {timestamp, project, supervisor_type, action_id}}. Context (and the task taken from
it) is sanitized again on the way out; the manifest beside the file says what was exported,
from which commit, with which filters and how many values were redacted.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ..errors import LoreError, UsageError
from ..git.binary import head
from ..timeutil import format_ts, parse_when
from .query import ActionFilter

if TYPE_CHECKING:
    from ..paths import Layout
    from ..redact.sanitize import Sanitizer
    from .actionlog import ActionLog
    from .track_pairs import Links

FORMATS = ("csv", "json", "jsonl")
CSV_FIELDS = (
    "input.task",
    "input.epic_id",
    "input.context",
    "output.action_taken",
    "output.outcome",
    "output.error",
    "output.duration_seconds",
    "metadata.timestamp",
    "metadata.project",
    "metadata.supervisor_type",
    "metadata.action_id",
)
_TASK_KEYS = ("task_description", "task")


class Redactions:
    """Counts of values the export re-sanitized."""

    def __init__(self) -> None:
        self.values = 0
        self.records = 0


def training_record(
    action: dict[str, Any],
    sanitizer: Sanitizer,
    *,
    with_context: bool,
    counts: Redactions,
    links: Links | None = None,
) -> dict[str, Any]:
    """One action as a training record, its context and task re-sanitized; `counts` adds
    what the record says was redacted in it (when written, or as it was read). With `links`,
    an outcome without a duration takes the time since its start."""
    context = action.get("context") or {}
    task: Any = next(
        (context[k] for k in _TASK_KEYS if isinstance(context.get(k), str) and context[k]),
        action["type"],
    )
    meta = action.get("meta")
    done = meta.get("redactions") if isinstance(meta, dict) else None
    redacted = done if isinstance(done, int) and not isinstance(done, bool) and done > 0 else 0
    task, n = sanitizer.redact_text(task)
    redacted += n
    entry: dict[str, Any] = {"task": task, "epic_id": action.get("epic")}
    if with_context:
        clean, n = sanitizer.sanitize(context)
        redacted += n
        entry["context"] = clean
    output: dict[str, Any] = {"action_taken": action["type"], "outcome": action["outcome"]}
    if isinstance(action.get("error"), str):  # a failure's reason: what makes it worth learning
        output["error"], n = sanitizer.redact_text(action["error"])
        redacted += n
    output["duration_seconds"] = (
        action.get("duration_s") if links is None else links.duration(action)
    )
    if redacted:
        counts.values += redacted
        counts.records += 1
    return {
        "input": entry,
        "output": output,
        "metadata": {
            "timestamp": action["ts"],
            "project": action.get("project"),
            "supervisor_type": action.get("agent"),
            "action_id": action["id"],
        },
    }


def _dumps(value: Any, indent: int | None = None) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, indent=indent)


def _write_jsonl(handle: IO[str], records: Iterator[dict[str, Any]]) -> int:
    count = 0
    for record in records:
        handle.write(_dumps(record))
        handle.write("\n")
        count += 1
    return count


def _write_json(handle: IO[str], records: Iterator[dict[str, Any]]) -> int:
    """A JSON array written one element at a time: memory does not grow with the export."""
    count = 0
    handle.write("[")
    for record in records:
        handle.write(",\n  " if count else "\n  ")
        handle.write(_dumps(record, indent=None))
        count += 1
    handle.write("\n]\n" if count else "]\n")
    return count


# a spreadsheet reads a cell starting with one of these as a formula (OWASP: CSV injection)
_FORMULA_LEADS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> Any:
    """One CSV cell that no spreadsheet runs: text starting like a formula gets a leading
    single quote (OWASP's advice; the writer quotes every field). Numbers stay numbers."""
    if isinstance(value, str) and value.startswith(_FORMULA_LEADS):
        return "'" + value
    return value


def _write_csv(handle: IO[str], records: Iterator[dict[str, Any]]) -> int:
    writer = csv.writer(handle, lineterminator="\n", quoting=csv.QUOTE_ALL)
    writer.writerow(CSV_FIELDS)
    count = 0
    for record in records:
        row = []
        for field in CSV_FIELDS:
            group, key = field.split(".")
            value = record[group].get(key)
            if key == "context" and key in record[group]:
                value = _dumps(value)
            row.append("" if value is None else csv_cell(value))
        writer.writerow(row)
        count += 1
    return count


WRITERS = {"csv": _write_csv, "json": _write_json, "jsonl": _write_jsonl}


def source_commit(root: Path) -> str | None:
    return head(root)


def _moment(value: str | datetime | None, option: str, now: datetime) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return value
    return parse_when(str(value), now=now, option=option)


def export_window(
    since: str | datetime | None, until: str | datetime | None, now: datetime
) -> tuple[str | None, str | None]:
    """The export's [since, until) as canonical timestamps (times as datetimes or the forms of
    `--since`); a start in the future or not before the end is refused, not exported empty."""
    start, end = _moment(since, "--since", now), _moment(until, "--until", now)
    if start is not None and format_ts(start) > format_ts(now):
        shown = since if isinstance(since, str) else format_ts(start)
        raise UsageError("--since {} is in the future (now is {})", shown, format_ts(now))
    if start is not None and end is not None and format_ts(start) >= format_ts(end):
        raise UsageError("--since {} is not before --until {}", format_ts(start), format_ts(end))
    return (format_ts(start) if start else None, format_ts(end) if end else None)


def default_path(layout: Layout, fmt: str, now: datetime) -> Path:
    stamp = format_ts(now).replace("-", "").replace(":", "").replace(".", "")[:15] + "Z"
    return layout.training_data / f"training-data-{stamp}.{fmt}"


def tracked_links(log: ActionLog, query: ActionFilter, include_archive: bool) -> Links:
    """A tracked action is exported once, as its outcome: the `in_progress` starts an outcome
    in the window superseded, and when each began, from the catalog, else from a first pass
    over the window (every outcome, whatever `--outcome` asks; ids and times only)."""
    from .track_pairs import Links, catalog_links, start_finder

    found_there = catalog_links(log, query.since, query.until, include_archive)
    if found_there is not None:
        return found_there
    links = Links(start_finder(log))
    every = ActionFilter(**{**query.values(), "outcome": None})
    found = log.iter_actions(every, newest_first=False, include_archive=include_archive)
    try:
        for action in found:
            links.see(action)
    finally:
        getattr(found, "close", lambda: None)()
    links.finish()
    return links


def export(
    log: ActionLog,
    *,
    fmt: str,
    path: Path,
    since: str | None,
    until: str | None,
    project: str | None,
    type: str | None = None,
    outcome: str | None = None,
    agent: str | None = None,
    with_context: bool = True,
    include_archive: bool = False,
) -> dict[str, Any]:
    """Write the export and its manifest (`<file>.manifest.json`); return the manifest."""
    if fmt not in FORMATS:
        raise UsageError("--format {!r} is not one of: " + ", ".join(FORMATS), fmt)
    query = ActionFilter(
        project=project, type=type, outcome=outcome, agent=agent, since=since, until=until
    )
    counts = Redactions()
    links = tracked_links(log, query, include_archive)
    records = (
        training_record(
            action, log.sanitizer, with_context=with_context, counts=counts, links=links
        )
        for action in log.iter_actions(query, newest_first=False, include_archive=include_archive)
        if action["id"] not in links.closed
    )
    manifest_path = path.with_name(path.name + ".manifest.json")
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    from ..store import create_file, refuse_symlinks

    refuse_symlinks(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(create_file(tmp), "w", encoding="utf-8", newline="") as handle:
            count = WRITERS[fmt](handle, records)
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise LoreError("{}: cannot write the export ({})", path, exc.strerror or exc) from None
    manifest = {
        "file": path.name,
        "format": fmt,
        "record_count": count,
        "record_shape": "lorebook training record v1 (input, output, metadata)",
        "filters": log.sanitizer.sanitize(
            {
                "since": since,
                "until": until,
                "project": project,
                "type": type,
                "outcome": outcome,
                "agent": agent,
                "include_context": with_context,
                "include_archive": include_archive,
            }
        )[0],
        "source_commit": source_commit(log.root),
        "redactions": {"values": counts.values, "records": counts.records},
        "bytes": path.stat().st_size,
    }
    from ..store import atomic_write

    try:
        atomic_write(manifest_path, (_dumps(manifest, indent=2) + "\n").encode("utf-8"))
    except LoreError:
        path.unlink(missing_ok=True)  # no export without its manifest
        raise
    return {**manifest, "path": log.layout.rel(path), "manifest": log.layout.rel(manifest_path)}
