"""What readers skip and why: `Problem` (a file and line with a reason) and where it goes.

Every reader (the action log, learnings, expertise, the index) reports what it could not use as
a `Problem` to an `OnProblem` sink instead of failing or staying silent; `ignore` is the sink
for callers that do not report.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

from collections.abc import Callable

TYPE_CHECKING = False  # typing costs milliseconds on cold paths; mypy still sees it
if TYPE_CHECKING:
    from typing import NamedTuple

    from .contracts.records import Problem as ProblemData
else:
    from .tuples import NamedTuple


class Problem(NamedTuple):
    """A line (or file) the reader skipped, with the reason; `line` 0 means the whole file.

    A named tuple, not a dataclass: every reader imports it, and `dataclasses` pulls `inspect`
    and `ast` (~10 ms) into cold paths such as `lore resume`."""

    path: str
    line: int
    reason: str

    def to_dict(self) -> ProblemData:
        return {"path": self.path, "line": self.line, "reason": self.reason}

    def __str__(self) -> str:
        return (
            f"{self.path}:{self.line}: {self.reason}"
            if self.line
            else f"{self.path}: {self.reason}"
        )


OnProblem = Callable[[Problem], None]


def ignore(problem: Problem) -> None:
    """Default sink for callers that do not report problems."""
