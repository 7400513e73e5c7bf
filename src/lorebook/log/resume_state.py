"""Assemble `lore resume`'s answer: target session, its records, open work, git, next steps.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

from datetime import datetime

from ..errors import LoreError
from ..git.binary import start_git_state
from ..problems import OnProblem, Problem
from ..timeutil import horizon
from .open_work import (
    current_epic,
    failed_validations,
    next_steps,
    open_actions,
    work_in_progress,
)
from .resume import SessionTail, choose, find_candidates, session_records
from .sessions import summarize
from .tool_activity import commands_run, files_touched, last_failures, task_list
from .workrefs import current_issue
from .writer import redacted

GIT_STATE_FILE = "git-state.json"

TYPE_CHECKING = False  # typing costs milliseconds on cold paths; mypy still sees it
if TYPE_CHECKING:
    from collections.abc import Collection
    from typing import Any

    from ..config import Config
    from ..contracts.records import ActionRecord, History, ResumeState
    from ..paths import Layout
    from ..redact.sanitize import Sanitizer
    from .catalog_query import CatalogView


def build_resume(
    layout: Layout,
    sanitizer: Sanitizer,
    config: Config,
    *,
    project: str | tuple[str, ...] | None,
    agent: str | None,
    session: str | None,
    limit: int,
    now: datetime,
    on_problem: OnProblem,
    catalog: CatalogView | None = None,
    clean_lines: set[bytes] | None = None,
    exclude: Collection[str] = (),
) -> ResumeState:
    """The JSON contract of `lore resume --json` (`learnings` left empty for the caller): the
    session is chosen from the `catalog`'s sessions table when it can be used (synced first),
    else from the tails of the newest shards; its records are read from its own shards (the
    tail of one session, not a query), redacted by `sanitizer` (`clean_lines`: the caller's
    memo of lines found clean under it); `config` holds `resume.*`; the sessions in `exclude`
    are never chosen (an MCP server's own)."""
    actionlog = layout.actionlog
    # git reads its whole index; let it run while the shards are read (or reuse its last
    # answer while nothing it depends on changed)
    pending_git = start_git_state(
        layout.root,
        exclude=(layout.rel(actionlog),),
        cache=layout.cache / GIT_STATE_FILE,
        redact=lambda state: redact_git_state(state, sanitizer),
        redact_key=_rules_key(sanitizer),
        safe_name=lambda path: not sanitizer.redact_text(path)[1],
    )
    try:
        session, tail = _target(
            layout,
            sanitizer,
            config,
            catalog,
            project,
            agent,
            session,
            now,
            _once(on_problem),
            exclude,
        )
        memo = set() if clean_lines is None else clean_lines
        known = catalog.clean_shards(tail.whole) if catalog is not None and tail.whole else set()
        tail.records, found = _redacted_tail(sanitizer, tail, memo, known)  # while git answers
        if catalog is not None and found:
            catalog.remember_clean(found)
    finally:
        git = pending_git()
    records = tail.records
    info = summarize(records, now, config.sessions.idle_minutes)[0]  # records of one session
    actions = [r for r in records if r["kind"] == "action" and r.get("type") != "prompt"]
    still_open = open_actions(actions)
    failed = failed_validations(actions)
    last_failure, last_failed_command = last_failures(actions)
    tasks = task_list(actions)
    steps = next_steps(
        info,
        actions,
        still_open,
        failed,
        git,
        failures=(last_failure, last_failed_command),
        tasks=tasks,
    )
    issue, branch = current_issue(records)
    return {
        "session": {
            "id": info.id,
            "agent": info.agent,
            "project": info.project,
            "started": info.started,
            "last_activity": info.last_activity,
            "ended": info.ended,
            "end_reason": info.end_reason,
            "status": info.status,
            "action_count": info.action_count,
        },
        "last_prompt": last_prompt(records),
        "last_action": _as_records(actions[-1:])[0] if actions else None,
        "recent_actions": _as_records(list(reversed(actions[-limit:]))),
        "epic": current_epic(actions),
        "issue": issue,
        "branch": branch,
        "work_in_progress": work_in_progress(actions, still_open, failed),
        "last_failure": last_failure,
        "last_failed_command": last_failed_command,
        "tasks": tasks,
        "files": files_touched(actions),
        "commands": commands_run(actions),
        "open_actions": _as_records(still_open),
        "failed_validations": _as_records(failed),
        "suggested_next_steps": steps,
        "git": git,
        "history": _history(tail.skipped_bytes),
        "learnings": [],
    }


def _as_records(actions: list[dict[str, Any]]) -> list[ActionRecord]:
    """The reader's records, typed as the v1 lines they are (each was validated when read)."""
    return actions  # type: ignore[return-value]  # the reader yields plain dicts


def last_prompt(records: list[dict[str, Any]]) -> str | None:
    """What the user last asked: the newest `prompt` record's text (the prompt hook's, stored
    redacted and cut), apart from the actions so it never reads as the session's work."""
    for record in reversed(records):
        if record["kind"] == "action" and record.get("type") == "prompt":
            text = (record.get("context") or {}).get("prompt")
            if isinstance(text, str) and text.strip():
                return text
    return None


def _history(skipped: int) -> History | None:
    """Null when the whole session was read; else what the analysis left out."""
    if not skipped:
        return None
    return {
        "skipped_bytes": skipped,
        "note": "only the newest records of this session were read (resume.tail_bytes); "
        "counts and open actions cover those",
    }


def _once(on_problem: OnProblem) -> OnProblem:
    """Report each problem once: a shard's tail is read to choose the session and to resume it."""
    seen: set[Problem] = set()

    def report(problem: Problem) -> None:
        if problem not in seen:
            seen.add(problem)
            on_problem(problem)

    return report


def _target(
    layout: Layout,
    sanitizer: Sanitizer,
    config: Config,
    catalog: CatalogView | None,
    project: str | tuple[str, ...] | None,
    agent: str | None,
    session: str | None,
    now: datetime,
    on_problem: OnProblem,
    exclude: Collection[str] = (),
) -> tuple[str, SessionTail]:
    """The session to resume and its newest records."""
    actionlog = layout.actionlog
    settings = config.resume
    last_day = None
    if session is None:
        lookback = settings.lookback_sessions + len(exclude)
        latest = horizon(now)  # later than this is a wrong clock: never the latest session
        candidates = None
        if catalog is not None:
            candidates = catalog.last_sessions(
                project=project, agent=agent, limit=lookback, horizon=latest
            )
        if candidates is None:  # no catalog (a fresh clone), disabled or busy: the shards
            candidates = find_candidates(
                actionlog,
                project=project,
                agent=agent,
                limit=lookback,
                base=layout.root,
                on_problem=on_problem,
                horizon=latest,
            )
        chosen = choose([c for c in candidates if c.session not in exclude], latest)
        if chosen is None:
            shown = project if isinstance(project, str) or not project else project[0]
            scope = " ".join(f"{k} {v!r}" for k, v in (("project", shown), ("agent", agent)) if v)
            raise LoreError(
                "no session to resume{}: the action log has no matching sessions",
                " for " + scope if scope else "",
            )
        session, last_day = chosen.session, chosen.day
    tail = session_records(
        actionlog,
        session,
        base=layout.root,
        last_day=last_day,
        max_days=settings.max_session_days,
        tail_bytes=settings.tail_bytes,
        on_problem=on_problem,
    )
    if not tail.records:
        raise LoreError("session {!r} has no records in {}/", session, layout.rel(actionlog))
    return session, tail


_MAX_CLEAN = 8192  # lines remembered as clean before the memo starts over


def _redacted_tail(
    sanitizer: Sanitizer, tail: SessionTail, clean_lines: set[bytes], clean_shards: set[str]
) -> tuple[list[dict[str, Any]], dict[str, tuple[int, int, int, int]]]:
    """The tail's records, redacted (a hand-edited line may hold a secret), and the shards read
    whole found to hold nothing to redact. A line found clean is added to `clean_lines` (the
    bytes, never a value taken out of them), so a long-lived `Lorebook` answering resume again
    redacts only the lines appended since; a record of one of `clean_shards` (which the
    catalog's memo vouches for, as they are now) needs no redaction: a cold resume of a
    session whose shards did not change since then compiles no secret pattern."""
    out = []
    dirty: set[str | None] = set()
    for record in tail.records:
        raw = tail.lines.get(record["id"])
        if (raw is not None and raw in clean_lines) or tail.origin.get(
            record["id"]
        ) in clean_shards:
            out.append(record)
            continue
        shown = next(redacted(sanitizer, (record,)))
        if shown is not record:
            dirty.add(tail.origin.get(record["id"]))
        elif raw is not None:
            if len(clean_lines) >= _MAX_CLEAN:
                clean_lines.clear()
            clean_lines.add(raw)
        out.append(shown)
    found = {p: i for p, i in tail.whole.items() if p not in clean_shards and p not in dirty}
    return out, found


def redact_git_state(state: dict[str, Any], sanitizer: Sanitizer) -> dict[str, Any]:
    """The git state with secrets out of what people write: the branch, the dirty paths, the
    last commit's subject and author (hashes and dates are git's own)."""

    def text(value: Any) -> Any:
        return sanitizer.redact_text(value)[0] if isinstance(value, str) and value else value

    out = dict(state)
    out["branch"] = text(state.get("branch"))
    out["dirty"] = [text(path) for path in state.get("dirty") or ()]
    commit = state.get("last_commit")
    if isinstance(commit, dict):
        out["last_commit"] = {
            **commit,
            "subject": text(commit.get("subject")),
            "author": text(commit.get("author")),
        }
    return out


def _rules_key(sanitizer: Sanitizer) -> str:
    """A short name for the redaction rules (a cached git state was redacted with them)."""
    import zlib

    return format(zlib.crc32(repr(sanitizer.settings()).encode()), "08x")
