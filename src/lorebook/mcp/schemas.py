"""The structured results of the MCP tools: each model becomes a tool's `outputSchema`.

Kept flat and lean on purpose: every field here is sent to the client in `tools/list` and
costs context on every turn. Action records and report tables stay plain objects (their shape
is the action-log schema, documented in docs/schema/), not re-declared field by field.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

Record = dict[str, Any]


class LoggedAction(BaseModel):
    id: str
    session: str
    type: str
    outcome: str


class RecentActions(BaseModel):
    found: bool
    message: str | None = None
    session: Record | None = None
    last_prompt: str | None = None
    epic: str | None = None
    work_in_progress: str | None = None
    last_failure: Record | None = None
    last_failed_command: Record | None = None
    tasks: Record | None = None
    suggested_next_steps: list[str] = []
    open_actions: list[Record] = []
    failed_validations: list[Record] = []
    files: Record | None = None
    commands: list[Record] = []
    recent_actions: list[Record] = []
    git: Record | None = None
    brief: str | None = None  # the same brief as `lore resume`, framed as quoted data


class Subagent(BaseModel):
    agent_id: str
    status: str
    subagent_type: str | None
    task: str | None
    started: str
    updated: str
    session: str
    epic: str | None
    error: str | None
    duration_s: float | None


class SubagentStatus(BaseModel):
    count: int
    subagents: list[Subagent]
    partial: str | None = None  # why only the last days of the log were read


class ActionList(BaseModel):
    count: int
    actions: list[Record]


class ActivityReport(BaseModel):
    window: Record
    summary: Record
    group_by: str
    breakdown: list[Record]
    recent_failures: list[Record]
    deployments: Record
    overhead: Record | None


class ExportManifest(BaseModel):
    path: str
    manifest: str
    format: str
    record_count: int
    bytes: int
    redactions: Record


class LearningHit(BaseModel):
    id: str
    title: str
    kind: str | None
    category: str | None
    severity: str | None
    takeaway: str
    score: float
    stale: bool
    path: str
    applications: int | None = None
    success_rate: float | None = None
    recommendation: str | None = None
    applied: list[Record] | None = None


class LearningSearch(BaseModel):
    query: str
    mode: str
    results_count: int
    learnings: list[LearningHit]
    recommendation: str
    warnings: list[str]
    degraded: str | None = None  # why results are keyword-only (e.g. the index is being built)


class IndexUpdate(BaseModel):
    added: int
    updated: int
    removed: int
    unchanged: int
    skipped: list[str]
    rebuilt: bool
    model: str | None


class Application(BaseModel):
    action_id: str
    learning_id: str
    outcome: str
    applications: int
    success_rate: float | None
    partial: str | None = None  # why only the last days of the log were read


class LearningStats(BaseModel):
    learnings: list[Record]
    partial: str | None = None  # why only the last days of the log were read


class Occurrence(BaseModel):
    action_id: str
    pattern_id: str
    solution: str
    outcome: str
    occurrence_count: int
    success_rate: float | None
    partial: str | None = None  # why only the last days of the log were read


class Preflight(BaseModel):
    text: str
    learnings: list[Record]
    patterns: list[Record]
    prevention: list[str]
    expertise: list[Record]
    warnings: list[str]
    degraded: str | None = None


class Draft(BaseModel):
    status: str
    id: str | None = None
    title: str | None = None
    path: str | None = None
    duplicate_of: str | None = None
    similarity: float | None = None
    drafted_as: str | None = None  # status `drafted`: the epic's or issue's earlier draft


class Promotion(BaseModel):
    id: str
    title: str
    commit: str
    branch: str | None
    path: str
    on_current_branch: bool
    warning: str | None


class ExpertiseView(BaseModel):
    domains: list[Record]
    domain: str | None = None
    exists: bool | None = None
    content: Record | None = None
    prompt: str | None = None


def lean(schema: Any) -> Any:
    """A JSON schema without what costs context and says nothing: pydantic's generated
    `title`s, `default: null`, and `anyOf [T, null]` spelt as `type: [T, "null"]`."""
    if isinstance(schema, list):
        return [lean(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key == "default" and value is None:
            continue
        if key in ("properties", "$defs"):  # maps of names to schemas: keep every name
            out[key] = {name: lean(sub) for name, sub in value.items()}
        else:
            out[key] = lean(value)
    branches = out.get("anyOf")
    if isinstance(branches, list) and len(branches) == 2 and {"type": "null"} in branches:
        other = next(b for b in branches if b != {"type": "null"})
        if isinstance(other.get("type"), str) and "enum" not in other:
            del out["anyOf"]
            out.update(other, type=[other["type"], "null"])
    return out
