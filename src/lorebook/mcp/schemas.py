"""The structured results of the MCP tools: each model becomes a tool's `outputSchema`.

Kept flat and lean on purpose: every field here is sent to the client in `tools/list` and
costs context on every turn. Action records and report tables stay plain objects (their shape
is the action-log schema, documented in docs/schema/), not re-declared field by field.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, SerializerFunctionWrapHandler, model_serializer

Record = dict[str, Any]


class Result(BaseModel):
    """A tool's result: a field with no value is left out, never sent as `null` -- the
    portable schema (`lean`) has no null type, and clients check results against it."""

    @model_serializer(mode="wrap")
    def _without_nulls(self, handler: SerializerFunctionWrapHandler) -> Any:
        return {key: value for key, value in handler(self).items() if value is not None}


class LoggedAction(Result):
    id: str
    session: str
    type: str
    outcome: str


class RecentActions(Result):
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


class Subagent(Result):
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


class SubagentStatus(Result):
    count: int
    subagents: list[Subagent]
    partial: str | None = None  # why only the last days of the log were read


class ActionList(Result):
    count: int
    actions: list[Record]


class ActivityReport(Result):
    window: Record
    summary: Record
    group_by: str
    breakdown: list[Record]
    recent_failures: list[Record]
    deployments: Record
    overhead: Record | None


class ExportManifest(Result):
    path: str
    manifest: str
    format: str
    record_count: int
    bytes: int
    redactions: Record


class LearningHit(Result):
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


class LearningSearch(Result):
    query: str
    mode: str
    results_count: int
    learnings: list[LearningHit]
    recommendation: str
    warnings: list[str]
    degraded: str | None = None  # why results are keyword-only (e.g. the index is being built)


class IndexUpdate(Result):
    added: int
    updated: int
    removed: int
    unchanged: int
    skipped: list[str]
    rebuilt: bool
    model: str | None


class Application(Result):
    action_id: str
    learning_id: str
    outcome: str
    applications: int
    success_rate: float | None
    partial: str | None = None  # why only the last days of the log were read


class LearningStats(Result):
    learnings: list[Record]
    partial: str | None = None  # why only the last days of the log were read


class Occurrence(Result):
    action_id: str
    pattern_id: str
    solution: str
    outcome: str
    occurrence_count: int
    success_rate: float | None
    partial: str | None = None  # why only the last days of the log were read


class Preflight(Result):
    text: str
    learnings: list[Record]
    patterns: list[Record]
    prevention: list[str]
    expertise: list[Record]
    warnings: list[str]
    degraded: str | None = None


class Draft(Result):
    status: str
    id: str | None = None
    title: str | None = None
    path: str | None = None
    duplicate_of: str | None = None
    similarity: float | None = None
    drafted_as: str | None = None  # status `drafted`: the epic's or issue's earlier draft


class Promotion(Result):
    id: str
    title: str
    commit: str
    branch: str | None
    path: str
    on_current_branch: bool
    warning: str | None


class ExpertiseView(Result):
    domains: list[Record]
    domain: str | None = None
    exists: bool | None = None
    content: Record | None = None
    prompt: str | None = None


NULL = {"type": "null"}
SCHEMA_LISTS = ("anyOf", "oneOf", "allOf")


def lean(schema: Any) -> Any:
    """A tool's JSON schema in the subset every MCP client accepts (docs/mcp.md, "Portable
    schemas"), and without what costs context and says nothing (pydantic's `title`s).

    Gemini reads one `type` per schema and no `$ref`; Codex turns an `anyOf` into a string. So
    `T | None` is spelt `T`, not required (an argument left out is "not given"; a result leaves
    the field out, see `Result`), `$defs` are inlined, and `default: null` and
    `additionalProperties: true` (what an object allows anyway) are dropped."""
    if not isinstance(schema, dict):
        return schema
    return _portable(schema, schema.get("$defs", {}), ())[0]


def _portable(
    schema: dict[str, Any], defs: dict[str, Any], seen: tuple[str, ...]
) -> tuple[dict[str, Any], bool]:
    """`schema` made portable, and whether it allowed null."""
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        name = ref.rsplit("/", 1)[-1]
        if name in seen:  # a model that holds itself cannot be inlined: say so, at start-up
            raise ValueError(f"schema {name} refers to itself and cannot be inlined")
        here = {key: value for key, value in schema.items() if key != "$ref"}
        return _portable({**defs[name], **here}, defs, (*seen, name))
    out: dict[str, Any] = {}
    nullable: dict[str, bool] = {}
    for key, value in schema.items():
        if key in ("title", "$defs") or (key, value) in (
            ("default", None),
            ("additionalProperties", True),
        ):
            continue
        if key == "properties":  # a map of names to schemas: keep every name
            made = {name: _portable(sub, defs, seen) for name, sub in value.items()}
            out[key] = {name: sub for name, (sub, _) in made.items()}
            nullable = {name: null for name, (_, null) in made.items()}
        elif key in SCHEMA_LISTS:
            out[key] = [sub if sub == NULL else _portable(sub, defs, seen)[0] for sub in value]
        elif key in ("items", "additionalProperties") and isinstance(value, dict):
            out[key] = _portable(value, defs, seen)[0]
        else:
            out[key] = value
    null = False
    branches = out.get("anyOf")
    if isinstance(branches, list) and len(branches) == 2 and NULL in branches:
        del out["anyOf"]
        out = {**next(b for b in branches if b != NULL), **out}
        null = True
    kind = out.get("type")
    if isinstance(kind, list) and len(kind) == 2 and "null" in kind:
        out["type"] = next(k for k in kind if k != "null")
        null = True
    if "required" in out:
        out["required"] = [name for name in out["required"] if not nullable.get(name)]
        if not out["required"]:
            del out["required"]
    return out, null
