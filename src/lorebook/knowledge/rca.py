"""RCA lessons: a root-cause analysis report becomes one `kind: rca` learning, exactly once.

`build_lesson_content` is the pure template; the learning's `checksum` is the SHA-256 of that
text (after redaction), so adding the same report twice - by `lore rca add` or by the subscriber
that watches failed actions carrying `context.rca` - returns the learning written the first time.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any

from ..errors import LoreError, UsageError
from .ids import safe_slug

if TYPE_CHECKING:
    from ..redact.sanitize import Sanitizer
    from .model import Learning
    from .store import LearningStore

# report key -> accepted spellings (the seed's camelCase and snake_case)
_ALIASES = {
    "title": ("title",),
    "task_id": ("task_id", "taskId"),
    "epic_id": ("epic_id", "epicId"),
    "project_id": ("project_id", "projectId"),
    "root_cause": ("rootCause", "root_cause"),
    "failed_strategies": ("failedStrategies", "failed_strategies"),
    "corrective_action": ("correctiveAction", "corrective_action"),
    "prevention_notes": ("preventionNotes", "prevention_notes"),
    "tags": ("tags",),
    "created_at": ("created_at", "createdAt"),
}
REQUIRED = ("title", "root_cause", "corrective_action")


@dataclass(frozen=True)
class RCAReport:
    title: str
    root_cause: str
    corrective_action: str
    failed_strategies: tuple[str, ...] = ()
    prevention_notes: str = ""
    tags: tuple[str, ...] = ()
    task_id: str | None = None
    epic_id: str | None = None
    project_id: str | None = None
    created: date | None = None


def build_lesson_content(rca: RCAReport) -> str:
    """The lesson text, exactly the RCA template (pure: same report, same text)."""
    strategies = "\n".join(f"- {s}" for s in rca.failed_strategies)
    return (
        f"# RCA Lesson: {rca.title}\n\n"
        f"## Root Cause\n{rca.root_cause}\n\n"
        f"## Failed Strategies\n{strategies}\n\n"
        f"## Corrective Action\n{rca.corrective_action}\n\n"
        f"## Prevention Notes\n{rca.prevention_notes}"
    )


def lesson_tags(rca: RCAReport) -> list[str]:
    """`rca`, the report's tags, then `failed_strategy:<s>` per failed strategy (no repeats)."""
    tags = ["rca", *rca.tags, *(f"failed_strategy:{s}" for s in rca.failed_strategies)]
    return list(dict.fromkeys(t for t in tags if t))


def checksum(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _pick(data: Mapping[str, Any], key: str) -> Any:
    for name in _ALIASES[key]:
        if name in data:
            return data[name]
    return None


def _text(value: Any, key: str, where: str, *, required: bool = False) -> str:
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise UsageError("{}: '{}' is required and must be non-empty text", where, key)
        return ""
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "\n".join(f"- {v}" for v in value)  # prevention notes given as a list
    if isinstance(value, bool) or not isinstance(value, str | int | float | date):
        raise UsageError("{}: '{}' must be text, not {}", where, key, type(value).__name__)
    return str(value).strip()


def _strings(value: Any, key: str, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [v for v in value.split(",")] if key == "tags" else [value]
    if not isinstance(value, list) or not all(isinstance(v, str | int | float) for v in value):
        raise UsageError("{}: '{}' must be a list of strings", where, key)
    return tuple(s for s in (str(v).strip() for v in value) if s)


def _id(value: Any, key: str, where: str) -> str | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise UsageError("{}: '{}' must be a string id", where, key)
    return str(value)


def _created(value: Any, where: str) -> date | None:
    """`created_at` as Unix milliseconds (the seed), an ISO date/time, or a YAML date."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value.astimezone(UTC).date() if value.tzinfo else value.date()
    if isinstance(value, date):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            return datetime.fromtimestamp(value / 1000, UTC).date()
        except (OverflowError, OSError, ValueError):
            raise UsageError("{}: 'created_at' {!r} is not a time in ms", where, value) from None
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).date()
        except ValueError:
            pass
    raise UsageError(
        "{}: 'created_at' must be Unix milliseconds or an ISO date, not {!r}", where, value
    )


def parse_report(data: Any, where: str) -> RCAReport:
    """Validate a decoded report; errors name `where` (a file:line or an action)."""
    if not isinstance(data, Mapping):
        raise UsageError("{}: an RCA report must be a mapping, not {}", where, type(data).__name__)
    missing = [k for k in REQUIRED if _pick(data, k) in (None, "")]
    if missing:
        names = ", ".join(_ALIASES[k][0] for k in missing)
        raise UsageError("{}: missing required field(s): {}", where, names)
    title = _text(_pick(data, "title"), "title", where, required=True)
    if "\n" in title:
        raise UsageError("{}: 'title' must be one line", where)
    return RCAReport(
        title=title,
        root_cause=_text(_pick(data, "root_cause"), "rootCause", where, required=True),
        corrective_action=_text(
            _pick(data, "corrective_action"), "correctiveAction", where, required=True
        ),
        failed_strategies=_strings(_pick(data, "failed_strategies"), "failedStrategies", where),
        prevention_notes=_text(_pick(data, "prevention_notes"), "preventionNotes", where),
        tags=_strings(_pick(data, "tags"), "tags", where),
        task_id=_id(_pick(data, "task_id"), "task_id", where),
        epic_id=_id(_pick(data, "epic_id"), "epic_id", where),
        project_id=_id(_pick(data, "project_id"), "project_id", where),
        created=_created(_pick(data, "created_at"), where),
    )


def load_report(text: str, source: str) -> RCAReport:
    """An RCA report from YAML or JSON text (one-line file:line errors)."""
    from .docload import key_line, load_document

    data = load_document(text, source)
    try:
        return parse_report(data, source)
    except UsageError as exc:
        message = str(exc)
        for key in (*(a for names in _ALIASES.values() for a in names),):
            if f"'{key}'" in message and isinstance(data, Mapping) and key in data:
                line = key_line(text, key)
                if exc.template is not None and exc.values[:1] == (source,):  # "{}: …", where
                    raise UsageError(exc.template, f"{source}:{line}", *exc.values[1:]) from None
        raise


@dataclass(frozen=True)
class RCAResult:
    learning: Learning
    created: bool


def add_rca(
    store: LearningStore, sanitizer: Sanitizer, rca: RCAReport, *, publish: bool
) -> RCAResult:
    """Write the lesson once; the same report again returns the existing learning."""
    text = sanitizer.redact_text(build_lesson_content(rca))[0]
    digest = checksum(text)
    existing = store.find_by_checksum(digest)
    if existing is not None:
        return RCAResult(existing, False)
    created = rca.created or datetime.now(UTC).date()
    # the id is a function of the text: two clones adding one report create one file name
    learning_id = f"{created.isoformat()}-rca-{safe_slug(rca.title, sanitizer, 40)}-{digest[:8]}"
    if store.exists(learning_id):
        return RCAResult(store.get(learning_id), False)
    source: dict[str, Any] = {"epic": rca.epic_id, "task": rca.task_id}
    if rca.project_id:
        source["project"] = rca.project_id
    try:
        learning = store.create(
            title=rca.title,
            kind="rca",
            tags=lesson_tags(rca),
            body=text + "\n",
            source=source,
            checksum=digest,
            publish=publish,
            learning_id=learning_id,
            created=created,
        )
    except LoreError:
        if store.exists(learning_id):  # another process added the same report just now
            return RCAResult(store.get(learning_id), False)
        raise
    return RCAResult(learning, True)
