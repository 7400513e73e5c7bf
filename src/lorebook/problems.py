"""What readers skip and why: `Problem` (a file and line with a reason) and where it goes.

Every reader (the action log, learnings, expertise, the index) reports what it could not use as
a `Problem` to an `OnProblem` sink instead of failing or staying silent; `ignore` is the sink
for callers that do not report.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """A line (or file) the reader skipped, with the reason; `line` 0 means the whole file."""

    path: str
    line: int
    reason: str

    def __str__(self) -> str:
        return (
            f"{self.path}:{self.line}: {self.reason}"
            if self.line
            else f"{self.path}: {self.reason}"
        )


OnProblem = Callable[[Problem], None]


def ignore(problem: Problem) -> None:
    """Default sink for callers that do not report problems."""
