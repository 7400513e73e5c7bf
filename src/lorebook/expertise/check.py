"""`lore check` for `.expertise/*.yaml`: schema, size, domain equal to the file name, secrets.

Findings are `file:line: reason`, like the action-log and learnings checks.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from ..log.check import NAME_IS_SECRET
from ..paths import OUTSIDE, Layout
from ..problems import OnProblem, Problem
from ..redact.identifiers import redact_path
from ..redact.lines import line_of, secret_lines
from ..redact.sanitize import Sanitizer
from .schema import LIST_KEYS


class _NoAliasLoader(yaml.SafeLoader):
    """Safe loading without aliases (an alias bomb is refused, not expanded)."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()  # type: ignore[no-untyped-call]
            raise yaml.MarkedYAMLError(
                None, None, "YAML aliases are not allowed here", event.start_mark
            )
        return super().compose_node(parent, index)


def _expertise(
    path: Path, rel: str, sanitizer: Sanitizer, report: OnProblem, max_lines: int
) -> None:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        report(Problem(rel, 1, f"cannot read: {exc}"))
        return
    secret_lines(rel, text, sanitizer, report, skip=False)
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
        report(Problem(rel, line_of(text, "domain"), "domain: required, a non-empty string"))
    elif domain != path.stem:
        report(
            Problem(rel, line_of(text, "domain"), f"domain {domain!r} does not match the file name")
        )
    if "overview" in data and not isinstance(data["overview"], (str, type(None))):
        report(Problem(rel, line_of(text, "overview"), "overview: must be text"))
    for key in LIST_KEYS:
        if key in data and not isinstance(data[key], (list, type(None))):
            report(Problem(rel, line_of(text, key), f"{key}: must be a list"))


def check_expertise(
    layout: Layout,
    sanitizer: Sanitizer,
    report: OnProblem,
    *,
    max_lines: int = 1000,
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
