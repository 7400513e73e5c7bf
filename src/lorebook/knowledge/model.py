"""The learning model: the front matter of `learnings/<id>.md` (DESIGN "Learning file").

Parsed once at the boundary (see `fileformat`), validated here. Never imported by
`import lorebook` or the append path: pydantic costs ~100 ms to import.
"""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..errors import UsageError
from .sections import split_sections

KINDS = ("lesson", "pattern", "rca", "guide")
STATUSES = ("draft", "published", "superseded", "retired")
SEVERITIES = ("high", "medium", "low")
Kind = Literal["lesson", "pattern", "rca", "guide"]
Status = Literal["draft", "published", "superseded", "retired"]
Severity = Literal["high", "medium", "low"]

# The order keys are written in; unknown keys follow in their original order.
KNOWN_KEYS = (
    "id",
    "title",
    "kind",
    "category",
    "severity",
    "tags",
    "status",
    "created",
    "source",
    "anchors",
    "supersedes",
    "solutions",
    "prevention",
    "checksum",
)
SECTIONS = ("Problem", "Root Cause", "Solution", "Key Takeaway")

_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,159}")


def validate_id(learning_id: object) -> str:
    """A learning id as given by a user: it names a file, so no separators, no `..`."""
    if not isinstance(learning_id, str) or not learning_id:
        raise UsageError("a learning id must be a non-empty string")
    text = learning_id.removesuffix(".md")
    if "/" in text or "\\" in text or ".." in text or not _ID.fullmatch(text):
        raise UsageError(
            "invalid learning id {!r}: use letters, digits, '.', '_' and '-' "
            "(no path separators, no '..', at most 160 characters)",
            learning_id,
        )
    return text


class Source(BaseModel):
    """Where a learning came from (epic, issue, session, task); unknown keys are kept."""

    model_config = ConfigDict(extra="allow")

    epic: str | None = None
    issue: str | None = None
    session: str | None = None
    task: str | None = None


class Solution(BaseModel):
    """A proven solution of a pattern; its rates are derived from the log, never stored."""

    model_config = ConfigDict(extra="allow")

    id: str
    text: str


class Learning(BaseModel):
    """One learning: front matter fields, unknown keys (`extra`), the Markdown `body`."""

    model_config = ConfigDict(validate_assignment=True)

    id: str
    title: str = Field(min_length=1)
    kind: Kind = "lesson"
    category: str | None = None
    severity: Severity | None = None
    tags: list[str] = Field(default_factory=list)
    status: Status
    created: date
    source: Source = Field(default_factory=Source)
    anchors: list[str] = Field(default_factory=list)
    supersedes: list[str] = Field(default_factory=list)
    solutions: list[Solution] = Field(default_factory=list)
    prevention: list[str] = Field(default_factory=list)
    checksum: str | None = None
    extra: dict[str, Any] = Field(default_factory=dict)
    body: str = ""
    path: Path | None = None
    stale: bool = False

    @field_validator("id")
    @classmethod
    def _valid_id(cls, value: str) -> str:
        try:
            return validate_id(value)
        except UsageError as exc:
            raise ValueError(str(exc)) from None

    @field_validator("title")
    @classmethod
    def _one_line_title(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the title must not be empty")
        if "\n" in value.strip():
            raise ValueError("the title must be one line")
        return value.strip()

    def sections(self) -> dict[str, str]:
        """The body's `## ` sections by heading (text before the first heading is skipped)."""
        return split_sections(self.body)

    @property
    def takeaway(self) -> str:
        """The Key Takeaway section, else the first paragraph of the Solution."""
        sections = self.sections()
        if sections.get("Key Takeaway"):
            return sections["Key Takeaway"]
        return sections.get("Solution", "").split("\n\n", 1)[0].strip()

    @property
    def is_draft(self) -> bool:
        return self.status == "draft"

    def front_matter(self) -> dict[str, Any]:
        """Known keys in the canonical order, then the unknown keys as they were."""
        data = self.model_dump(mode="python", include=set(KNOWN_KEYS))
        data["source"] = self.source.model_dump(mode="python")
        for key in ("task",):  # written only when set, so DESIGN-style files stay as they are
            if data["source"].get(key) is None:
                data["source"].pop(key, None)
        if data.get("checksum") is None:
            data.pop("checksum", None)
        if not data.get("solutions"):
            data.pop("solutions", None)
        ordered = {key: data[key] for key in KNOWN_KEYS if key in data}
        ordered.update(self.extra)
        return ordered

    def to_dict(self) -> dict[str, Any]:
        """The JSON contract of `lore show --json` and friends."""
        data = self.front_matter()
        data["created"] = self.created.isoformat()
        data["takeaway"] = self.takeaway
        data["body"] = self.body
        data["stale"] = self.stale
        data["path"] = str(self.path) if self.path else None
        return data
