"""The warning text for a line a reader skipped (pure; the CLI prints it on stderr).

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs milliseconds on the append path; mypy still sees it
if TYPE_CHECKING:
    from ..problems import Problem


def skipped(problem: Problem) -> str:
    """`skipped <file>:<line>: <reason>`, a file named like a secret redacted part by part."""
    from ..redact.identifiers import redact_path

    where = redact_path(problem.path)[0]
    return f"skipped {str(problem).replace(problem.path, where, 1)}"
