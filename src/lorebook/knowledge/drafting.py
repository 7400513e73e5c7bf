"""The one write path of generated drafts: seed template, near-duplicate check, a logged action.

Every generated draft (from an epic, an issue, a retrospective) is compared with the existing
learnings (see `similar`): at >= 95 % it is not written and a `learning_draft` action with
outcome `blocked` says which learning it duplicates; at 80-95 % it is written with `supersedes`
suggested in its front matter and a checklist line asking the reviewer to confirm.

An automatic draft is idempotent per trigger (an epic, an issue, a validation streak): its id is
a function of the trigger (`DraftSpec.trigger`), so a second trigger — in another process, or
after the first draft was promoted or rejected — finds the id taken (a file, or a
`learning_draft` action in the log) and writes nothing. The file is created exclusively, so two
processes racing for one trigger write one draft. A draft asked for by hand (`lore draft
from-epic|from-issue`) of an epic or issue drafted before is refused the same way unless forced:
a person re-running the command expects the draft they already have, not a second one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import TYPE_CHECKING, Any

from ..errors import LoreError
from ..log.query import ActionFilter
from ..redact.names import name_secret_kind
from ..timeutil import parse_ts, utcnow
from .ids import keyed_suffix, random_suffix
from .similar import DUPLICATE, REVIEW_HEADING, SIMILAR, Match, best_matches, substance

if TYPE_CHECKING:
    from ..log.actionlog import ActionLog
    from .model import Learning
    from .store import LearningStore

CHECKLIST = (
    "Problem description accurate?",
    "Root cause correct?",
    "Solution generalizable?",
    "Tags appropriate?",
)
PLACEHOLDER = "_Nothing in the log; fill in during review._"


@dataclass
class DraftSpec:
    """What an extractor found; `render_body` turns it into the seed's draft template."""

    title: str
    origin: str  # "epic-012 (epic_complete action 01J...)"
    problem: str = ""
    root_cause: str = ""
    solution: str = ""
    takeaway: str = ""
    kind: str = "lesson"
    severity: str | None = None
    category: str | None = None
    tags: list[str] = field(default_factory=list)
    source: dict[str, Any] = field(default_factory=dict)
    solutions: list[dict[str, str]] = field(default_factory=list)
    prevention: list[str] = field(default_factory=list)
    learning_id: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    trigger: str | None = None  # "epic:<id>", "issue:<id>", "validate:<epic>:<first failure>"


@dataclass
class DraftOutcome:
    """`written` with the learning, `duplicate` with the learning it duplicates, or `drafted`
    when its trigger (or, asked for by hand, its epic or issue: `subject`) was drafted before
    (`drafted_as`: that draft's id; `can_force`: forcing writes another)."""

    status: str
    learning: Learning | None = None
    duplicate_of: Match | None = None
    supersedes: list[Match] = field(default_factory=list)
    action: dict[str, Any] | None = None
    drafted_as: str | None = None
    subject: str | None = None
    can_force: bool = False

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"status": self.status}
        if self.learning is not None:
            out["id"] = self.learning.id
            out["title"] = self.learning.title
            out["path"] = str(self.learning.path) if self.learning.path else None
        if self.duplicate_of is not None:
            out["duplicate_of"] = self.duplicate_of.learning
            out["similarity"] = self.duplicate_of.similarity
        if self.drafted_as is not None:
            out["drafted_as"] = self.drafted_as
            out["subject"] = self.subject
        if self.can_force:
            out["can_force"] = True
        out["supersedes"] = [
            {"id": m.learning, "similarity": m.similarity} for m in self.supersedes
        ]
        return out


