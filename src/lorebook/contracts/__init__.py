"""The `--json` contract: one typed structure per output, and the JSON Schema files made from them.

Each `lore … --json` output is described here as a TypedDict (the library returns plain dicts);
the functions that build them are annotated with these types, so mypy checks the contract, and
`python -m lorebook.contracts.schema` writes docs/schema/<name>.schema.json from them (a test
runs every command on a real store and validates its output against the committed file).

Nothing on a cold path imports this package at run time: the commands agents call on every action
name these types under `TYPE_CHECKING` only (it loads `typing` and `typing_extensions`).
"""

from __future__ import annotations

from typing import Any

from .expertise import (
    Classification,
    ExpertiseChange,
    ExpertiseHistoryEntry,
    ExpertisePrompt,
    ExpertiseRow,
    ExpertiseUpdate,
)
from .knowledge import (
    DemoSummary,
    DraftOutcome,
    EvalReport,
    IndexReport,
    LearningData,
    LearningHistoryEntry,
    LearningStats,
    PreflightBrief,
    Promoted,
    RcaAdded,
    Rejected,
    SearchOutput,
    SearchResultData,
    StaleReportData,
)
from .mirror import MirrorResult
from .otel import OtelExport
from .records import (
    ActionRecord,
    ActivityReport,
    CatalogStatus,
    CheckReportData,
    ExportResult,
    HooksStatus,
    ImportReport,
    InitResult,
    KpisReport,
    ReportWritten,
    ResumeState,
    RetentionData,
    SessionEndRecord,
    SessionRow,
    SessionStarted,
    SyncResult,
    WrittenAction,
)

# schema name -> (the output's type, the commands that print it)
OUTPUTS: dict[str, tuple[Any, tuple[str, ...]]] = {
    "init": (InitResult, ("init",)),
    "action": (WrittenAction, ("log", "apply", "pattern record")),
    "actions": (list[ActionRecord], ("actions",)),
    "session-start": (SessionStarted, ("session start",)),
    "session-end": (SessionEndRecord, ("session end",)),
    "sessions": (list[SessionRow], ("sessions",)),
    "resume": (ResumeState, ("resume",)),
    "check": (CheckReportData, ("check",)),
    "sync": (SyncResult, ("sync",)),
    "demo": (DemoSummary, ("demo",)),
    "catalog": (CatalogStatus, ("catalog",)),
    "report": (ActivityReport, ("report",)),
    "report-written": (ReportWritten, ("report daily", "report weekly")),
    "kpis": (KpisReport, ("report kpis",)),
    "export": (ExportResult, ("export",)),
    "retention": (RetentionData, ("archive", "prune")),
    "index": (IndexReport, ("index",)),
    "search": (SearchOutput, ("search",)),
    "preflight": (PreflightBrief, ("preflight",)),
    "eval": (EvalReport, ("eval",)),
    "hooks-status": (HooksStatus, ("hooks status",)),
    "import": (ImportReport, ("import CLIENT",)),
    "learning": (LearningData, ("learn new", "show", "pattern new")),
    "learnings": (list[LearningData], ("learnings", "drafts")),
    "stale": (list[StaleReportData], ("stale",)),
    "history": (list[LearningHistoryEntry], ("history",)),
    "promote": (Promoted, ("promote",)),
    "reject": (Rejected, ("reject",)),
    "draft": (DraftOutcome, ("draft from-epic", "draft from-issue")),
    "rca": (RcaAdded, ("rca add",)),
    "drafts-extracted": (list[DraftOutcome], ("extract retro",)),
    "stats": (list[LearningStats], ("stats",)),
    "stats-one": (LearningStats, ("stats ID",)),
    "expertise-list": (list[ExpertiseRow], ("expertise list",)),
    "expertise-show": (dict[str, object], ("expertise show",)),
    "expertise-classify": (Classification, ("expertise classify",)),
    "expertise-update": (ExpertiseUpdate, ("expertise learn", "expertise improve")),
    "expertise-validate": (list[ExpertiseUpdate], ("expertise validate",)),
    "expertise-history": (list[ExpertiseHistoryEntry], ("expertise history",)),
    "expertise-prompt": (ExpertisePrompt, ("expertise prompt",)),
    "otel-export": (OtelExport, ("otel export",)),
    "mirror-postgres": (MirrorResult, ("mirror postgres",)),
}

__all__ = [
    "OUTPUTS",
    "ActionRecord",
    "ActivityReport",
    "CatalogStatus",
    "CheckReportData",
    "Classification",
    "DemoSummary",
    "DraftOutcome",
    "EvalReport",
    "ExpertiseChange",
    "ExpertiseHistoryEntry",
    "ExpertisePrompt",
    "ExpertiseRow",
    "ExpertiseUpdate",
    "ExportResult",
    "HooksStatus",
    "ImportReport",
    "IndexReport",
    "InitResult",
    "KpisReport",
    "LearningData",
    "LearningHistoryEntry",
    "LearningStats",
    "MirrorResult",
    "OtelExport",
    "PreflightBrief",
    "Promoted",
    "RcaAdded",
    "Rejected",
    "ReportWritten",
    "ResumeState",
    "RetentionData",
    "SearchOutput",
    "SearchResultData",
    "SessionEndRecord",
    "SessionRow",
    "SessionStarted",
    "StaleReportData",
    "SyncResult",
    "WrittenAction",
]
