"""`lore check` for the knowledge files: learnings, drafts and `.expertise/*.yaml`.

Findings are `file:line: reason`, like the action-log check: front-matter schema, id equal to
the file name, a file in the folder of its status, duplicate ids, `supersedes` naming no
learning, expertise schema and size, and secrets or PII (the sanitizer's own detectors).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from ..expertise.schema import LIST_KEYS
from ..log.check import NAME_IS_SECRET
from ..log.identifiers import redact_path
from ..log.reader import Problem
from ..log.sanitize import Sanitizer
from ..paths import OUTSIDE, Layout
from .fileformat import LearningFormatError, parse_learning
from .model import Learning
from .store import learning_paths

Report = Callable[[Problem], None]

# front-matter lines holding validated identifiers, not free text
_STRUCTURAL_LINE = re.compile(r"^(id|created|checksum|status|kind|severity)\s*:")


def _line_of(text: str, key: str) -> int:
    match = re.search(rf"^{re.escape(key)}\s*:", text, re.MULTILINE)
    return text.count("\n", 0, match.start()) + 1 if match else 1


def _secrets(rel: str, text: str, sanitizer: Sanitizer, report: Report, skip: bool) -> None:
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or (skip and _STRUCTURAL_LINE.match(line)):
            continue
        for finding in sanitizer.findings(line):
            report(Problem(rel, number, f"possible secret ({finding.kind})"))


def check_learnings(layout: Layout, sanitizer: Sanitizer, report: Report) -> int:
    """Check every learning and draft file; the number of files read."""
    seen: dict[str, str] = {}
    parsed: list[tuple[str, str, Learning]] = []
    files = learning_paths(layout, (layout.learnings, layout.drafts), report)
    for path in files:
        rel, kind = redact_path(layout.rel(path), sanitizer)  # never print a secret
        if kind is not None:
            report(Problem(rel, 0, NAME_IS_SECRET))
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            report(Problem(rel, 1, f"cannot read: {exc}"))
            continue
        _secrets(rel, text, sanitizer, report, skip=True)
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
                    rel, _line_of(text, "status"), f"status {learning.status} belongs in {where}"
                )
            )
        if learning.id in seen:
            report(
                Problem(
                    rel,
                    _line_of(text, "id"),
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
                    Problem(
                        rel, _line_of(text, "supersedes"), f"supersedes {ref}: no such learning"
                    )
                )
            elif ref == learning.id:
                report(
                    Problem(rel, _line_of(text, "supersedes"), "a learning cannot supersede itself")
                )
    return len(files)


class _NoAliasLoader(yaml.SafeLoader):
    """Safe loading without aliases (an alias bomb is refused, not expanded)."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()  # type: ignore[no-untyped-call]
            raise yaml.MarkedYAMLError(
                None, None, "YAML aliases are not allowed here", event.start_mark
            )
        return super().compose_node(parent, index)


def _expertise(path: Path, rel: str, sanitizer: Sanitizer, report: Report, max_lines: int) -> None:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        report(Problem(rel, 1, f"cannot read: {exc}"))
        return
    _secrets(rel, text, sanitizer, report, skip=False)
    lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    if lines > max_lines:
        report(Problem(rel, max_lines + 1, f"{lines} lines: more than {max_lines}"))
    try:
        data = yaml.load(text, Loader=_NoAliasLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        reason = " ".join(str(exc.problem or exc.context or "invalid YAML").split())
        line = (mark.line + 1) if mark else 1
        if mark and mark.index >= len(text.rstrip()):  # ran off the end: the last line with text
            line = text.rstrip().count("\n") + 1
        report(Problem(rel, line, f"invalid YAML: {reason}"))
        return
    except yaml.YAMLError as exc:
        report(Problem(rel, 1, f"invalid YAML: {' '.join(str(exc).split())}"))
        return
    if not isinstance(data, dict):
        report(Problem(rel, 1, "an expertise file must be a mapping of keys"))
        return
    domain = data.get("domain")
    if not isinstance(domain, str) or not domain.strip():
        report(Problem(rel, _line_of(text, "domain"), "domain: required, a non-empty string"))
    elif domain != path.stem:
        report(
            Problem(
                rel, _line_of(text, "domain"), f"domain {domain!r} does not match the file name"
            )
        )
    if "overview" in data and not isinstance(data["overview"], (str, type(None))):
        report(Problem(rel, _line_of(text, "overview"), "overview: must be text"))
    for key in LIST_KEYS:
        if key in data and not isinstance(data[key], (list, type(None))):
            report(Problem(rel, _line_of(text, key), f"{key}: must be a list"))


def check_expertise(
    layout: Layout, sanitizer: Sanitizer, report: Report, *, max_lines: int = 1000
) -> int:
    """Check every `.expertise/*.yaml` (and .yml); the number of files read."""
    if not layout.expertise.is_dir():
        return 0
    files = []
    for path in sorted(layout.expertise.iterdir()):
        if path.suffix not in (".yaml", ".yml"):
            continue
        if layout.leaves_repository(path):
            report(Problem(layout.rel(path), 0, OUTSIDE))
        elif path.is_file():
            files.append(path)
    for path in files:
        rel, kind = redact_path(layout.rel(path), sanitizer)  # never print a secret
        if kind is not None:
            report(Problem(rel, 0, NAME_IS_SECRET))
        _expertise(path, rel, sanitizer, report, max_lines)
    return len(files)
