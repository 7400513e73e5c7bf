"""What the index sees of a learning: a small, JSON-friendly document.

The index depends only on this interface, so the source of learnings (the knowledge base's
`LearningStore`, or `parse_learning` below on its front-matter reader) is one adapter away.
The front-matter reader (YAML, pydantic) loads only when a file is parsed: a search answers
from the stored documents without it.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..knowledge.sections import split_sections
from ..paths import OUTSIDE, Layout
from ..problems import Problem


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


def null(value: Any) -> Any:
    from ..knowledge.fileformat import null

    return null(value)


def _text(value: Any) -> str | None:
    value = null(value)
    return None if value is None or isinstance(value, (dict, list)) else str(value)


def _as_list(value: Any) -> list[str]:
    value = null(value)
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value if null(v) is not None]
    return [str(value)]


def _solutions(value: Any) -> list[dict[str, str]]:
    out = []
    for i, item in enumerate(value if isinstance(value, list) else []):
        if isinstance(item, dict) and _text(item.get("text")):
            out.append({"id": _text(item.get("id")) or f"s{i + 1}", "text": str(item["text"])})
        elif isinstance(item, str):
            out.append({"id": f"s{i + 1}", "text": str(item)})
    return out


def parse_learning(text: str, rel: str) -> Document:
    """A learning file's text -> Document; ParseError(line, reason) when it cannot be read.

    The front matter is read by the knowledge base's reader (no aliases, no duplicate keys);
    only the schema is lenient here: a file with a title is searchable."""
    from ..knowledge.fileformat import LearningFormatError, read_front_matter

    try:
        data, _fm, body, first_line = read_front_matter(text, rel)
    except LearningFormatError as exc:
        raise ParseError(exc.line, exc.reason) from None
    stem = Path(rel).stem
    title = _text(data.get("title"))
    if not title or not title.strip():
        raise ParseError(first_line, "missing title")
    created = _text(data.get("created"))
    return Document(
        id=_text(data.get("id")) or stem,
        title=" ".join(title.split()),
        path=rel,
        body=body.strip(),
        kind=_text(data.get("kind")) or "lesson",
        category=_text(data.get("category")),
        severity=_text(data.get("severity")),
        status=_text(data.get("status")) or ("draft" if "/drafts/" in f"/{rel}" else "published"),
        tags=_as_list(data.get("tags")),
        created=None if created is None else created[:10],
        supersedes=_as_list(data.get("supersedes")),
        solutions=_solutions(data.get("solutions")),
        prevention=_as_list(data.get("prevention")),
    )


def read_document(
    path: Path, layout: Layout, on_problem: Callable[[Problem], None]
) -> tuple[str, Document | None] | None:
    """(content hash, Document or None if unparseable), or None when the file vanished."""
    rel = layout.rel(path)
    if layout.leaves_repository(path):  # e.g. a committed link to /etc/passwd: never read
        on_problem(Problem(rel, 0, f"{OUTSIDE}; skipped"))
        return OUTSIDE, None
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
