"""`Lorebook`: the library API. The CLI, TUI, MCP server and hooks are thin skins over it.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path

from .config import load_config
from .errors import LoreError, UsageError
from .log.actionlog import ActionLog
from .log.append import Appender, resolve_root
from .log.session_handle import Session
from .notices import Notice
from .paths import require_store
from .problems import ignore
from .timeutil import utcnow

PARTIAL_DAYS = 7  # what `partial_window` reads of the log while the catalog is being built,
PARTIAL_BYTES = 8 << 20  # or fewer days when those hold more than this: a first answer in seconds
TYPE_CHECKING = False  # typing costs milliseconds on every cold read; mypy still sees it
if TYPE_CHECKING:
    import threading
    from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
    from datetime import datetime
    from typing import Any

    from .config import Config
    from .contracts import (
        ActivityReport,
        CatalogStatus,
        KpisReport,
        OtelExport,
        PreflightBrief,
        ResumeState,
    )
    from .contracts.mirror import MirrorResult
    from .events import EventBus
    from .expertise.api import Expertise
    from .index import SearchIndex
    from .index.evaluate import EvalReport
    from .knowledge.api import Learnings
    from .knowledge.ops import KnowledgeOps
    from .log.append import Listener
    from .log.catalog_query import CatalogView
    from .log.check import CheckReport
    from .log.query import ActionFilter
    from .log.report import Window
    from .log.retention import RetentionResult
    from .log.sessions import SessionInfo
    from .log.timeline import Timeline
    from .log.writer import LogWriter
    from .paths import Layout
    from .problems import OnProblem
    from .progress import Progress
    from .redact.sanitize import Sanitizer


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

    # the appender's collaborators, built when first used: a read builds no writer
    @property
    def layout(self) -> Layout:
        return self.appender.layout

    @property
    def sanitizer(self) -> Sanitizer:
        return self.appender.sanitizer

    @property
    def writer(self) -> LogWriter:
        return self.appender.writer

    @property
    def listeners(self) -> list[Listener]:
        return self.appender.listeners

    @property
    def events(self) -> EventBus:  # see install_subscribers()
        return self.appender.events

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
        created = create_store(root)
        book = cls(root, load_config(root), environ)
        book.created = tuple(created)
        return book

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
        from .knowledge.gate import install_knowledge_triggers

        install_knowledge_triggers(self.events, lambda: self.knowledge, self.config.drafts)
        if self.config.expertise.learn_on_session_end:
            from .expertise.subscriber import subscribe

            subscribe(self.events, lambda: self.expertise)

    def on_progress(self, callback: Progress | None) -> None:
        """Report long work as it happens — exporting or loading the embedding model, building
        the search index, building or fully checking the action catalog — as
        `callback(task, done, total)` (see `lorebook.progress`); None stops. Nothing is printed
        below the skins: a terminal skin draws it (`lorebook.render.progress`)."""
        self._progress = callback
        self.action_log.on_progress(callback)
        if "index" in self.__dict__:
            self.index.on_progress(callback)

    def on(self, event: str, listener: Listener) -> None:
        """Subscribe to `action` events: called with every record after it is stored (a
        listener that raises is reported as a warning; the record stays stored)."""
        self.events.on(event, listener)

    # -- identity defaults -----------------------------------------------------------------
    def default_agent(self, agent: str | None = None) -> str:
        return self.appender.default_agent(agent)

    def default_project(self, project: str | None = None) -> str:
        return self.appender.default_project(project)

    def project_names(self, project: str | None = None) -> tuple[str, ...]:
        """The names the default project went by (the repository's, the folder's), for a
        resume that must find older records too; a given project is only itself."""
        return self.appender.project_names(project)

    # -- client sessions -------------------------------------------------------------------
    def bind_client(self, session: str, *, capture: bool = True) -> None:
        """Note that the client running this process (a hook of Claude Code, say) is in
        `session`, so an MCP server it started logs there too (see `lorebook.log.client_notes`);
        `capture`: its hooks record every tool call, the server's own calls included."""
        from .log.client_notes import bind

        bind(self.layout.cache, session, capture=capture)

    def client_session(self) -> dict[str, Any] | None:
        """The session of the client that started this process, as a hook of it noted
        (`{"session", "capture"}`), else None."""
        from .log.client_notes import find

        return find(self.layout.cache)

    def release_client(self, session: str) -> None:
        """Forget the notes naming `session` (it ended)."""
        from .log.client_notes import release

        release(self.layout.cache, session)

    def first_delivery(
        self, client: str, session: str | None, call: str | None, *, within: float | None = None
    ) -> bool:
        """True when this is the first time `client` reports tool call `call` of `session`
        (log it); False for a repeat (see `lorebook.log.deliveries`); with `within`, a repeat
        only that many seconds from the first (for what has no id: a prompt)."""
        from .log.deliveries import claim

        return claim(self.layout.cache, client, session, call, within)

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
        return Session(self.action_log, event["session"], event["agent"], event["project"])

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
        """Write an end event for `session` (else `LORE_SESSION`), with the session's identity;
        `session` may be a unique prefix of a session id."""
        if session:
            session = self.action_log.resolve_session(session, now)
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
        clip: bool = False,
        **fields: Any,
    ) -> dict[str, Any]:
        """Append one action (see `Appender.log` for how the session and identity are chosen,
        and what `clip` clips instead of refusing)."""
        return self.appender.log(
            action_type,
            session=session,
            agent=agent,
            project=project,
            now=now,
            clip=clip,
            **fields,
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

    def timeline(
        self, session: str, *, on_problem: OnProblem = ignore, include_archive: bool = False
    ) -> Timeline:
        """Session `session`'s actions as a tree (`log.timeline`): a tracked start and its
        outcome as one row, children under their parent, each row's start, duration, outcome
        and what it was; redacted, as `actions()` reads them."""
        from .log.timeline import build_timeline

        records = self.actions(
            session=session, limit=None, on_problem=on_problem, include_archive=include_archive
        )
        records.reverse()  # oldest first
        return build_timeline(records)

    def actions_json(
        self,
        *,
        limit: int | None = 50,
        on_problem: OnProblem = ignore,
        include_archive: bool = False,
        **filters: Any,
    ) -> str:
        """`actions(...)` as compact JSON, byte for byte what `json.dumps(..., ensure_ascii=False,
        separators=(",", ":"))` makes of it, mostly copied from the shards (`lore actions --json`
        on a pipe)."""
        return self.action_log.actions_json(
            limit=limit, on_problem=on_problem, include_archive=include_archive, **filters
        )

    def sessions(
        self,
        *,
        project: str | None = None,
        agent: str | None = None,
        status: str | None = None,
        since: str | datetime | None = None,
        until: str | datetime | None = None,
        text: str | None = None,
        now: datetime | None = None,
        limit: int | None = None,
        on_problem: OnProblem = ignore,
    ) -> list[SessionInfo]:
        """Every session with its status, most recently active first (only the first `limit`:
        a viewer's first page without reading tens of thousands). `since`: active then or
        later (without a catalog only the shards from that day on are read, so a session's
        earlier days are not counted); `until`: started before; `text`: in its id, project,
        agent, type, status or end reason (any case). Times as for `actions`."""
        return self.action_log.sessions(
            now=now or utcnow(),
            project=project,
            agent=agent,
            status=status,
            since=since,
            until=until,
            text=text,
            limit=limit,
            on_problem=on_problem,
        )

    def resume(
        self,
        *,
        project: str | tuple[str, ...] | None = None,
        agent: str | None = None,
        session: str | None = None,
        limit: int = 20,
        now: datetime | None = None,
        on_problem: OnProblem = ignore,
        exclude: Collection[str] = (),
    ) -> ResumeState:
        """The previous meaningful session's state and what to do next (see `lore resume
        --help`): sessions that did nothing yet are passed over, and so are those in `exclude`
        (the caller's own). `project` may be a tuple of one project's names (`project_names`)."""
        from .index.related import related_learnings, work_text
        from .log.resume_state import build_resume

        if limit < 1:
            raise UsageError("limit must be a positive number, not {}", limit)
        if session:
            session = self.action_log.resolve_session(session, now)
        state = build_resume(
            self.layout,
            self.sanitizer,
            self.config,
            project=project,
            agent=agent,
            session=session,
            limit=limit,
            now=now or utcnow(),
            on_problem=on_problem,
            catalog=self.catalog,
            clean_lines=self.action_log.clean_lines,
            exclude=exclude,
        )
        synonyms = self.config.search.synonyms
        state["learnings"] = related_learnings(
            self.layout.cache / "index", work_text(state), self.sanitizer, synonyms=synonyms
        )
        return state

    @cached_property
    def index(self) -> SearchIndex:
        """The search index over the learnings (`lorebook.index.SearchIndex`); loads lazily."""
        from .index import SearchIndex
        from .knowledge.ops import ranking_figures
        from .knowledge.stale_cache import StaleIds

        def stale() -> list[str]:  # on a new commit or an edited learning: reads them all
            return [report.id for report in self.learnings.stale()]

        def figures() -> Callable[[str], tuple[int, float | None, int]]:
            if self.catalog_building:  # the figures would be read from every shard
                from .index.result import no_stats

                return no_stats
            return ranking_figures(self.action_log)

        # ranking reads the log and the stale cache, not the knowledge base (YAML, pydantic)
        index = SearchIndex(
            self.layout,
            self.config,
            self.sanitizer,
            env=self.env,
            stats_snapshot=figures,
            stale_snapshot=StaleIds(self.layout, stale),
        )
        index.on_progress(self._progress)
        return index

    def prepare_in_background(self) -> None:
        """For a long-lived process whose calls must answer at once (`lore mcp`): build the
        action catalog (`build_catalog_in_background`) and the search index
        (`SearchIndex.build_in_background`; on a fresh clone it embeds every learning), each by
        a child process (`lorebook.child`) that a daemon thread waits for, so this process's
        calls never wait on them nor on the GIL. An index that exists is refreshed in the thread
        itself (one process writes it at a time). Until the catalog is built, searches rank
        without the application figures, which only the whole log could give."""
        from .child import BUILD_INDEX, run_child

        index = self.index  # made here, never in the thread
        self.build_catalog_in_background()

        def build_index() -> None:
            problem = run_child(BUILD_INDEX, self.root, self.env)
            if problem is not None:
                raise LoreError("{}", self.sanitizer.redact_text(problem)[0])

        index.build_in_background(None if index.exists() else build_index)

    def build_catalog_in_background(self, *, long_only: bool = False) -> bool:
        """Build a missing action catalog (a fresh clone of a long log has none, and every
        query reads all shards until one exists) by a child process that a daemon thread waits
        for, reporting its progress to `on_progress`; True when a build was started. With
        `long_only`, only for a log too long for a query to build it at once (more than
        `catalog.auto_build_days` days, or more than `PARTIAL_BYTES` of shards: a dense month
        held 1,000,000 actions; `lore tui`: a short, light one is read whole). Until it
        is done (`catalog_building`), this book's queries read the shards as without one (never
        waiting on the build's write): `partial_window` says how to keep them short."""
        import threading

        from .child import BUILD_CATALOG, run_child

        view = self.action_log.catalog  # made here, never in the thread
        if self.catalog_building or not view.enabled or view.catalog.exists():
            return False
        if long_only and not (view.long_history() or self._heavy_log()):
            return False
        index = self.index  # where a failed build is said (and searches hear of it)
        done = self._catalog_building = threading.Event()
        view.enabled = False  # until the build is done: see the docstring

        def build() -> None:
            try:
                problem = run_child(BUILD_CATALOG, self.root, self.env, self._progress)
                if problem is not None:  # queries go on without a catalog, as before
                    shown = self.sanitizer.redact_text(problem)[0]
                    index.warn(
                        Notice("the action catalog could not be built ({})", shown),
                        standing=True,
                    )
            finally:
                view.enabled = True
                done.set()

        threading.Thread(target=build, name="lore-catalog-build", daemon=True).start()
        return True

    def _heavy_log(self) -> bool:
        """The shards hold more than `PARTIAL_BYTES` (read whole, they would keep a first
        answer waiting)."""
        from .log.reader import shards_over

        return shards_over(self.layout.actionlog, PARTIAL_BYTES)

    def partial_window(self) -> tuple[str | None, str | None]:
        """`(since, why)` for a question about the whole log: while the action catalog is
        built in the background, the last `PARTIAL_DAYS` days of shards (fewer, down to the
        newest day, when they hold more than `PARTIAL_BYTES`), read at once, and a note saying
        so; else `(None, None)`, all of it."""
        if not self.catalog_building:
            return None, None
        from .log.reader import newest_days_within

        days, cut = newest_days_within(self.layout.actionlog, PARTIAL_BYTES, PARTIAL_DAYS)
        since = days[-1] if cut else f"{PARTIAL_DAYS}d"
        read = f"the shards since {since}" if cut else f"the last {PARTIAL_DAYS} days of the log"
        return since, (
            f"the action catalog is being built in the background: only {read} were read; "
            "ask again shortly for all of it"
        )

    @property
    def catalog_building(self) -> bool:
        """`prepare_in_background` is still building the action catalog."""
        return self._catalog_building is not None and not self._catalog_building.is_set()

    def wait_for_catalog(self, timeout: float | None = None) -> bool:
        """Wait for `prepare_in_background`'s catalog build (True when none is running): for a
        question about the whole log, which the build answers sooner than a read of every shard."""
        building = self._catalog_building
        return building is None or building.wait(timeout)

    def preflight(
        self,
        task: str,
        *,
        phase: str = "plan",
        limit: int = 5,
        log: bool = True,
        session: str | None = None,
        mode: str = "hybrid",
    ) -> PreflightBrief:
        """What the team learned about `task` (see `lore preflight`); logged as a search action
        in `session` (else LORE_SESSION). Without a session it is not logged: a lookup must not
        invent an automatic session and project that reports and resume would then count.
        `mode` is the search's: `keyword` needs no model and no vector store."""
        from .index.preflight import build_preflight

        def expertise(text: str, categories: list[str]) -> list[dict[str, Any]]:
            if not any(self.layout.expertise.glob("*.yaml")):
                return []  # no domain has a file: nothing to read (nor YAML to load)
            known = set(self.expertise.domains())
            wanted = [self.expertise.classify(text).domain, *categories]
            found = []
            for domain in dict.fromkeys(d for d in wanted if d in known):
                try:
                    block = self.expertise.prompt(domain=domain)
                except LoreError as exc:  # a broken expertise file must not break preflight
                    said.append(Notice("expertise skipped: {}", exc))
                    self.index.warn(said[-1])
                    continue
                if block["exists"]:
                    found.append({"domain": domain, "prompt": block["prompt"]})
            return found

        from .knowledge.ops import log_figures
        from .knowledge.stats import rank_solutions

        figures: dict[str, Any] = {}
        said: list[str] = []  # this preflight's own warnings, after its search's

        def ranked(pattern: str, solutions: list[dict[str, Any]]) -> list[dict[str, Any]]:
            if "all" not in figures:  # read the log once, and only when a pattern matched
                figures["all"] = log_figures(self.action_log)
            found = figures["all"].get(pattern)
            return rank_solutions(solutions, found.solutions if found is not None else {})

        brief = build_preflight(
            self.index,
            self.sanitizer,
            expertise,
            task,
            phase=phase,
            limit=limit,
            mode=mode,
            rank_solutions=ranked,
        )
        brief["warnings"] += [w for w in dict.fromkeys(said) if w not in brief["warnings"]]
        session = self.appender.default_session(session)
        if log and session:
            ids = [item["id"] for item in brief["learnings"]]
            try:
                self.log(
                    "search",
                    session=session,
                    context={"query": task, "phase": phase, "results": ids},
                )
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

    def check(self, *, fix: bool = False) -> CheckReport:
        """Validate every shard (schema, duplicate ids, torn lines, secrets left in the text),
        every learning and draft (front matter, ids, supersedes, secrets) and expertise file.
        `fix` first drops exact repeated shard lines, the one repair that loses nothing."""
        from .expertise.check import check_expertise
        from .knowledge.check import check_learnings
        from .log.check import check_log, check_symlinks, redact_findings

        report = check_log(self.layout.actionlog, self.root, self.sanitizer, fix=fix)
        check_symlinks(self.layout, report.findings.append)
        report.learnings = check_learnings(self.layout, self.sanitizer, report.findings.append)
        report.expertise = check_expertise(
            self.layout,
            self.sanitizer,
            report.findings.append,
            max_lines=self.config.expertise.max_lines,
        )
        report.findings = redact_findings(report.findings, self.sanitizer)
        return report

    def sync(self, *, push: bool = True, message: str | None = None) -> dict[str, Any]:
        """Commit the store's new and changed files (nothing else), pull, push (see
        `lore sync`); what was committed, pulled and pushed."""
        from .git.sync import sync
        from .redact.identifiers import redact_message, redact_path

        return sync(
            self.layout,
            redact_name=lambda path: redact_path(path, self.sanitizer)[0],
            redact_text=lambda text: redact_message(text, self.sanitizer),
            push=push,
            message=None if message is None else redact_message(message, self.sanitizer),
        )

    def report(
        self,
        *,
        days: int | None = None,
        since: str | None = None,
        until: str | None = None,
        group_by: str = "day",
        **filters: Any,
    ) -> ActivityReport:
        """The activity report of `lore report --json`: the last `days` (default 7) or
        since/until (`7d`, dates or timestamps), not both; filters: project, agent,
        include_archive, include_internal (lorebook's own bookkeeping, left out by default)."""
        from .log.report import build_report, resolve_window

        window = resolve_window(days=days, since=since, until=until, now=utcnow())
        return build_report(self.action_log, window, group_by=group_by, **filters)

    def kpis(self, *, days: int | None = None) -> KpisReport:
        """The seed's success metrics over the last `days` (default 30), from the action log:
        each with its definition, numerator, denominator, target, and None ("n/a") when the
        log cannot tell (see `lore report kpis --help`)."""
        from .log.kpis import DEFAULT_DAYS
        from .log.report import resolve_window

        now = utcnow()
        window = resolve_window(
            days=DEFAULT_DAYS if days is None else days, since=None, until=None, now=now
        )
        return self._kpis(window, now)

    def _kpis(self, window: Window, now: datetime) -> KpisReport:
        from .log.kpis import gather

        published = len(self.learnings.query(status="published"))
        return gather(
            self.action_log,
            since=window.since_ts,
            until=window.until_ts,
            days=window.days(),
            span_days=(window.until - window.since).total_seconds() / 86400,
            published=published,
            now=now,
        )

    def export_training_data(
        self, fmt: str = "jsonl", path: str | Path | None = None, **options: Any
    ) -> dict[str, Any]:
        """Write training records and their manifest (see `lore export`); returns the manifest.
        `path` as `export_path` takes it (an absolute path outside the repository, or one
        relative to the export folder). Options: since, until (as for `actions`; since not
        in the future and before until),
        project, type, outcome, agent (exact matches), with_context, include_archive."""
        from .log.export import default_path, export, export_window

        now = utcnow()
        options["since"], options["until"] = export_window(
            options.get("since"), options.get("until"), now
        )
        target = (
            self.export_path(path, anywhere_outside=True)
            if path
            else default_path(self.layout, fmt, now)
        )
        options.setdefault("project", None)
        return export(self.action_log, fmt=fmt, path=target, **options)

    def otel_export(
        self,
        endpoint: str | None = None,
        *,
        since_last: bool = False,
        content: str = "none",
        dry_run: bool = False,
    ) -> OtelExport:
        """Send each session as an OpenTelemetry trace over OTLP/HTTP (see `lore otel
        export`; needs the `otel` extra unless `dry_run`); returns what was sent. `endpoint`
        else OTEL_EXPORTER_OTLP_TRACES_ENDPOINT / OTEL_EXPORTER_OTLP_ENDPOINT, else
        `otel.endpoint` in the config; `content` "none" or "redacted"."""
        from .otel.run import export, repository

        otel = self.config.raw.get("otel")
        return export(
            self.layout,
            self.sanitizer,
            repository(self.root),
            endpoint,
            since_last=since_last,
            content=content,
            dry_run=dry_run,
            configured=otel.get("endpoint") if isinstance(otel, dict) else None,
            environ=self.env,
        )

    def export_path(self, given: str | Path, *, anywhere_outside: bool = False) -> Path:
        """Where an export named `given` goes: a path relative to the export folder
        (`paths.training_data`, default docs/training-data), refused in one line when it leads
        out of it, through a symlink, or is absolute. With `anywhere_outside` (a person's own
        `lore export -o`), an absolute path outside the repository is theirs to choose; inside
        the repository it must still be in the export folder."""
        folder = self.layout.training_data
        text = str(given)
        if anywhere_outside and os.path.isabs(text):
            if os.path.islink(text):
                raise UsageError("{}: is a symlink; lorebook does not write through symlinks", text)
            if self.layout.leaves_repository(text):
                return Path(text)
            real = os.path.join(os.path.realpath(os.path.dirname(text)), os.path.basename(text))
            text = os.path.relpath(real, os.path.realpath(folder))
        return self.layout.inside(folder, text, "export path")

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
        return self.action_log.stream(
            newest_first=newest_first,
            on_problem=on_problem,
            include_archive=include_archive,
            **filters,
        )

    # -- the rest of the API: what the CLI (and the MCP server, hooks, TUI) would otherwise
    #    reach below the facade for ------------------------------------------------------
    _progress: Progress | None = None  # where long work reports itself (`on_progress`)
    _catalog_building: threading.Event | None = None  # see prepare_in_background

    created: tuple[str, ...] = ()
    """The paths `Lorebook.init` created (relative to the root; empty when nothing was missing)."""

    @property
    def catalog_hint(self) -> str | None:
        """Why a query scanned the shards when no catalog exists yet for a long log (say it
        once); None when the catalog answered or was never asked."""
        reason = self.action_log.scan_note()
        return reason if reason and reason.startswith("no catalog yet") else None

    def sync_catalog(self, *, rebuild: bool = False) -> CatalogStatus:
        """Bring the action catalog up to date, stat-checking every shard (or rebuild it from
        scratch); returns what it holds and what the sync did (`lore catalog --json`)."""
        from .log.report_rollup import roll_up_days

        result = self.catalog.sync(rebuild=rebuild)
        roll_up_days(self.action_log, utcnow())  # the day roll-ups reports add up
        result["path"] = self.layout.rel(self.catalog.catalog.path)
        return result

    def rebuild_catalog(self) -> CatalogStatus:
        """Rebuild the action catalog from the shards (it is a cache: nothing is lost)."""
        return self.sync_catalog(rebuild=True)

    def close(self) -> None:
        """Release what reads keep open between calls (the action catalog's connection). The
        book stays usable: the next read opens it again. Also `with Lorebook.open() as book:`."""
        self.action_log.close()

    def __enter__(self) -> Lorebook:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def mirror_postgres(
        self,
        dsn: str | None = None,
        *,
        dry_run: bool = False,
        batch_lines: int | None = None,
        on_warning: Callable[[Notice], None] | None = None,
    ) -> MirrorResult:
        """Mirror this repository's actions, sessions, learnings and applications into
        PostgreSQL (seed 000's schema plus `repository`; docs/org-scale.md): only the shards'
        lines past the watermark kept in the database, each batch and its watermark in one
        transaction. `dsn`: else LORE_PG_DSN, else `mirror.postgres_dsn`; never printed with
        its password. `dry_run`: count what would be sent, write nothing. A password written in
        the committed config is warned about (`on_warning`, at once, and `warnings`)."""
        from .mirror.dsn import committed_password, resolve_dsn
        from .mirror.learnings import digest
        from .mirror.postgres import BATCH_LINES, Mirror

        warnings = committed_password(
            self.config.mirror.postgres_dsn, self.layout.rel(self.layout.config_file)
        )
        for warning in warnings:
            if on_warning is not None:
                on_warning(warning)
        target = resolve_dsn(dsn, self.env, self.config.mirror.postgres_dsn)
        repository = self.appender.repo_key()
        if repository is None:
            raise LoreError(
                "{} is not in a git repository with a commit: a mirror needs the repository's"
                " identity (its origin remote or first commit)",
                str(self.root),
            )
        result = Mirror(
            dsn=target,
            repository=repository,
            name=self.default_project(),
            root=self.root,
            actionlog=self.layout.actionlog,
            sanitizer=self.sanitizer,
            sessions=lambda: self.sessions(),
            learnings=lambda: map(self.learnings.store.sanitized, self.learnings.all()),
            batch_lines=batch_lines or BATCH_LINES,
            vouch=self.catalog.clean_shards,
            remember=self.catalog.remember_clean,
            learnings_digest=lambda: digest(self.layout, self.sanitizer),
        ).run(dry_run=dry_run)
        result["warnings"] = [str(w) for w in warnings]
        return result

    def _retention_days(self, older_than: str | int | None, key: str) -> int:
        """`older_than` as days (`90d`, `12w` or a number of days), else the configured
        `retention.<key>` (the defaults: 90 days live, 365 archived)."""
        from .timeutil import check_days, parse_age

        if older_than is None:
            days: int = getattr(self.config.retention, key)
            return days
        if isinstance(older_than, str):
            return parse_age(older_than, "--older-than", units="dw").days
        return check_days(older_than, "--older-than")

    def archive(
        self, older_than: str | int | None = None, *, dry_run: bool = False
    ) -> RetentionResult:
        """Move the shards of days older than `older_than` (default `retention.archive_days`)
        to actionlog/archive/YYYY/MM/ as gzip, each verified before its shard goes."""
        from .log.retention import archive_shards

        days = self._retention_days(older_than, "archive_days")
        return archive_shards(
            self.layout.actionlog, self.root, days=days, now=utcnow(), dry_run=dry_run
        )

    def prune(
        self, older_than: str | int | None = None, *, dry_run: bool = False
    ) -> RetentionResult:
        """Delete archived shards of days older than `older_than` (default
        `retention.prune_days`); live shards are never touched."""
        from .log.retention import prune_archives

        days = self._retention_days(older_than, "prune_days")
        return prune_archives(
            self.layout.actionlog, self.root, days=days, now=utcnow(), dry_run=dry_run
        )

    def write_document(self, path: str | Path, text: str) -> dict[str, Any]:
        """Write a document made from the store (`lore report --html`) to `path`, a file the
        caller names: redacted again, atomically (readers see the old or the new file), never
        through a symlink. A bad path is a one-line LoreError naming it; nothing is written."""
        from .store import atomic_write, refuse_symlinks, refused_symlink

        target = Path(os.path.abspath(path))
        if target.is_symlink():
            raise refused_symlink(target)
        if target.is_dir():
            raise LoreError("{}: is a directory; give the path of a file to write", target)
        refuse_symlinks(target)
        data, redactions = self.sanitizer.redact_text(text)
        atomic_write(target, data.encode("utf-8"))
        return {"path": str(target), "bytes": len(data.encode("utf-8")), "redactions": redactions}

    def write_report(
        self,
        kind: str = "daily",
        *,
        when: str | None = None,
        project: str | None = None,
        agent: str | None = None,
    ) -> dict[str, Any]:
        """Write docs/reports/daily/<date>.md (`when` = YYYY-MM-DD, default yesterday) or
        weekly/<iso-week>.md (`when` = 2026-W47, default the last complete week); idempotent."""
        from .log.report_file import write_period_report

        if kind not in ("daily", "weekly"):
            raise UsageError("report kind {!r} is not one of: daily, weekly", kind)
        now = utcnow()
        return write_period_report(
            self.action_log, kind, when=when, now=now, project=project, agent=agent,
            # the success metrics are the whole store's: not in a report narrowed by a filter
            kpis=(lambda window: self._kpis(window, now))
            if kind == "weekly" and not project and not agent
            else None,
        )  # fmt: skip

    def evaluate(
        self,
        queries: str | Path | None = None,
        *,
        modes: Sequence[str] = (),
        on_problem: OnProblem = ignore,
    ) -> EvalReport:
        """Search quality on golden queries (default learnings/eval.yaml): recall@1, recall@5
        and MRR@10 per mode (default all three) next to a word-overlap baseline."""
        from .index.evaluate import MODES, evaluate_index, load_golden

        unknown = [m for m in modes if m not in MODES]
        if unknown:
            raise UsageError("mode {!r} is not one of: " + ", ".join(MODES), unknown[0])
        golden = load_golden(Path(queries) if queries else self.layout.learnings / "eval.yaml")
        return evaluate_index(self.index, golden, modes=modes or MODES, on_problem=on_problem)

    def watch(
        self,
        stop: threading.Event,
        *,
        debounce: float | None = None,
        echo: Callable[[str], None] = print,
        warn: Callable[[str], None] = print,
        ready: Callable[[str], None] | None = None,
    ) -> None:
        """Keep the search index fresh until `stop` is set: index learnings and drafts as they
        are saved, in batches after `debounce` seconds of quiet (default
        `watch.debounce_seconds`, 2); `ready` gets a line saying what is watched."""
        from .index.watch import watch_learnings

        if debounce is None:
            debounce = self.config.watch.debounce_seconds
        watch_learnings(
            self.index, self.layout, stop, debounce=debounce, echo=echo, warn=warn, ready=ready
        )


__all__ = ["LoreError", "Lorebook", "Session"]
