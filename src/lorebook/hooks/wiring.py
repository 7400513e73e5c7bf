"""What an installer changes, as data: one `Edit` per file, so `--dry-run` prints exactly
what `install` writes and `uninstall` removes exactly what was added.

Each client's installer (`wire_<client>.py`, dispatched by `admin.py`) answers `plan(...)`
with a list of edits and writes nothing itself; `admin.py` shows or applies them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple


class Edit(NamedTuple):
    """One file's change: its text before (None: absent) and after (None: remove it)."""

    path: Path
    before: str | None
    after: str | None
    executable: bool = False  # a hook file the client runs directly (Cline)


class Wired(NamedTuple):
    """What `lore hooks status` says of one client in one scope."""

    client: str
    scope: str
    hooks: list[str]  # the client's own event names wired to `lore hook`
    mcp: bool  # lorebook's MCP server registered in the client's config
    files: list[Path]  # the files that say so
    problems: list[str]  # one line each: a broken file, a command that does not reach lore

    def to_dict(self) -> dict[str, Any]:
        return {
            "client": self.client,
            "scope": self.scope,
            "hooks": self.hooks,
            "mcp": self.mcp,
            "files": [str(p) for p in self.files],
            "problems": self.problems,
        }
