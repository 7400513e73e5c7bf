"""`Lorebook`: the library API. The CLI, TUI, MCP server and hooks are thin skins over it."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .config import Config, load_config
from .errors import LoreError, UsageError
from .knowledge.gate import install_knowledge_triggers
from .log.actionlog import ActionLog
from .log.append import Appender, Listener, resolve_root
from .log.check import CheckReport, check_log, check_symlinks, redact_findings
from .log.query import ActionFilter
from .log.sessions import SessionInfo
from .paths import require_store
from .problems import OnProblem, ignore
from .timeutil import as_timestamp, utcnow

if TYPE_CHECKING:
    from .expertise.api import Expertise
    from .index import SearchIndex
    from .knowledge.api import Learnings
    from .knowledge.ops import KnowledgeOps
    from .log.catalog_query import CatalogView


class Lorebook:
    """A store rooted at a directory: append actions, query them, resume, check."""

    def __init__(
        self,
        root: Path,
        config: Config,
        env: Mapping[str, str],
        *,
        appender: Appender | None = None,
    ) -> None:
        self.appender = appender or Appender(root, config, env)
        self.action_log = ActionLog(self.appender)  # what lower layers get, never the facade
        self.root = root
        self.config = config
        self.env = env
        self.layout = self.appender.layout
        self.sanitizer = self.appender.sanitizer
        self.writer = self.appender.writer
        self.listeners = self.appender.listeners
        self.events = self.appender.events  # see install_subscribers()

    # -- opening ---------------------------------------------------------------------------
    @classmethod
    def open(
        cls, path: str | Path | None = None, *, env: Mapping[str, str] | None = None
    ) -> Lorebook:
        """Open the store at `path` (or found from the cwd / `LORE_ROOT`); it must exist."""
        environ = os.environ if env is None else env
        root = resolve_root(path, environ)
        require_store(root)
        return cls(root, load_config(root), environ)

    @classmethod
    def init(
        cls, path: str | Path | None = None, *, env: Mapping[str, str] | None = None
    ) -> Lorebook:
        """Create (or complete) the store layout at `path`; safe to run again."""
        from .init import create_store

        environ = os.environ if env is None else env
        root = resolve_root(path, environ)
        create_store(root)
        return cls(root, load_config(root), environ)

    @cached_property
    def expertise(self) -> Expertise:
        """Expertise files: list, get, classify, learn, validate, improve, history, prompt."""
        from .expertise.api import Expertise

        return Expertise(self.layout, self.sanitizer, self.config)

    @classmethod
    def around(cls, appender: Appender) -> Lorebook:
        """The API over an existing appender (same writer and event bus): `lore log`'s fast
        path opens one only when a record wakes the knowledge subscribers."""
        return cls(appender.root, appender.config, {}, appender=appender)

    def install_subscribers(self) -> None:
        """Install the subscribers that write when certain records are logged: the knowledge
        gate (automatic drafts and RCA lessons; off with `drafts.auto: false`) and, with
        `expertise.learn_on_session_end`, the learner that updates and commits expertise when a
        session ends. Idempotent: each is installed once per event bus.

        Opening a store never does this: a reader (a search, a TUI view, a test) must be able
        to log without drafts appearing or commits being made. The entry points that act for a
        user — the CLI, hooks, the MCP server — call it once after opening."""
        install_knowledge_triggers(
            self.events, lambda: self.knowledge, self.config.section("drafts")
        )
        if self.config.section("expertise").get("learn_on_session_end") is True:
            from .expertise.subscriber import subscribe

            subscribe(self.events, lambda: self.expertise)

    def on(self, event: str, listener: Listener) -> None:
        """Subscribe to `action` events: called with every record after it is stored (a
        listener that raises is reported as a warning; the record stays stored)."""
        self.events.on(event, listener)

    # -- identity defaults -----------------------------------------------------------------
    def default_agent(self, agent: str | None = None) -> str:
        return self.appender.default_agent(agent)

    def default_project(self, project: str | None = None) -> str:
        return self.appender.default_project(project)

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
        event = self.appender.start(
            agent=agent,
            project=project,
            session_type=session_type,
            session_id=session_id,
            meta=meta,
            now=now,
        )
        return Session(self, event["session"], event["agent"], event["project"])

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
        """Write an end event for `session` (else `LORE_SESSION`), with the session's identity."""
        return self.appender.end(
            session, reason=reason, agent=agent, project=project, meta=meta, now=now
        )

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
        """Append one action (see `Appender.log` for how the session and identity are chosen)."""
        return self.appender.log(
            action_type, session=session, agent=agent, project=project, now=now, **fields
        )

    # -- reading ---------------------------------------------------------------------------
    @property
    def catalog(self) -> CatalogView:
        """The action catalog under `.lore/cache/` (synced on use; see lorebook.log.catalog)."""
        return self.action_log.catalog

    def iter_actions(
        self,
        query: ActionFilter | None = None,
        *,
        newest_first: bool = True,
        on_problem: OnProblem = ignore,
        include_archive: bool = False,
    ) -> Iterator[dict[str, Any]]:
        """Stream matching actions from the catalog, else from the shards (same results),
        redacted: a line edited by hand may hold a secret the writer never saw."""
        return self.action_log.iter_actions(
            query, newest_first=newest_first, on_problem=on_problem, include_archive=include_archive
        )

    def actions(
        self,
        *,
        limit: int | None = 50,
        on_problem: OnProblem = ignore,
        include_archive: bool = False,
        **filters: Any,
    ) -> list[dict[str, Any]]:
        """Matching actions, newest first (filters: type, outcome, project, agent, epic, issue,
        session, category, since, until — times as datetimes, canonical timestamps or the
        forms of `--since`: `7d`, `YYYY-MM-DD`)."""
        return self.action_log.actions(
            limit=limit, on_problem=on_problem, include_archive=include_archive, **filters
        )

    def sessions(
        self,
        *,
        project: str | None = None,
        agent: str | None = None,
        status: str | None = None,
        now: datetime | None = None,
        on_problem: OnProblem = ignore,
    ) -> list[SessionInfo]:
        """Every session with its status, most recently active first."""
        return self.action_log.sessions(
            now=now or utcnow(), project=project, agent=agent, status=status, on_problem=on_problem
        )

    def resume(
        self,
        *,
        project: str | None = None,
        agent: str | None = None,
        session: str | None = None,
        limit: int = 20,
        now: datetime | None = None,
        on_problem: OnProblem = ignore,
    ) -> dict[str, Any]:
        """The last session's state and what to do next (see `lore resume --help`)."""
        from .log.resume_state import build_resume

        if limit < 1:
            raise UsageError(f"limit must be a positive number, not {limit}")
        return build_resume(
            self.layout,
            self.sanitizer,
            self.config,
            project=project,
            agent=agent,
            session=session,
            limit=limit,
            now=now or utcnow(),
            on_problem=on_problem,
        )

    @cached_property
    def index(self) -> SearchIndex:
        """The search index over the learnings (`lorebook.index.SearchIndex`); loads lazily."""
        from .index import SearchIndex

        return SearchIndex(
            self.layout,
            self.config,
            self.sanitizer,
            env=self.env,
            stats_snapshot=self._learning_figures,
            stale_snapshot=self.learnings.stale_ids,
        )

    def _learning_figures(self) -> Callable[[str], tuple[int, float | None, int]]:
        """Applications, success rate and occurrences per learning id, from the log now."""
        from .knowledge.stats import rate

        figures = self.knowledge.figures()

        def of(learning_id: str) -> tuple[int, float | None, int]:
            found = figures.get(learning_id)
            if found is None:
                return 0, None, 1
            if found.applications:
                return (
                    found.applications,
                    rate(found.successes, found.applications),
                    max(found.occurrences, 1),
                )
            if found.occurrences:  # a pattern: its occurrences say how well it was solved
                return (
                    found.occurrences,
                    rate(found.occurrence_successes, found.occurrences),
                    found.occurrences,
                )
            return 0, None, 1

        return of

    def preflight(
        self, task: str, *, phase: str = "plan", limit: int = 5, log: bool = True
    ) -> dict[str, Any]:
        """What the team learned about `task` (see `lore preflight`); logged as a search action."""
        from .index.preflight import build_preflight

        def expertise(text: str, categories: list[str]) -> list[dict[str, Any]]:
            known = set(self.expertise.domains())
            wanted = [self.expertise.classify(text).domain, *categories]
            found = []
            for domain in dict.fromkeys(d for d in wanted if d in known):
                try:
                    block = self.expertise.prompt(domain=domain)
                except LoreError as exc:  # a broken expertise file must not break preflight
                    self.index.warn(f"expertise skipped: {exc}")
                    continue
                if block["exists"]:
                    found.append({"domain": domain, "prompt": block["prompt"]})
            return found

        brief = build_preflight(
            self.index, self.sanitizer, expertise, task, phase=phase, limit=limit
        )
        if log:
            ids = [item["id"] for item in brief["learnings"]]
            try:
                self.log("search", context={"query": task, "phase": phase, "results": ids})
            except LoreError as exc:
                if os.access(self.layout.actionlog, os.W_OK):
                    raise
                # a read-only store (a read-only mount): the brief is still worth having
                message = f"this preflight was not logged: {exc}"
                self.index.warn(message)
                brief["warnings"].append(message)
        return brief

    @cached_property
    def learnings(self) -> Learnings:
        """The knowledge base: learnings, drafts, review through git, staleness."""
        from .knowledge.api import Learnings
        from .knowledge.store import LearningStore

        return Learnings(LearningStore(self.layout, self.sanitizer), self.action_log)

    @cached_property
    def knowledge(self) -> KnowledgeOps:
        """What the log teaches: automatic drafts, patterns, applications, RCA lessons, stats."""
        from .knowledge.ops import KnowledgeOps

        return KnowledgeOps(self.learnings, self.action_log, self.config)

    def check(self) -> CheckReport:
        """Validate every shard (schema, duplicate ids, torn lines, secrets left in the text),
        every learning and draft (front matter, ids, supersedes, secrets) and expertise file."""
        from .expertise.check import check_expertise
        from .knowledge.check import check_learnings

        report = check_log(self.layout.actionlog, self.root, self.sanitizer)
        check_symlinks(self.layout, report.findings.append)
        report.learnings = check_learnings(self.layout, self.sanitizer, report.findings.append)
        max_lines = int(self.config.section("expertise").get("max_lines", 1000))
        report.expertise = check_expertise(
            self.layout, self.sanitizer, report.findings.append, max_lines=max_lines
        )
        report.findings = redact_findings(report.findings, self.sanitizer)
        return report

    def report(
        self,
        *,
        days: int | None = 7,
        since: str | None = None,
        until: str | None = None,
        group_by: str = "day",
        **filters: Any,
    ) -> dict[str, Any]:
        """The activity report of `lore report --json` (filters: project, agent, include_archive;
        since/until as `7d`, dates or timestamps)."""
        from .log.report import build_report, resolve_window

        window = resolve_window(
            days=None if since else days, since=since, until=until, now=utcnow()
        )
        return build_report(self, window, group_by=group_by, **filters)

    def export_training_data(
        self, fmt: str = "jsonl", path: str | Path | None = None, **options: Any
    ) -> dict[str, Any]:
        """Write training records and their manifest (see `lore export`); returns the manifest.
        Options: since, until (as for `actions`), project, with_context, include_archive."""
        from .log.export import default_path, export

        target = Path(path) if path else default_path(self, fmt, utcnow())
        options["since"] = as_timestamp(options.get("since"), "since")
        options["until"] = as_timestamp(options.get("until"), "until")
        options.setdefault("project", None)
        return export(self, fmt=fmt, path=target, **options)

    # -- paging (added for `lore tui`) -----------------------------------------------------
    def stream_actions(
        self,
        *,
        newest_first: bool = True,
        on_problem: OnProblem = ignore,
        include_archive: bool = False,
        **filters: Any,
    ) -> Iterator[dict[str, Any]]:
        """`actions()` as a lazy stream (same filters): a viewer pages through a million
        actions by pulling rows as it shows them, never holding them all."""
        for key in ("since", "until"):
            filters[key] = as_timestamp(filters.get(key), key)
        return self.action_log.iter_actions(
            ActionFilter(**filters),
            newest_first=newest_first,
            on_problem=on_problem,
            include_archive=include_archive,
        )


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
