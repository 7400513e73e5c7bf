"""The `--json` outputs about the action log: records, sessions, resume, reports, maintenance.

`dict[str, Any]` marks free-form data (an action's `context` and `meta`, a filter echo); every
other object lists its keys, and the schemas made from these types refuse keys not listed.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired

from typing_extensions import TypedDict

Outcome = Literal["success", "failure", "blocked", "in_progress"]
SessionStatus = Literal["active", "ended", "disconnected"]


class ActionRecord(TypedDict):
    """One action line as stored (schema v1, docs/schema/action-v1.schema.json): lines appended
    by hand may leave out the optional keys, and may carry keys of their own."""

    v: int
    kind: str
    id: str
    ts: str
    session: str
    type: str
    outcome: Outcome
    agent: NotRequired[str | None]
    project: NotRequired[str | None]
    category: NotRequired[str | None]
    context: NotRequired[dict[str, Any]]
    error: NotRequired[str | None]
    duration_s: NotRequired[float | None]
    parent: NotRequired[str | None]
    epic: NotRequired[str | None]
    issue: NotRequired[str | None]
    meta: NotRequired[dict[str, Any]]


class WrittenAction(TypedDict):
    """An action as lorebook writes it (`lore log --json`, `apply`, `pattern record`)."""

    v: int
    kind: Literal["action"]
    id: str
    ts: str
    session: str
    agent: str | None
    project: str | None
    type: str
    category: str | None
    outcome: Outcome
    context: dict[str, Any]
    error: str | None
    duration_s: float | None
    parent: str | None
    epic: str | None
    issue: str | None
    meta: dict[str, Any]


class SessionEndRecord(TypedDict):
    """The end event `lore session end --json` wrote."""

    v: int
    kind: Literal["session"]
    event: Literal["end"]
    id: str
    ts: str
    session: str
    agent: str | None
    project: str | None
    reason: str | None
    meta: dict[str, Any]


class SessionStarted(TypedDict):
    session: str
    agent: str | None
    project: str | None
    session_type: str


class InitResult(TypedDict):
    root: str
    created: list[str]


class SessionRow(TypedDict):
    """One session of `lore sessions --json` (`SessionInfo.to_dict`)."""

    id: str
    agent: str | None
    project: str | None
    session_type: str | None
    started: str | None
    last_activity: str | None
    ended: str | None
    end_reason: str | None
    status: SessionStatus
    action_count: int


class ResumeSession(TypedDict):
    id: str
    agent: str | None
    project: str | None
    started: str | None
    last_activity: str | None
    ended: str | None
    end_reason: str | None
    status: SessionStatus
    action_count: int


class FilesTouched(TypedDict):
    edited: list[str]
    read: list[str]
    edited_count: int
    read_count: int


class CommandRun(TypedDict):
    command: str
    outcome: str | None
    runs: int
    failures: int
    ts: str | None


class LastCommit(TypedDict):
    hash: str
    short: str
    subject: str
    author: str
    date: str


class RelatedLearning(TypedDict):
    id: str
    title: str
    category: str | None
    severity: str | None
    similarity: float


class History(TypedDict):
    skipped_bytes: int
    note: str


class ResumeState(TypedDict):
    """`lore resume --json`: the previous session's state and what to do next."""

    session: ResumeSession
    last_prompt: str | None
    last_action: ActionRecord | None
    recent_actions: list[ActionRecord]
    epic: str | None
    issue: str | None
    branch: str | None
    work_in_progress: str | None
    last_failure: dict[str, Any] | None
    last_failed_command: dict[str, Any] | None
    tasks: dict[str, Any] | None
    files: FilesTouched
    commands: list[CommandRun]
    open_actions: list[ActionRecord]
    failed_validations: list[ActionRecord]
    suggested_next_steps: list[str]
    git: dict[str, Any] | None
    history: History | None
    learnings: list[RelatedLearning]


class Problem(TypedDict):
    path: str
    line: int
    reason: str


class CheckReportData(TypedDict):
    ok: bool
    shards: int
    records: int
    learnings: int
    expertise: int
    repeated: int
    fixed: int
    findings: list[Problem]


class SyncFile(TypedDict):
    path: str
    change: str
    kind: str


class SyncResult(TypedDict):
    committed: str | None
    files: list[SyncFile]
    counts: dict[str, int]
    subject: str | None
    upstream: str | None
    remote: bool
    pulled: bool
    pushed: bool
    repaired: NotRequired[list[str]]


class CatalogSync(TypedDict):
    rebuilt: bool
    reason: str
    shards_checked: int
    shards_read: int
    shards_reindexed: int
    shards_removed: int
    bytes_read: int
    records_added: int
    seconds: float


class CatalogCounts(TypedDict):
    """What the action catalog holds, and where the file is."""

    path: str
    schema: str
    records: int
    actions: int
    archived_records: int
    shards: int
    archived_shards: int
    sessions: int
    skipped_lines: int
    bytes: int


class CatalogStatus(CatalogCounts):
    """`lore catalog --json`: what the catalog holds and what the sync did."""

    sync: CatalogSync


class Window(TypedDict):
    since: str
    until: str


class ReportFilters(TypedDict):
    project: str | None
    agent: str | None
    include_archive: bool
    include_internal: bool


