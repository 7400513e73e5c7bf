"""`Lorebook`: the library API. The CLI, TUI, MCP server and hooks are thin skins over it."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from .config import Config, load_config
from .errors import LoreError, UsageError
from .ids import new_ulid
from .log.check import CheckReport, check_log
from .log.query import ActionFilter
from .log.reader import OnProblem, _ignore, iter_records
from .log.sanitize import Sanitizer
from .log.sessions import STATUSES, SessionInfo, summarize
from .log.writer import (
    LogWriter,
    action_record,
    auto_session_id,
    check_session_id,
    host_name,
    session_record,
)
from .paths import Layout, find_root, require_store
from .timeutil import format_ts, utcnow

Listener = Callable[[dict[str, Any]], None]


class Lorebook:
    """A store rooted at a directory: append actions, query them, resume, check."""

    def __init__(self, root: Path, config: Config, env: Mapping[str, str]) -> None:
        self.root = root
        self.config = config
        self.layout: Layout = config.layout(root)
        self.host = host_name()
        self._env_agent = env.get("LORE_AGENT") or None
        self._env_project = env.get("LORE_PROJECT") or None
        self._env_session = env.get("LORE_SESSION") or None
        redaction = config.section("redaction")
        self.sanitizer = Sanitizer(
            extra_secret_keys=redaction.get("extra_secret_keys") or (),
            extra_patterns=redaction.get("extra_patterns") or {},
            max_value_chars=config.max_value_chars,
        )
        self.listeners: list[Listener] = []
        self.writer = LogWriter(
            self.layout,
            self.sanitizer,
            fsync=config.durability == "fsync",
            max_line_bytes=config.max_line_bytes,
            listeners=self.listeners,
        )

    # -- opening ---------------------------------------------------------------------------
    @classmethod
    def open(
        cls, path: str | Path | None = None, *, env: Mapping[str, str] | None = None
    ) -> Lorebook:
        """Open the store at `path` (or found from the cwd / `LORE_ROOT`); it must exist."""
        environ = os.environ if env is None else env
        root = Path(path).resolve() if path is not None else find_root(env=dict(environ))
        require_store(root)
        return cls(root, load_config(root), environ)

    @classmethod
    def init(
        cls, path: str | Path | None = None, *, env: Mapping[str, str] | None = None
    ) -> Lorebook:
        """Create (or complete) the store layout at `path`; safe to run again."""
        from .init import create_store

        environ = os.environ if env is None else env
        root = Path(path).resolve() if path is not None else find_root(env=dict(environ))
        create_store(root)
        return cls(root, load_config(root), environ)

    def on(self, event: str, listener: Listener) -> None:
        """Subscribe to `action` events: called with every record after it is stored."""
        if event != "action":
            raise UsageError(f"unknown event {event!r}: only 'action' is published")
        self.listeners.append(listener)

    # -- identity defaults -----------------------------------------------------------------
    def default_agent(self, agent: str | None = None) -> str:
        return agent or self._env_agent or self.config.raw.get("agent") or "agent"

    def default_project(self, project: str | None = None) -> str:
        return project or self._env_project or self.config.raw.get("project") or self.root.name

    # -- writing ---------------------------------------------------------------------------
    def start_session(
        self,
        *,
        agent: str | None = None,
        project: str | None = None,
        session_type: str = "cli",
        session_id: str | None = None,
        meta: Mapping[str, Any] | None = None,
        now: datetime | None = None,
    ) -> Session:
        """Write a start event and return the session (use `session()` for a `with` block)."""
        moment = now or utcnow()
        sid = (
            check_session_id(session_id) if session_id else new_ulid(int(moment.timestamp() * 1000))
        )
        session = Session(self, sid, self.default_agent(agent), self.default_project(project))
        full_meta = {"host": self.host, **(meta or {})}
        self.writer.write(
            session_record(
                "start",
                session=sid,
                agent=session.agent,
                project=session.project,
                session_type=session_type,
                meta=full_meta,
                now=moment,
            )
        )
        return session

    @contextmanager
    def session(
        self,
        *,
        agent: str | None = None,
        project: str | None = None,
        session_type: str = "cli",
        session_id: str | None = None,
    ) -> Iterator[Session]:
        """A session for a block: start event on entry; end event (`error` if it raised) on exit."""
        current = self.start_session(
            agent=agent, project=project, session_type=session_type, session_id=session_id
        )
        try:
            yield current
        except BaseException as exc:
            current.end(reason="error", meta={"exception": type(exc).__name__})
            raise
        current.end()

    def end_session(
        self,
        session: str | None = None,
        *,
        reason: str = "normal",
        agent: str | None = None,
        project: str | None = None,
        meta: Mapping[str, Any] | None = None,
        now: datetime | None = None,
    ) -> dict[str, Any]:
        """Write an end event for `session` (else `LORE_SESSION`)."""
        sid = session or self._env_session
        if not sid:
            raise UsageError("no session to end: pass --session or set LORE_SESSION")
        if agent is None or project is None:
            # the end event carries the session's own identity (resume filters on it), not
            # whatever defaults the ending process happens to have
            known_agent, known_project = self._session_identity(sid, now)
            agent = agent or known_agent
            project = project or known_project
        return self.writer.write(
            session_record(
                "end",
                session=sid,
                agent=self.default_agent(agent),
                project=self.default_project(project),
                reason=reason,
                meta=meta,
                now=now,
            )
        )

    def _session_identity(
        self, session: str, now: datetime | None = None
    ) -> tuple[str | None, str | None]:
        """(agent, project) recorded in the session's shards, if it can be found."""
        from .log.identity import session_identity

        max_days = int(self.config.section("resume").get("max_session_days", 14))
        found = session_identity(self.layout.actionlog, session, now or utcnow(), max_days)
        return found if found is not None else (None, None)

    def log(
        self,
        action_type: str,
        *,
        session: str | None = None,
        agent: str | None = None,
        project: str | None = None,
        now: datetime | None = None,
        **fields: Any,
    ) -> dict[str, Any]:
        """Append one action; the session is `session`, else `LORE_SESSION`, else automatic.

        In an explicit session, a missing agent or project is the session's own (from its
        shards), before LORE_AGENT/LORE_PROJECT and the config. The automatic session is shared by every process logging for (agent, project, host, day);
        its start event is written with its first action.
        """
        moment = now or utcnow()
        sid = session or self._env_session
        if sid and (agent is None or project is None):
            # an explicit session keeps the identity it was started with
            known_agent, known_project = self._session_identity(sid, moment)
            agent = agent or known_agent
            project = project or known_project
        agent = self.default_agent(agent)
        project = self.default_project(project)
        header = None
        if not sid:
            sid = auto_session_id(agent, project, self.host, format_ts(moment)[:10])
            header = session_record(
                "start",
                session=sid,
                agent=agent,
                project=project,
                session_type="cli",
                meta={"host": self.host, "auto": True},
                now=moment,
            )
        record = action_record(
            action_type, session=sid, agent=agent, project=project, now=moment, **fields
        )
        return self.writer.write(record, header=header)

    # -- reading ---------------------------------------------------------------------------
    def iter_actions(
        self,
        query: ActionFilter | None = None,
        *,
        newest_first: bool = True,
        on_problem: OnProblem = _ignore,
    ) -> Iterator[dict[str, Any]]:
        """Stream matching actions; day directories outside the window are never opened."""
        query = query or ActionFilter()
        records = iter_records(
            self.layout.actionlog,
            base=self.root,
            since=query.since,
            until=query.until,
            newest_first=newest_first,
            sessions=[query.session] if query.session else None,
            on_problem=on_problem,
        )
        return (r for r in records if query.matches(r))

    def actions(
        self, *, limit: int | None = 50, on_problem: OnProblem = _ignore, **filters: Any
    ) -> list[dict[str, Any]]:
        """Matching actions, newest first (filters: type, outcome, project, agent, epic, issue,
        session, category, since, until — times as canonical timestamps or datetimes)."""
        for key in ("since", "until"):
            if isinstance(filters.get(key), datetime):
                filters[key] = format_ts(filters[key])
        if limit is not None and limit < 1:
            raise UsageError(f"limit must be a positive number, not {limit}")
        out = []
        for record in self.iter_actions(ActionFilter(**filters), on_problem=on_problem):
            out.append(record)
            if limit is not None and len(out) >= limit:
                break
        return out

    def sessions(
        self,
        *,
        project: str | None = None,
        agent: str | None = None,
        status: str | None = None,
        now: datetime | None = None,
        on_problem: OnProblem = _ignore,
    ) -> list[SessionInfo]:
        """Every session with its status, most recently active first."""
        if status is not None and status not in STATUSES:
            raise UsageError(f"status {status!r} is not one of: {', '.join(STATUSES)}")
        records = iter_records(self.layout.actionlog, base=self.root, on_problem=on_problem)
        infos = summarize(records, now or utcnow(), self.config.idle_minutes)
        return [
            s
            for s in infos
            if (project is None or s.project == project)
            and (agent is None or s.agent == agent)
            and (status is None or s.status == status)
        ]

    def resume(
        self,
        *,
        project: str | None = None,
        agent: str | None = None,
        session: str | None = None,
        limit: int = 20,
        now: datetime | None = None,
        on_problem: OnProblem = _ignore,
    ) -> dict[str, Any]:
        """The last session's state and what to do next (see `lore resume --help`)."""
        from .log.resume_state import build_resume

        if limit < 1:
            raise UsageError(f"limit must be a positive number, not {limit}")
        return build_resume(
            self,
            project=project,
            agent=agent,
            session=session,
            limit=limit,
            now=now or utcnow(),
            on_problem=on_problem,
        )

    def check(self) -> CheckReport:
        """Validate every shard: schema, duplicate ids, torn lines, secrets left in the text."""
        return check_log(self.layout.actionlog, self.root, self.sanitizer)


