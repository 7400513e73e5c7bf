"""The `--json` outputs of `lore expertise …`."""

from __future__ import annotations

from typing import Any, NotRequired

from typing_extensions import TypedDict


class Classification(TypedDict):
    """The domain of a task, every domain's score and the keywords/paths that matched."""

    domain: str
    scores: dict[str, int]
    matched: dict[str, list[str]]


class ExpertiseChange(TypedDict):
    type: str
    summary: str
    data: Any


class ExpertiseUpdate(TypedDict):
    """What `expertise learn|improve|validate` changed in one domain's file (and committed)."""

    domain: str
    path: str
    changes: list[ExpertiseChange]
    changes_count: int
    committed: str | None
    warnings: NotRequired[list[str]]
    lines: NotRequired[int]
    status: NotRequired[str]
    validated_at: NotRequired[str]
    globs: NotRequired[list[str]]
    session: NotRequired[str]
    classification: NotRequired[Classification]
    completed: NotRequired[bool]
    action_count: NotRequired[int]


class Entries(TypedDict):
    core_files: int
    patterns: int
    best_practices: int
    learned_from_failures: int
    effective_patterns: int
    successful_techniques: int


class ExpertiseRow(TypedDict):
    domain: str
    path: str
    exists: bool
    lines: NotRequired[int]
    entries: NotRequired[Entries]
    last_validated: NotRequired[str | None]
    problem: NotRequired[str]


class ExpertiseHistoryEntry(TypedDict):
    commit: str
    short: str
    author: str
    date: str
    subject: str
    lorebook: bool
    changes: list[str]


class ExpertisePrompt(TypedDict):
    domain: str
    exists: bool
    scores: dict[str, int] | None
    prompt: str
