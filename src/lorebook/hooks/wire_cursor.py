"""Cursor: hooks in `<repo>/.cursor/hooks.json` (project) or `~/.cursor/hooks.json` (user) as
`{"version": 1, "hooks": {event: [{"command": …}]}}`, the MCP server in `mcp.json` beside it.

Cursor cannot be installed here (no registry package), so these files are tested, not a real
Cursor run. Its newer `postToolUse` covers shell, file and MCP calls: the older narrower
events (`afterShellExecution`, `afterFileEdit`, `afterMCPExecution`) are left out so a call is
not reported twice. The project command starts at `CURSOR_PROJECT_DIR` (else the working
directory) and walks up to the launcher.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from . import wirekit as K
from .clients import CLIENTS
from .wiring import Edit, Wired

NAME = "cursor"
VARIABLE = "CURSOR_PROJECT_DIR"
NARROW = {"afterShellExecution", "afterFileEdit", "afterMCPExecution"}


def ours(handler: Any) -> bool:
    return isinstance(handler, dict) and K.runs_hook(handler.get("command"), NAME)


def files(scope: str, root: Path, home: Path) -> tuple[Path, Path]:
    base = (home if scope == "user" else root) / ".cursor"
    return base / "hooks.json", base / "mcp.json"


def handlers(scope: str, machine: list[str]) -> list[tuple[str, K.Handler]]:
    prefix = K.hook_prefix(scope, machine, VARIABLE)
    return [
        (event, {"command": f"{prefix} hook {NAME} {event}"})
        for event in CLIENTS[NAME].events
        if event not in NARROW
    ]


def plan(action: str, scope: str, root: Path, home: Path, machine: list[str]) -> list[Edit]:
    hooks_path, mcp_path = files(scope, root, home)
    entry = K.server_entry(scope, machine, VARIABLE)
    given = handlers(scope, machine) if action == "install" else None
    return K.flat_edits(action, hooks_path, mcp_path, given, ours, entry)


def status(scope: str, root: Path, home: Path) -> Wired:
    return K.flat_status(NAME, scope, *files(scope, root, home), ours)
