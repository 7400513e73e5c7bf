"""Secrets in a file's lines, as `file:line` problems (`lore check`, every kind of file)."""

from __future__ import annotations

import re

from ..problems import OnProblem, Problem
from .sanitize import Sanitizer

# front-matter lines holding validated identifiers, not free text
_STRUCTURAL_LINE = re.compile(r"^(id|created|checksum|status|kind|severity)\s*:")


def line_of(text: str, key: str) -> int:
    """The 1-based line where `key:` starts a line (1 if absent)."""
    match = re.search(rf"^{re.escape(key)}\s*:", text, re.MULTILINE)
    return text.count("\n", 0, match.start()) + 1 if match else 1


def secret_lines(rel: str, text: str, sanitizer: Sanitizer, report: OnProblem, skip: bool) -> None:
    """Report every line the sanitizer finds a secret in (`skip`: structural front-matter lines)."""
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or (skip and _STRUCTURAL_LINE.match(line)):
            continue
        for finding in sanitizer.findings(line):
            report(Problem(rel, number, f"possible secret ({finding.kind})"))
