"""`ActionLog`: the action log of one store — append, read, the catalog, sessions.

The collaborator that the modules needing the log receive (reports, exports, learnings review,
the knowledge subscribers) instead of the whole `Lorebook`: what they need of the log and nothing
else.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from functools import cached_property
from pathlib import Path

from ..errors import UsageError
from ..problems import OnProblem, ignore
from ..timeutil import as_timestamp
from .append import Appender, Listener
from .reader import iter_records
from .sessions import STATUSES, SessionInfo, redact_summaries, summarize
from .writer import redacted

TYPE_CHECKING = False  # typing costs milliseconds on cold paths; mypy still sees it
if TYPE_CHECKING:
    from typing import Any, TypeVar

    from ..config import Config
    from ..events import EventBus
    from ..paths import Layout
    from ..progress import Progress
    from ..redact.sanitize import Sanitizer
    from .catalog_query import CatalogView
    from .query import ActionFilter

    T = TypeVar("T")


class ActionLog:
    """Writes with one `Appender`'s own methods (same checks, writer and event bus); reads
    through the catalog when it is usable, else from the shards (same results), redacted."""

    def __init__(self, appender: Appender) -> None:
        self.appender = appender
        # writing: the appender's methods themselves, not a layer over them; every check of a
        # record is made there once, whichever door it came through
        self.start = appender.start
        self.end = appender.end
        self.log = appender.log
        self.progress: Progress | None = None
        # resume's lines found clean under this appender's sanitizer (one sanitizer per
        # appender: the memo needs no key); see log.resume_state
        self.clean_lines: set[bytes] = set()

    # -- what the log is made of -------------------------------------------------------------
    @property
    def root(self) -> Path:
        return self.appender.root

    @property
    def config(self) -> Config:
        return self.appender.config

    @property
    def layout(self) -> Layout:
        return self.appender.layout

    @property
    def sanitizer(self) -> Sanitizer:
        return self.appender.sanitizer

    @property
    def events(self) -> EventBus:
        return self.appender.events

    def on(self, event: str, listener: Listener) -> None:
        """Subscribe to `action` events (every stored record, after it is stored)."""
        self.events.on(event, listener)

    # -- reading -----------------------------------------------------------------------------
    @cached_property
    def catalog(self) -> CatalogView:
        """The action catalog under `.lore/cache/` (synced on use; see lorebook.log.catalog)."""
        from .catalog_query import open_view

        view = open_view(self.layout, self.config.catalog, self.sanitizer)
        view.progress = self.progress
        return view

    def close(self) -> None:
        """Close the catalog connection kept between reads (reopened on the next read)."""
        view = self.__dict__.get("catalog")
        if view is not None:
            view.catalog.close()

    def on_progress(self, callback: Progress | None) -> None:
        """Report the catalog's builds and full checks to `callback` (None: stop)."""
        self.progress = callback
        if "catalog" in self.__dict__:
            self.catalog.progress = callback

    def scan_note(self) -> str | None:
        """Why reads scanned the shards, if the catalog was used and could not serve them."""
        view = self.__dict__.get("catalog")  # only when a read used the catalog at all
        reason = getattr(view, "unavailable", None)
        return reason if isinstance(reason, str) else None

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
        from .query import ActionFilter  # dataclasses: not on the cold paths that never filter

        query = query or ActionFilter()
        found = self.catalog.iter_actions(
            query, newest_first=newest_first, include_archive=include_archive, on_problem=on_problem
        )
        if found is not None:
            return found  # redacted there, skipping shards known to hold nothing to redact
        records = iter_records(
            self.layout.actionlog,
            base=self.root,
            since=query.since,
            until=query.until,
            newest_first=newest_first,
            sessions=[query.session] if query.session else None,
            on_problem=on_problem,
            include_archive=include_archive,
            # lines of other types unparsed, unless their problems are wanted
            action_type=query.type if on_problem is ignore else None,
        )
        return redacted(self.sanitizer, (r for r in records if query.matches(r)))

    def resolve_session(self, session: str, now: datetime | None = None) -> str:
        """The session id `session` names: itself, or the one id it is a prefix of."""
        from ..timeutil import utcnow
        from .sessions import resolve_session

        return resolve_session(self.layout.actionlog, session, now or utcnow())

    def stream(
        self,
        *,
        newest_first: bool = True,
        on_problem: OnProblem = ignore,
        include_archive: bool = False,
        **filters: Any,
    ) -> Iterator[dict[str, Any]]:
        """Matching actions as a lazy stream (the filters of `actions`, times in any form
        `--since` takes): a viewer pulls rows as it shows them, never holding them all."""
        return self.iter_actions(
            self._filter(filters),
            newest_first=newest_first,
            on_problem=on_problem,
            include_archive=include_archive,
        )

    def _filter(self, filters: dict[str, Any]) -> ActionFilter:
        from .query import ActionFilter

        for key in ("since", "until"):
            filters[key] = as_timestamp(filters.get(key), key)
        if filters.get("session"):
            filters["session"] = self.resolve_session(filters["session"])
        return ActionFilter(**filters)

    def actions(
        self,
        *,
        limit: int | None = 50,
        on_problem: OnProblem = ignore,
        include_archive: bool = False,
        **filters: Any,
    ) -> list[dict[str, Any]]:
        """Matching actions, newest first (see `Lorebook.actions`)."""
        _check_limit(limit)
        found = self.stream(on_problem=on_problem, include_archive=include_archive, **filters)
        return _first(found, limit)

    def actions_json(
        self,
        *,
        limit: int | None = 50,
        on_problem: OnProblem = ignore,
        include_archive: bool = False,
        **filters: Any,
    ) -> str:
        """`actions(...)` as compact JSON, the text `lore actions --json` prints on a pipe, byte
        for byte: lines of shards the catalog verified clean and canonical are copied as they
        are stored, without being parsed and encoded again (see log.catalog_read)."""
        from .catalog_read import compact

        _check_limit(limit)
        query = self._filter(filters)
        lines = self.catalog.iter_lines(
            query, include_archive=include_archive, on_problem=on_problem
        )
        if lines is None:  # no catalog: the records of a scan, encoded
            found = self.iter_actions(query, on_problem=on_problem, include_archive=include_archive)
            return compact(_first(found, limit))
        return (b"[" + b",".join(_first(lines, limit)) + b"]").decode("utf-8", "surrogatepass")

    def sessions(
        self,
        *,
        now: datetime,
        project: str | None = None,
        agent: str | None = None,
        status: str | None = None,
        since: str | datetime | None = None,
        until: str | datetime | None = None,
        text: str | None = None,
        limit: int | None = None,
        on_problem: OnProblem = ignore,
    ) -> list[SessionInfo]:
        """Every session with its status, most recently active first (the first `limit`);
        see `Lorebook.sessions` for the filters."""
        if status is not None and status not in STATUSES:
            raise UsageError("status {!r} is not one of: " + ", ".join(STATUSES), status)
        if limit is not None and limit < 1:
            raise UsageError("limit must be a positive number, not {}", limit)
        first, last = as_timestamp(since, "since"), as_timestamp(until, "until")
        needle = text.casefold() if text else None
        idle = self.config.sessions.idle_minutes
        infos = self.catalog.sessions(
            project=project,
            agent=agent,
            now=now,
            idle=idle,
            # the status, times and text are matched after the query
            limit=limit if status is None and first is last is needle is None else None,
            on_problem=on_problem,
        )
        if infos is None:  # a scan: only the days from `since` on are opened
            records = iter_records(
                self.layout.actionlog, base=self.root, since=first, on_problem=on_problem
            )
            infos = redact_summaries(self.sanitizer, summarize(records, now, idle))
        found = [
            s
            for s in infos
            if (project is None or s.project == project)
            and (agent is None or s.agent == agent)
            and (status is None or s.status == status)
            and (first is None or (s.last_activity or "") >= first)
            and (last is None or (s.started or "") < last)
            and (needle is None or needle in _haystack(s))
        ]
        return found if limit is None else found[:limit]


def _haystack(info: SessionInfo) -> str:
    """What a session's free-text filter looks in: its id, names and how it ended."""
    fields = (info.id, info.project, info.agent, info.session_type, info.status, info.end_reason)
    return " ".join(str(f) for f in fields if f).casefold()


def _check_limit(limit: int | None) -> None:
    if limit is not None and limit < 1:
        raise UsageError("limit must be a positive number, not {}", limit)


def _first(found: Iterator[T], limit: int | None) -> list[T]:
    """The first `limit` items (all for None); the stream is closed at once, releasing the
    catalog's connection and files now, not at collection."""
    out = []
    for item in found:
        out.append(item)
        if limit is not None and len(out) >= limit:
            break
    close = getattr(found, "close", None)
    if close is not None:
        close()
    return out


__all__ = ["ActionLog"]