class OutcomeCounts(TypedDict):
    success: int
    failure: int
    blocked: int
    in_progress: int


class TypeCount(TypedDict):
    type: str
    count: int


class DayCount(TypedDict):
    day: str
    count: int


class DaySeries(TypedDict):
    """One day of a report: its actions and, of them, the failures."""

    day: str
    count: int
    failure: int


class InternalLeftOut(TypedDict):
    """lorebook's own bookkeeping actions a report left out (`--include-internal` keeps them)."""

    count: int
    by_type: list[TypeCount]
    why: str


class ProjectCount(TypedDict):
    project: str
    count: int


class ReportSummary(TypedDict):
    total_actions: int
    success_rate: float | None
    outcomes: OutcomeCounts
    most_common_action: TypeCount | None
    busiest_day: DayCount | None
    active_projects: list[str]
    agents: list[str]
    sessions: int


class BreakdownRow(TypedDict):
    key: str
    total: int
    success: int
    failure: int
    blocked: int
    in_progress: int
    success_rate: float | None


class DurationRow(TypedDict):
    type: str
    count: int
    avg_seconds: float
    max_seconds: float


class Deployments(TypedDict):
    total: int
    by_outcome: OutcomeCounts
    recent: list[dict[str, Any]]


class ReportSections(TypedDict):
    """The aggregates of a report (one SQL pass on the catalog, or a scan of the shards)."""

    summary: ReportSummary
    group_by: str
    breakdown: list[BreakdownRow]
    by_type: list[TypeCount]
    by_project: list[ProjectCount]
    by_day: list[DaySeries]
    failures_by_type: list[TypeCount]
    by_hour: list[int]
    average_duration: list[DurationRow]
    overhead: dict[str, Any] | None


class ReportBody(ReportSections):
    """The aggregates and the newest deployments and failures."""

    internal_left_out: InternalLeftOut | None
    deployments: Deployments
    recent_failures: list[dict[str, Any]]


class ActivityReport(ReportBody):
    """`lore report --json`: the window, the filters and the report's body."""

    window: Window
    filters: ReportFilters


class ReportWritten(TypedDict):
    """`lore report daily|weekly --json`: the file written."""

    path: str
    kind: Literal["daily", "weekly"]
    label: str
    window: Window
    filters: dict[str, Any]
    total_actions: int
    unchanged: bool
    redactions: int


class Kpi(TypedDict):
    key: str
    name: str
    definition: str
    numerator: float
    denominator: float
    value: float | None
    unit: str
    target: str
    met: bool | None


class KpisReport(TypedDict):
    window: Window
    kpis: list[Kpi]


class ExportFilters(TypedDict):
    since: str | None
    until: str | None
    project: str | None
    type: str | None
    outcome: str | None
    agent: str | None
    include_context: bool
    include_archive: bool


class Redactions(TypedDict):
    values: int
    records: int


class ExportResult(TypedDict):
    """`lore export --json`: the file written and its manifest."""

    file: str
    format: str
    record_count: int
    record_shape: str
    filters: ExportFilters
    source_commit: str | None
    redactions: Redactions
    bytes: int
    path: str
    manifest: str


class RetentionData(TypedDict):
    """`lore archive|prune --json`."""

    action: Literal["archive", "prune"]
    cutoff: str
    dry_run: bool
    done: list[dict[str, Any]]
    failed: list[dict[str, Any]]


HookEvent = TypedDict("HookEvent", {"event": str, "command": str, "async": bool})


class SettingsFile(TypedDict):
    path: str
    events: list[HookEvent]
    exists: NotRequired[bool]
    disabled: NotRequired[bool]
    error: NotRequired[str]


class McpRegistration(TypedDict):
    path: str
    registered: bool
    error: NotRequired[str]


class Launcher(TypedDict):
    """What the project's launcher `.lore/bin/lore` runs on this machine (`runs`: None when
    neither PATH nor the record reaches a lore; `via`: "PATH" or "recorded")."""

    path: str
    present: bool
    runs: str | None
    via: str | None
    recorded: NotRequired[str]


class WiredClient(TypedDict):
    """One agent in one scope: its own events wired to `lore hook`, whether lorebook's MCP
    server is registered, the files that say so, and one line per problem found."""

    client: str
    scope: Literal["project", "user"]
    hooks: list[str]
    mcp: bool
    files: list[str]
    problems: list[str]


class HooksStatus(TypedDict):
    """`lore hooks status --json` (`settings` and `mcp`: Claude Code's, as before `clients`)."""

    root: str
    store: bool
    clients: list[WiredClient]
    settings: list[SettingsFile]
    mcp: McpRegistration
    hook_errors: int
    last_error: str | None
    launcher: Launcher


class ImportReport(TypedDict):
    """`lore import claude|codex --json`: sessions of this repository in the client's files
    (`sessions_seen`), those that gained records, those with nothing new or older than
    `--since`, the records written (or, with `dry_run`, that would be), the events the log
    already held, and one line per file or line that could not be read."""

    client: str
    dry_run: bool
    sessions_seen: int
    sessions_imported: int
    sessions_skipped: int
    actions_written: int
    duplicates_skipped: int
    problems: list[str]
