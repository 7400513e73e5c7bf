"""The append path: identity defaults, sessions, redaction and one locked line per record.

`Lorebook` delegates every write here, and `lore log`'s fast path uses it directly, so it must
import only the standard library and lorebook's light modules (a test enforces this).

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from functools import cached_property

from ..config import Config, load_config
from ..errors import UsageError
from ..events import EventBus
from ..ids import new_ulid
from ..paths import find_root_dir, require_store
from ..timeutil import datetime, format_ts, utcnow
from .writer import (
    LogWriter,
    action_record,
    auto_session_id,
    check_session_id,
    duration_error,
    host_name,
    session_record,
)

TYPE_CHECKING = False  # typing costs milliseconds on the append path; mypy still sees it
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from ..paths import Layout
    from ..redact.sanitize import Sanitizer
    from ..repoid import RepoId

Listener = Callable[[dict[str, "Any"]], None]


def resolve_root(path: str | Path | None, env: Mapping[str, str]) -> Path:
    """`path`, else `LORE_ROOT`, else the nearest folder with `.lore/`, else the git top level."""
    from pathlib import Path

    return Path(resolve_root_dir(path, env))


def resolve_root_dir(path: str | Path | None, env: Mapping[str, str]) -> str:
    """`resolve_root` as a string (os.path alone: `lore log` never imports pathlib)."""
    return os.path.realpath(path) if path is not None else find_root_dir(env=dict(env))


class Appender:
    """Writes actions and session events for one store.

    It holds its root as a string and writes with os.path alone: pathlib (~8 ms to import, with
    urllib.parse and ipaddress) is loaded only when something asks for `root` or `layout`.
    """

    def __init__(self, root: Path | str, config: Config, env: Mapping[str, str]) -> None:
        self.root_dir = os.fspath(root)
        self.config = config
        # the directory `layout.actionlog` names (Layout.at joins the same setting to the root)
        self.actionlog = os.path.join(self.root_dir, config.paths.actionlog)
        self.host = host_name()
        self.env_agent = env.get("LORE_AGENT") or None
        self.env_project = env.get("LORE_PROJECT") or None
        self.env_session = env.get("LORE_SESSION") or None
        self.max_depth = config.log.max_depth
        # `events.on("action", handler)`: loosely coupled subscribers
        self.events = EventBus(self.warn)
        self.listeners: list[Listener] = [self.events.publish_record]

    @cached_property
    def root(self) -> Path:
        from pathlib import Path

        return Path(self.root_dir)

    @cached_property
    def layout(self) -> Layout:
        return self.config.layout(self.root)

    @cached_property
    def sanitizer(self) -> Sanitizer:
        """Built on first use, like the writer: what only opens the store builds neither."""
        from ..redact.sanitize import Sanitizer

        config = self.config
        return Sanitizer(
            extra_secret_keys=config.redaction.extra_secret_keys,
            extra_patterns=config.redaction.extra_patterns,
            max_value_chars=config.log.max_value_chars,
        )

    def warn(self, message: str) -> None:
        """A warning on stderr, redacted with this store's sanitizer."""
        from ..notices import warn

        warn(message, sanitizer=self.sanitizer)

    @cached_property
    def writer(self) -> LogWriter:
        """Built on first write: opening a store to read it builds no writer."""
        return LogWriter(
            self.actionlog,
            self.sanitizer,
            fsync=self.config.log.durability == "fsync",
            max_line_bytes=self.config.log.max_line_bytes,
            listeners=self.listeners,
        )

    @classmethod
    def open(cls, path: str | Path | None = None, env: Mapping[str, str] | None = None) -> Appender:
        """The appender of an existing store (one line telling the user to `lore init`)."""
        environ = os.environ if env is None else env
        root = resolve_root_dir(path, environ)
        require_store(root)
        return cls(root, load_config(root), environ)

    def default_agent(self, agent: str | None = None) -> str:
        if not agent and self.env_agent:
            from ..redact.identifiers import check_identifier

            return check_identifier("LORE_AGENT", self.env_agent, self.sanitizer)
        return agent or self.config.agent or "agent"

    def default_project(self, project: str | None = None) -> str:
        """`project`, else LORE_PROJECT, else the config's, else the repository's name (see
        `lorebook.repoid`: its worktrees and clones share it), else the folder's name."""
        if not project and self.env_project:
            from ..redact.identifiers import check_identifier

            return check_identifier("LORE_PROJECT", self.env_project, self.sanitizer)
        return project or self.config.project or self.repo_name or os.path.basename(self.root_dir)

    @cached_property
    def repo(self) -> RepoId | None:
        from ..repoid import repo_of

        return repo_of(self.root_dir)

    @cached_property
    def repo_name(self) -> str | None:
        """The repository's name, unless it looks like a secret (then the folder's is used)."""
        from ..redact.identifiers import secret_kind

        name = self.repo.name if self.repo is not None else None
        return name if name and secret_kind(name, self.sanitizer) is None else None

    def project_names(self, project: str | None = None) -> tuple[str, ...]:
        """Every name this store's default project has gone by: the repository's, and for
        records written before it was used, the folder's and the main checkout's. A project
        that is given (or set by LORE_PROJECT or the config) is only itself."""
        chosen = self.default_project(project)
        if project or self.env_project or self.config.project:
            return (chosen,)
        names = [chosen, os.path.basename(self.root_dir)]
        if self.repo is not None:
            names += [self.repo.main_folder, os.path.basename(self.repo.top)]
        return tuple(dict.fromkeys(n for n in names if n))

    def repo_key(self) -> str | None:
        """The repository's identity: its normalised `origin`, else its root commit (a git
        process: asked at a session's start, never per record)."""
        repo = self.repo
        if repo is None:
            return None
        if repo.key is not None:
            return repo.key
        from pathlib import Path

        from ..git.binary import root_commit

        return root_commit(Path(repo.top))

    def default_session(self, session: str | None) -> str | None:
        """`session`, else LORE_SESSION, checked with this store's rules (the error names
        LORE_SESSION when it came from there). The one check of a session id: it is done
        here, where the id enters, before any shard path is built from it."""
        if session:
            return check_session_id(session, "session", self.sanitizer)
        if not self.env_session:
            return None
        return check_session_id(self.env_session, "LORE_SESSION", self.sanitizer)

    def session_identity(
        self, session: str, now: datetime | None = None
    ) -> tuple[str | None, str | None]:
        """(agent, project) recorded in the session's own shards, if any can be found."""
        from .identity import session_identity

        max_days = self.config.resume.max_session_days
        found = session_identity(self.actionlog, session, now or utcnow(), max_days)
        return found if found is not None else (None, None)

    def ended(self, session: str, now: datetime | None = None) -> dict[str, Any] | None:
        """The end event of `session` if it has ended (and not been started again), from the
        tail of its newest shard; None when it is open or that cannot be told cheaply."""
        from .identity import ended_event

        max_days = self.config.resume.max_session_days
        return ended_event(self.actionlog, session, now or utcnow(), max_days)

    def _identity(
        self, session: str | None, agent: str | None, project: str | None, now: datetime | None
    ) -> tuple[str, str]:
        if session and (agent is None or project is None):
            # an explicit session keeps the identity it was started with
            known_agent, known_project = self.session_identity(session, now)
            agent = agent or known_agent
            project = project or known_project
        return self.default_agent(agent), self.default_project(project)

    def start(
        self,
        *,
        agent: str | None = None,
        project: str | None = None,
        session_type: str = "cli",
        session_id: str | None = None,
        meta: Mapping[str, Any] | None = None,
        now: datetime | None = None,
    ) -> dict[str, Any]:
        """Write a start event for a new (or given) session id; returns the stored event."""
        moment = now or utcnow()
        sid = self.default_session(session_id) if session_id else None
        sid = sid or new_ulid(int(moment.timestamp() * 1000))
        repo = self.repo_key()  # which repository, whatever the project is called
        return self.writer.write(
            session_record(
                "start",
                session=sid,
                agent=self.default_agent(agent),
                project=self.default_project(project),
                session_type=session_type,
                meta={"host": self.host, **({"repo": repo} if repo else {}), **(meta or {})},
                now=moment,
            )
        )

    def end(
        self,
        session: str | None = None,
        *,
        reason: str = "normal",
        agent: str | None = None,
        project: str | None = None,
        meta: Mapping[str, Any] | None = None,
        now: datetime | None = None,
    ) -> dict[str, Any]:
        """Write an end event for `session` (else `LORE_SESSION`) with the session's identity."""
        sid = self.default_session(session)
        if not sid:
            raise UsageError("no session to end: pass --session or set LORE_SESSION")
        agent, project = self._identity(sid, agent, project, now)
        return self.writer.write(
            session_record(
                "end", session=sid, agent=agent, project=project, reason=reason, meta=meta, now=now
            )
        )

    @cached_property
    def keep_depth(self) -> int:
        """Levels below a record's `context` or `meta` that the record keeps: `log.max_depth`,
        or fewer when the sanitizer cuts sooner (its depth counts from the record's top)."""
        return max(min(self.max_depth, int(self.sanitizer.settings()[3]) - 1), 1)

    def fit_fields(self, fields: dict[str, Any], clip: bool) -> None:
        """Bring `context` and `meta` within the depth the record keeps, naming what was cut
        in `meta.clipped`; past `log.max_depth`, and for a duration that is not a finite
        number >= 0, a UsageError unless `clip` (then that field alone is clipped). The one
        depth check of a record: no walker may recurse past `log.max_depth` (the sanitizer,
        the encoder, every reader later)."""
        from .nesting import clip_deep, too_deep, value_too_deep  # writes only

        limit = self.keep_depth
        clipped: list[str] = []
        for what in ("context", "meta"):
            value = fields.get(what)
            if not isinstance(value, Mapping) or not value:
                continue
            plain = value if type(value) is dict else dict(value)
            if not value_too_deep(plain, limit):
                continue
            if not clip and value_too_deep(plain, self.max_depth):
                raise too_deep(what, self.max_depth)
            fields[what], cut = clip_deep(plain, limit, what)
            clipped += cut
        if clip and duration_error(fields.get("duration_s")) is not None:
            fields["duration_s"] = None  # the record refuses it (action_record) unless clipped
            clipped.append("duration_s")
        if clipped:
            fields["meta"] = {**(fields.get("meta") or {}), "clipped": clipped}

    def log(
        self,
        action_type: str,
        *,
        session: str | None = None,
        agent: str | None = None,
        project: str | None = None,
        now: datetime | None = None,
        clip: bool = False,
        **fields: Any,
    ) -> dict[str, Any]:
        """Append one action; the session is `session`, else `LORE_SESSION`, else automatic.

        In an explicit session a missing agent or project is the session's own (from its
        shards), before LORE_AGENT/LORE_PROJECT and the config. The automatic session is shared
        by every process logging for (agent, project, host, UTC day); its start event is
        written together with its first action. Nesting cut to the depth the record keeps is
        named in `meta.clipped`; with `clip` (hooks, MCP: input no one can correct), nesting
        past `log.max_depth` and a duration out of range are clipped too, not refused.
        """
        self.fit_fields(fields, clip)
        moment = now or utcnow()
        sid = self.default_session(session)
        agent, project = self._identity(sid, agent, project, moment)
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