class Session:
    """A handle for logging into one session."""

    def __init__(self, book: Lorebook, session_id: str, agent: str, project: str) -> None:
        self.book = book
        self.id = session_id
        self.agent = agent
        self.project = project
        self.ended = False

    def log(self, action_type: str, **fields: Any) -> dict[str, Any]:
        """Append an action to this session."""
        return self.book.log(
            action_type, session=self.id, agent=self.agent, project=self.project, **fields
        )

    @contextmanager
    def track(self, action_type: str, **fields: Any) -> Iterator[dict[str, Any]]:
        """Log `in_progress`, then `success` or `failure` (with error and duration) as a child."""
        opened = self.log(action_type, outcome="in_progress", **fields)
        started = time.perf_counter()
        close = {k: v for k, v in fields.items() if k in ("context", "epic", "issue", "category")}
        try:
            yield opened
        except BaseException as exc:
            self.log(
                action_type,
                outcome="failure",
                parent=opened["id"],
                error=f"{type(exc).__name__}: {exc}",
                duration_s=round(time.perf_counter() - started, 3),
                **close,
            )
            raise
        self.log(
            action_type,
            outcome="success",
            parent=opened["id"],
            duration_s=round(time.perf_counter() - started, 3),
            **close,
        )

    def end(self, reason: str = "normal", meta: Mapping[str, Any] | None = None) -> None:
        """Write the end event (once)."""
        if self.ended:
            return
        self.book.end_session(
            self.id, reason=reason, agent=self.agent, project=self.project, meta=meta
        )
        self.ended = True

    def __repr__(self) -> str:
        return f"Session({self.id!r}, agent={self.agent!r}, project={self.project!r})"


__all__ = ["LoreError", "Lorebook", "Session"]