def render_body(spec: DraftSpec, day: date, learning_id: str, similar: list[Match]) -> str:
    """The seed's draft template (pure)."""
    tags = ", ".join(spec.tags) or "none"
    checks = [f"- [ ] {item}" for item in CHECKLIST]
    for match in similar:
        checks.append(
            f"- [ ] Supersedes {match.learning} ({match.similarity:.0%} similar)? "
            "If not, remove it from `supersedes`."
        )
    checks.append(f"- [ ] Publish with `lore promote {learning_id}` when approved")
    return "\n".join(
        [
            f"# Learning [AUTO-GENERATED]: {spec.title}",
            "",
            f"**Date:** {day.isoformat()}",
            f"**Severity:** {(spec.severity or 'unknown').upper()}",
            f"**Category:** {spec.category or 'uncategorized'}",
            f"**Tags:** {tags}",
            "**Status:** DRAFT - Review and approve before publishing",
            "",
            "---",
            "",
            f"## Problem\n{spec.problem.strip() or PLACEHOLDER}",
            "",
            f"## Root Cause\n{spec.root_cause.strip() or PLACEHOLDER}",
            "",
            f"## Solution\n{spec.solution.strip() or PLACEHOLDER}",
            "",
            f"## Key Takeaway\n{spec.takeaway.strip() or PLACEHOLDER}",
            "",
            REVIEW_HEADING,
            f"**Auto-generated from:** {spec.origin}",
            *checks,
            "",
        ]
    )


def free_id(store: LearningStore, wanted: str) -> str:
    """`wanted`, or `wanted-2`, `-3`, ... when a learning already has that id.

    An id the sanitizer would redact (an epic name that looks like a token) is replaced by
    `auto-<random>`: a file name never carries a secret, and the id must survive redaction.
    """
    if name_secret_kind(wanted, store.sanitizer) is not None:
        wanted = f"auto-{random_suffix(10)}"
    candidate, n = wanted, 1
    while store.exists(candidate):
        n += 1
        candidate = f"{wanted}-{n}"
    return candidate


def keyed_id(store: LearningStore, prefix: str, trigger: str) -> str:
    """The one id of the draft for `trigger`: `<prefix>-<suffix from the trigger>`."""
    wanted = f"{prefix}-{keyed_suffix(trigger)}"
    if name_secret_kind(wanted, store.sanitizer) is not None:
        wanted = f"auto-{keyed_suffix(trigger, 10)}"
    return wanted


def drafted_before(action_log: ActionLog, spec: DraftSpec, learning_id: str) -> bool:
    """Whether a draft with this id was ever written (it may since be promoted or rejected)."""
    query = ActionFilter(
        type="learning_draft",
        outcome="success",
        epic=spec.source.get("epic"),
        issue=spec.source.get("issue"),
    )
    return any(
        isinstance(action.get("context"), dict) and action["context"].get("learning") == learning_id
        for action in action_log.iter_actions(query)
    )


def subject_of(spec: DraftSpec) -> str:
    """What a draft is about, for people: `epic epic-012`, `issue 42`, else its title."""
    for name in ("issue", "epic"):
        if spec.source.get(name):
            return f"{name} {spec.source[name]}"
    return spec.title


def earlier_draft(action_log: ActionLog, spec: DraftSpec) -> str | None:
    """The newest draft written for the spec's issue, else its epic (an issue's draft is not
    its epic's), automatically or by hand; None when there is none or no epic/issue."""
    issue, epic = spec.source.get("issue"), spec.source.get("epic")
    if not (issue or epic):
        return None
    query = ActionFilter(type="learning_draft", outcome="success", epic=None if issue else epic,
                         issue=issue)  # fmt: skip
    found = action_log.iter_actions(query)  # newest first
    try:
        for action in found:
            context = action.get("context")
            if issue is None and action.get("issue") is not None:
                continue
            if isinstance(context, dict) and isinstance(context.get("learning"), str):
                return str(context["learning"])
    finally:
        close = getattr(found, "close", None)
        if close is not None:
            close()
    return None


def compare(store: LearningStore, spec: DraftSpec, body: str) -> list[Match]:
    candidates = ((item.id, substance(item.title, item.body)) for item in store.all())
    return best_matches(substance(spec.title, body), candidates, threshold=SIMILAR)


