"""`lore check` for the learnings and drafts.

Findings are `file:line: reason`, like the action-log check: front-matter schema, id equal to
the file name, a file in the folder of its status, duplicate ids, `supersedes` naming no
learning, and secrets or PII (the sanitizer's own detectors). Expertise files: expertise/check.
"""

from __future__ import annotations

from collections.abc import Callable

from ..log.check import NAME_IS_SECRET
from ..paths import Layout
from ..problems import Problem
from ..redact.identifiers import redact_path
from ..redact.lines import line_of, secret_lines
from ..redact.names import name_secret_kind
from ..redact.sanitize import Sanitizer
from .fileformat import LearningFormatError, parse_learning
from .listing import learning_paths
from .model import Learning

Report = Callable[[Problem], None]


def check_learnings(layout: Layout, sanitizer: Sanitizer, report: Report) -> int:
    """Check every learning and draft file; the number of files read."""
    seen: dict[str, str] = {}
    parsed: list[tuple[str, str, Learning]] = []
    files = learning_paths(layout, (layout.learnings, layout.drafts), report)
    for path in files:
        rel, kind = redact_path(layout.rel(path), sanitizer)  # never print a secret
        if kind is None and (kind := name_secret_kind(path.stem, sanitizer)) is not None:
            rel = layout.rel(path.with_name(f"[REDACTED:{kind}]{path.suffix}"))  # a slug of one
        if kind is not None:
            report(Problem(rel, 0, NAME_IS_SECRET))
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            report(Problem(rel, 1, f"cannot read: {exc}"))
            continue
        secret_lines(rel, text, sanitizer, report, skip=True)
        try:
            learning = parse_learning(text, path, rel)
        except LearningFormatError as exc:
            report(Problem(exc.where, exc.line, exc.reason))
            continue
        in_drafts = path.parent == layout.drafts
        if learning.is_draft != in_drafts:
            where = "learnings/drafts/" if learning.is_draft else "learnings/"
            report(
                Problem(
                    rel, line_of(text, "status"), f"status {learning.status} belongs in {where}"
                )
            )
        if learning.id in seen:
            report(
                Problem(
                    rel,
                    line_of(text, "id"),
                    f"duplicate id {learning.id} (also {seen[learning.id]})",
                )
            )
        else:
            seen[learning.id] = rel
        parsed.append((rel, text, learning))
    for rel, text, learning in parsed:
        for ref in learning.supersedes:
            if ref not in seen:
                report(
                    Problem(rel, line_of(text, "supersedes"), f"supersedes {ref}: no such learning")
                )
            elif ref == learning.id:
                report(
                    Problem(rel, line_of(text, "supersedes"), "a learning cannot supersede itself")
                )
    return len(files)
