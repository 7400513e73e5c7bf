"""What the index sees of a learning: a small, JSON-friendly document.

The index depends only on this interface, so the source of learnings (the knowledge base's
`LearningStore`, or the minimal front-matter reader below) is one adapter away.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..knowledge.sections import split_sections
from ..log.reader import Problem
from ..paths import Layout

_FENCE = "---"


@dataclass(frozen=True)
class Document:
    """One learning as indexed: text for matching, metadata for filters and ranking."""

    id: str
    title: str
    path: str  # relative to the store root
    body: str = ""
    kind: str = "lesson"
    category: str | None = None
    severity: str | None = None
    status: str = "published"
    tags: list[str] = field(default_factory=list)
    created: str | None = None  # YYYY-MM-DD
    supersedes: list[str] = field(default_factory=list)
    solutions: list[dict[str, str]] = field(default_factory=list)
    prevention: list[str] = field(default_factory=list)
    stale: bool = False

    def sections(self) -> dict[str, str]:
        """The body's `## ` sections by heading; text before the first heading is `""`."""
        return split_sections(self.body, keep_head=True)

    @property
    def takeaway(self) -> str:
        """The Key Takeaway, else the Solution's first paragraph, else the body's first one."""
        sections = self.sections()
        for name in ("Key Takeaway", "Solution", ""):
            if sections.get(name):
                return sections[name].split("\n\n", 1)[0].strip()
        return ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Document:
        names = cls.__dataclass_fields__
        return cls(**{k: v for k, v in data.items() if k in names})


def content_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def learning_files(layout: Layout) -> list[Path]:
    """Published learnings and drafts, sorted (the index's corpus)."""
    files: list[Path] = []
    for folder in (layout.learnings, layout.drafts):
        try:
            files.extend(p for p in folder.glob("*.md") if p.is_file())
        except OSError:
            continue
    return sorted(files)


class ParseError(Exception):
    def __init__(self, line: int, reason: str) -> None:
        super().__init__(reason)
        self.line = line
        self.reason = reason


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value if v is not None]
    return [str(value)]


def _solutions(value: Any) -> list[dict[str, str]]:
    out = []
    for i, item in enumerate(value if isinstance(value, list) else []):
        if isinstance(item, dict) and item.get("text"):
            out.append({"id": str(item.get("id") or f"s{i + 1}"), "text": str(item["text"])})
        elif isinstance(item, str):
            out.append({"id": f"s{i + 1}", "text": item})
    return out


def _front_matter(text: str) -> tuple[dict[str, Any], str]:
    lines = text.split("\n")
    if not lines or lines[0].strip() != _FENCE:
        raise ParseError(1, "no YAML front matter (the file must start with '---')")
    for end in range(1, len(lines)):
        if lines[end].strip() == _FENCE:
            break
    else:
        raise ParseError(1, "front matter is not closed with '---'")
    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    try:
        data = YAML(typ="safe", pure=True).load("\n".join(lines[1:end]))
    except MarkedYAMLError as exc:
        mark = exc.problem_mark
        raise ParseError(2 + (mark.line if mark else 0), f"invalid YAML: {exc.problem}") from None
    except YAMLError as exc:
        raise ParseError(2, f"invalid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise ParseError(2, "front matter must be a mapping")
    return data, "\n".join(lines[end + 1 :])


def parse_learning(text: str, rel: str) -> Document:
    """A learning file's text -> Document; ParseError(line, reason) when it cannot be read."""
    data, body = _front_matter(text)
    stem = Path(rel).stem
    title = data.get("title")
    if not isinstance(title, str) or not title.strip():
        raise ParseError(2, "missing title")
    created = data.get("created")
    return Document(
        id=str(data.get("id") or stem),
        title=" ".join(title.split()),
        path=rel,
        body=body.strip(),
        kind=str(data.get("kind") or "lesson"),
        category=None if data.get("category") is None else str(data["category"]),
        severity=None if data.get("severity") is None else str(data["severity"]),
        status=str(data.get("status") or ("draft" if "/drafts/" in f"/{rel}" else "published")),
        tags=_as_list(data.get("tags")),
        created=None if created is None else str(created)[:10],
        supersedes=_as_list(data.get("supersedes")),
        solutions=_solutions(data.get("solutions")),
        prevention=_as_list(data.get("prevention")),
    )


def read_document(
    path: Path, layout: Layout, on_problem: Callable[[Problem], None]
) -> tuple[str, Document | None] | None:
    """(content hash, Document or None if unparseable), or None when the file vanished."""
    rel = layout.rel(path)
    try:
        data = path.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
    except OSError as exc:
        on_problem(Problem(rel, 0, f"cannot be read: {exc.strerror or exc}"))
        return None
    digest = content_hash(data)
    try:
        return digest, parse_learning(data.decode("utf-8"), rel)
    except UnicodeDecodeError:
        on_problem(Problem(rel, 1, "not UTF-8 text; skipped"))
    except ParseError as exc:
        on_problem(Problem(rel, exc.line, f"{exc.reason}; skipped"))
    return digest, None


def iter_documents(
    layout: Layout, on_problem: Callable[[Problem], None]
) -> Iterator[tuple[Path, str, Document | None]]:
    for path in learning_files(layout):
        got = read_document(path, layout, on_problem)
        if got is not None:
            yield path, got[0], got[1]
