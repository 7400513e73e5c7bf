"""`Session`: a handle for logging into one session (what `Lorebook.start_session` returns).

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

TYPE_CHECKING = False  # typing costs milliseconds on cold paths; mypy still sees it
if TYPE_CHECKING:
    from typing import Any

    from .actionlog import ActionLog


class Session:
    """A handle for logging into one session."""

    def __init__(self, action_log: ActionLog, session_id: str, agent: str, project: str) -> None:
        self.action_log = action_log
        self.id = session_id
        self.agent = agent
        self.project = project
        self.ended = False

    def log(self, action_type: str, **fields: Any) -> dict[str, Any]:
        """Append an action to this session."""
        return self.action_log.log(
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
        self.action_log.end(
            self.id, reason=reason, agent=self.agent, project=self.project, meta=meta
        )
        self.ended = True

    def __repr__(self) -> str:
        return f"Session({self.id!r}, agent={self.agent!r}, project={self.project!r})"