def write_draft(
    store: LearningStore,
    action_log: ActionLog,
    spec: DraftSpec,
    *,
    trigger: dict[str, Any] | None = None,
    duplicate: float = DUPLICATE,
    force: bool = True,
) -> DraftOutcome:
    """Write the draft into `store` unless it duplicates a learning; log a `learning_draft`
    action to `action_log`. Without `force`, an unkeyed draft of an epic or issue drafted
    before is not written either (see the module's docstring)."""
    day = utcnow().date()
    if spec.trigger is not None:
        learning_id = keyed_id(store, spec.learning_id or "auto", spec.trigger)
        if store.exists(learning_id) or drafted_before(action_log, spec, learning_id):
            return _drafted(action_log, spec, trigger, learning_id)
    elif not force and (earlier := earlier_draft(action_log, spec)) is not None:
        return _drafted(action_log, spec, trigger, earlier)
    else:
        learning_id = free_id(store, spec.learning_id or store.new_id(spec.title, day))
    matches = compare(store, spec, render_body(spec, day, learning_id, []))
    if matches and matches[0].similarity >= duplicate:
        outcome = DraftOutcome("duplicate", duplicate_of=matches[0])
        outcome.action = _log(action_log, spec, trigger, outcome)
        return outcome
    similar = [m for m in matches if m.similarity < duplicate]
    try:
        learning = _create(store, spec, day, learning_id, similar)
    except LoreError:
        if spec.trigger is not None and store.exists(learning_id):  # another process won
            return _drafted(action_log, spec, trigger, learning_id)
        raise
    outcome = DraftOutcome("written", learning=learning, supersedes=similar)
    outcome.action = _log(action_log, spec, trigger, outcome)
    return outcome


def _create(
    store: LearningStore, spec: DraftSpec, day: date, learning_id: str, similar: list[Match]
) -> Learning:
    return store.create(
        title=spec.title,
        kind=spec.kind,
        category=spec.category,
        severity=spec.severity,
        tags=spec.tags,
        body=render_body(spec, day, learning_id, similar),
        source=spec.source,
        solutions=spec.solutions,
        prevention=spec.prevention,
        supersedes=[m.learning for m in similar],
        extra=spec.extra,
        learning_id=learning_id,
        created=day,
    )


def _drafted(
    action_log: ActionLog, spec: DraftSpec, trigger: dict[str, Any] | None, learning_id: str
) -> DraftOutcome:
    outcome = DraftOutcome("drafted", drafted_as=learning_id, subject=subject_of(spec))
    outcome.can_force = spec.trigger is None
    outcome.action = _log(action_log, spec, trigger, outcome)
    return outcome


def _log(
    action_log: ActionLog, spec: DraftSpec, trigger: dict[str, Any] | None, outcome: DraftOutcome
) -> dict[str, Any]:
    """The `learning_draft` action, in the triggering action's session when there is one."""
    context: dict[str, Any] = {"title": spec.title, "origin": spec.origin, **outcome.to_dict()}
    if outcome.learning is not None:
        context["learning"] = outcome.learning.id
        if outcome.learning.path is not None:
            context["path"] = action_log.layout.rel(outcome.learning.path)
    fields: dict[str, Any] = {
        "outcome": "success" if outcome.status == "written" else "blocked",
        "context": context,
        "epic": spec.source.get("epic"),
        "issue": spec.source.get("issue"),
    }
    if outcome.status != "written" and outcome.duplicate_of is not None:
        fields["error"] = (
            f"near-duplicate of {outcome.duplicate_of.learning} "
            f"({outcome.duplicate_of.similarity:.0%} similar): not written"
        )
    if spec.trigger is not None:
        context["trigger_key"] = spec.trigger
    if outcome.drafted_as is not None:
        what = spec.trigger or outcome.subject
        fields["error"] = f"{what} was drafted before as {outcome.drafted_as}: not written"
    if trigger is not None:
        context["trigger"] = trigger.get("id")
        fields.update(after(trigger))
    return action_log.log("learning_draft", **fields)


def after(trigger: dict[str, Any]) -> dict[str, Any]:
    """Log fields that place a subscriber's action right after its trigger: same session,
    agent and project, stamped 1 ms later (a backdated trigger keeps a coherent timeline)."""
    return {
        "session": trigger.get("session"),
        "agent": trigger.get("agent"),
        "project": trigger.get("project"),
        "now": parse_ts(trigger["ts"]) + timedelta(milliseconds=1),
    }
