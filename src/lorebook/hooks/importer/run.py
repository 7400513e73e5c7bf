"""Import one client's sessions of this repository into its action log, idempotently.

A session the log does not hold is written whole. A session it already holds (the hooks
caught it, or an earlier import) is completed, never duplicated: a tool call is written only
when no record of that session carries its tool-use id, and every other event (start, prompt,
compaction, subagent, stop) only when it is newer than the session's newest record. Each
event goes through the hooks' own handler, with the line's time, so records, redaction and
`meta.source` are the hooks' own; `meta.imported` says where they came from.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from . import claude, codex
from .events import Event, Transcript

if TYPE_CHECKING:
    from collections.abc import Callable

    from ... import Lorebook

    Progress = Callable[[str, int, int], None]  # lorebook.progress: (task, done, total)

READERS: dict[str, ModuleType] = {"claude": claude, "codex": codex}
TASK = "import.sessions"  # its label: lorebook.render.progress.LABELS


@dataclass
class ImportResult:
    """What one `lore import` did (or, with `dry_run`, would do)."""

    client: str
    dry_run: bool = False
    sessions_seen: int = 0  # sessions of this repository in the client's files
    sessions_imported: int = 0  # those that gained records
    sessions_skipped: int = 0  # nothing new in them, or older than --since
    actions_written: int = 0  # records written: actions and session events
    duplicates_skipped: int = 0  # events the log already held
    problems: list[str] = field(default_factory=list)  # `file[:line]: why`, one each

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def import_sessions(
    root: Path,
    client: str,
    *,
    since: datetime | None = None,
    dry_run: bool = False,
    progress: Progress | None = None,
    env: Any = None,
) -> ImportResult:
    """Import `client`'s sessions whose working directory lies in `root` (the store's root):
    files changed since `since` (all when None). `env` locates the client's files
    (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`, `HOME`; default os.environ)."""
    import os

    from ... import Lorebook

    reader = READERS[client]
    root = root.resolve()
    result = ImportResult(client, dry_run)
    files = reader.session_files(os.environ if env is None else env, root, result.problems)
    if since is not None:
        files = [p for p in files if _mtime(p) >= since.timestamp()]
    book = Lorebook.open(root)
    book.install_subscribers()  # acting for the agent, as its hooks would have
    written = [0]
    book.on("action", lambda record: written.__setitem__(0, written[0] + 1))
    known = {info.id: info for info in book.sessions()}
    for done, path in enumerate(files):
        if progress is not None:
            progress(TASK, done, len(files))
        try:
            found = reader.read(path, root)
        except OSError as exc:
            result.problems.append(f"{path}: cannot be read ({exc.strerror or exc}); skipped")
            continue
        if found is None:
            continue  # another repository's session
        result.sessions_seen += 1
        result.problems += found.problems
        if since is not None and found.last and _when(found.last) < since:
            result.sessions_skipped += 1
            continue
        before = written[0]
        plan, repeats = _missing(book, found, known.get(found.session))
        result.duplicates_skipped += repeats
        if not plan:
            result.sessions_skipped += 1
            continue
        if dry_run:
            result.actions_written += len(plan)
            result.sessions_imported += 1
            continue
        problem, unwritten = _fire(book, root, client, found, plan, written)
        if problem:
            result.problems.append(problem)
        result.duplicates_skipped += unwritten
        result.actions_written += written[0] - before
        if written[0] > before:
            result.sessions_imported += 1
        else:
            result.sessions_skipped += 1
    if progress is not None and files:
        progress(TASK, len(files), len(files))
    # a line of a file, an exception's text: redacted as everything else lorebook prints
    result.problems = [book.sanitizer.redact_text(p)[0] for p in result.problems]
    return result


def _missing(book: Lorebook, found: Transcript, info: Any) -> tuple[list[Event], int]:
    """The events of `found` the log lacks, and how many it already holds."""
    from ..handlers import SESSION_RE

    if not SESSION_RE.match(found.session):
        found.problems.append(f"{found.path}: session id {found.session[:80]!r} is not one")
        return [], 0
    if info is None:
        return list(found.events), 0
    calls = {
        (action.get("context") or {}).get("tool_use_id")
        for action in book.actions(session=found.session, type="tool_call", limit=None)
    }
    newest = max(filter(None, (info.started, info.last_activity, info.ended)), default="")
    plan = []
    redact = book.sanitizer.redact_text
    for event in found.events:
        if event.call is not None:  # an id stored redacted (random, as some clients' are)
            # cannot be matched here: the hooks' deliveries ledger decides
            keep = event.call not in calls or redact(event.call)[0] != event.call
        else:  # no id of its own: new only past what the log holds of the session
            keep = not newest or (bool(event.at) and _when(event.at) > _when(newest))
        if keep:
            plan.append(event)
    return plan, len(found.events) - len(plan)


def _fire(
    book: Lorebook,
    root: Path,
    client: str,
    found: Transcript,
    plan: list[Event],
    written: list[int],
) -> tuple[str, int]:
    """Run each event's handler, in order; the first failure stops the session (a rerun
    completes it) and is returned as one line; with the tool calls the hooks' deliveries
    ledger held back (`written[0]` counts the records written)."""
    from ..clients import CLIENTS
    from ..failopen import Hook
    from ..handlers import HANDLERS

    common = {"session_id": found.session, "cwd": str(root), "transcript_path": str(found.path)}
    if found.branch:
        common["git_branch"] = found.branch
    held = 0
    for event in plan:
        hook = Hook(event.event, {**common, "hook_event_name": event.name, **event.fields},
                    root, time.perf_counter())  # fmt: skip
        hook.client, hook.source, hook.book = client, CLIENTS[client].source, book
        hook.at = _when(event.at) if event.at else None
        if hook.at is None or hook.at.year < 2000:
            continue  # a line with no readable time: nothing to date a record with
        before = written[0]
        try:
            HANDLERS[event.event](hook)
        except Exception as exc:  # named to the user; the other sessions go on
            return f"{found.path}: {type(exc).__name__}: {exc}; the session stopped there", held
        held += event.call is not None and written[0] == before
    return "", held


def _when(text: str) -> datetime:
    """A line's time; a time that cannot be read sorts first (so it is never "newer")."""
    from datetime import UTC

    from ... import parse_ts

    try:
        return parse_ts(text)
    except (ValueError, OverflowError):
        return datetime.min.replace(tzinfo=UTC)


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
