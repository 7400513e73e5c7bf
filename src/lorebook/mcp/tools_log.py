"""The action-log tools: each a thin call to the `Lorebook` API, shaped for `schemas`.

Every method's docstring is the tool's description, sent to the client on every turn: one
short sentence. Argument checks beyond the types (an unknown outcome, a bad date) are the
library's, raised as `LoreError` with a message the client can act on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import Field

from lorebook import Lorebook, LoreError, redact_message

from .schemas import (
    ActionList,
    ActivityReport,
    ExportManifest,
    LoggedAction,
    RecentActions,
    Subagent,
    SubagentStatus,
)

Outcome = Literal["success", "failure", "blocked", "in_progress"]
Limit = Annotated[int, Field(ge=1, le=500)]
When = Annotated[str, Field(description="7d, 12h, YYYY-MM-DD or a UTC timestamp")]
SPAWN_SCAN = 2000  # newest spawn actions looked at for subagent status


def partial_window(book: Lorebook) -> tuple[str | None, str | None]:
    """`(since, why)` for a question about the whole log (`Lorebook.partial_window`)."""
    return book.partial_window()


class LogTools:
    """Tools over the action log; `current` is the session this server logs into."""

    def __init__(self, book: Callable[[], Lorebook], current: Callable[[], str | None]) -> None:
        self.book = book
        self.current = current

    def log_action(
        self,
        action_type: Annotated[str, Field(description="e.g. commit, deploy, plan, spawn")],
        context: dict[str, Any] | None = None,
        outcome: Outcome = "success",
        error: str | None = None,
        epic: str | None = None,
        issue: str | None = None,
        parent: str | None = None,
        duration_s: Annotated[float, Field(json_schema_extra={"minimum": 0})] | None = None,
    ) -> LoggedAction:
        """Log an action (secrets are redacted)."""
        record = self.book().log(  # too deep or out of range: clipped, named in meta.clipped
            action_type,
            clip=True,
            session=self.current(),
            context=context,
            outcome=outcome,
            error=error,
            epic=epic,
            issue=issue,
            parent=parent,
            duration_s=duration_s,
        )
        return LoggedAction(
            id=record["id"], session=record["session"], type=record["type"], outcome=outcome
        )

    def get_recent_actions(
        self,
        session: str | None = None,
        project: str | None = None,
        limit: Limit = 20,
    ) -> RecentActions:
        """Resume brief: the previous session's actions, open work and next steps."""
        book = self.book()
        if session is not None:
            brief = book.resume(session=session, limit=limit)
        else:  # as `lore resume` chooses (from the catalog), passing over this server's own
            names = book.project_names(project)  # the repository's, the folder's
            try:
                own = self.current()
                brief = book.resume(project=names, limit=limit, exclude=(own,) if own else ())
            except LoreError as exc:
                text = redact_message(exc, book.sanitizer)
                return RecentActions(found=False, message=f"no earlier session: {text}")
        from lorebook.render.actions import resume_brief

        return RecentActions(
            found=True,
            session=dict(brief["session"]),
            last_prompt=brief["last_prompt"],
            epic=brief["epic"],
            work_in_progress=brief["work_in_progress"],
            last_failure=brief["last_failure"],
            last_failed_command=brief["last_failed_command"],
            tasks=brief["tasks"],
            suggested_next_steps=brief["suggested_next_steps"],
            open_actions=[dict(x) for x in brief["open_actions"]],
            failed_validations=[dict(x) for x in brief["failed_validations"]],
            files=dict(brief["files"]),
            commands=[dict(x) for x in brief["commands"]],
            recent_actions=[dict(x) for x in brief["recent_actions"]],
            git=brief["git"],
            brief=resume_brief(brief),
        )

    def get_subagent_status(
        self,
        agent_id: str | None = None,
        session: str | None = None,
        limit: Limit = 20,
    ) -> SubagentStatus:
        """Subagents from spawn actions: running, success or failure."""
        book = self.book()
        since, partial = partial_window(book)
        spawns = book.actions(type="spawn", session=session, since=since, limit=SPAWN_SCAN)
        found: dict[str, Subagent] = {}
        for record in spawns:  # newest first: the first record of an agent is its state
            context = record.get("context") or {}
            who = context.get("agent_id")
            if not isinstance(who, str) or (agent_id is not None and who != agent_id):
                continue
            seen = found.get(who)
            if seen is not None:
                seen.started = record["ts"]  # older: the spawn itself
                seen.subagent_type = seen.subagent_type or _text(context.get("subagent_type"))
                seen.task = seen.task or _task(context)
                continue
            outcome = record["outcome"]
            found[who] = Subagent(
                agent_id=who,
                status="running" if outcome == "in_progress" else outcome,
                subagent_type=_text(context.get("subagent_type")),
                task=_task(context),
                started=record["ts"],
                updated=record["ts"],
                session=record["session"],
                epic=record.get("epic"),
                error=record.get("error"),
                duration_s=record.get("duration_s"),
            )
        if agent_id is not None and not found:
            if partial:  # lorebook's own note on what was read: part of the template's values
                raise LoreError(
                    "agent_id {!r}: no spawn action names this subagent ({})", agent_id, partial
                )
            raise LoreError("agent_id {!r}: no spawn action names this subagent", agent_id)
        agents = list(found.values())[:limit]
        return SubagentStatus(count=len(agents), subagents=agents, partial=partial)

    def search_actions(
        self,
        type: str | None = None,
        outcome: Outcome | None = None,
        project: str | None = None,
        agent: str | None = None,
        epic: str | None = None,
        issue: str | None = None,
        session: str | None = None,
        since: When | None = None,
        until: When | None = None,
        limit: Limit = 50,
    ) -> ActionList:
        """Actions matching every filter, newest first."""
        found = self.book().actions(
            limit=limit,
            type=type,
            outcome=outcome,
            project=project,
            agent=agent,
            epic=epic,
            issue=issue,
            session=session,
            since=since,
            until=until,
        )
        return ActionList(count=len(found), actions=found)

    def get_activity_report(
        self,
        days: Annotated[int, Field(ge=1, le=3660)] = 7,
        since: When | None = None,
        until: When | None = None,
        group_by: Literal["day", "type", "outcome"] = "day",
        project: str | None = None,
        agent: str | None = None,
    ) -> ActivityReport:
        """Activity report: totals, success rate, breakdown, recent failures."""
        report = self.book().report(  # `days` is the default window: `since` replaces it
            days=None if since is not None else days,
            since=since,
            until=until,
            group_by=group_by,
            project=project,
            agent=agent,
        )
        return ActivityReport(
            window=dict(report["window"]),
            summary=dict(report["summary"]),
            group_by=report["group_by"],
            breakdown=[dict(row) for row in report["breakdown"]],
            recent_failures=report["recent_failures"],
            deployments=dict(report["deployments"]),
            overhead=report["overhead"],
        )

    def export_training_data(
        self,
        format: Literal["jsonl", "json", "csv"] = "jsonl",
        since: When | None = None,
        until: When | None = None,
        project: str | None = None,
        include_context: bool = True,
        path: Annotated[str, Field(description="relative to the export folder")] | None = None,
    ) -> ExportManifest:
        """Export actions as training records to a file; returns its manifest."""
        book = self.book()
        target = book.export_path(path) if path else None
        manifest = book.export_training_data(
            format,
            target,
            since=since,
            until=until,
            project=project,
            with_context=include_context,
        )
        return ExportManifest(
            path=str(manifest["path"]),
            manifest=str(manifest["manifest"]),
            format=manifest["format"],
            record_count=manifest["record_count"],
            bytes=manifest["bytes"],
            redactions=manifest["redactions"],
        )


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _task(context: dict[str, Any]) -> str | None:
    return _text(context.get("task_description")) or _text(context.get("task"))
