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
    before, mcp_before = K.read(hooks_path), K.read(mcp_path)
    config, servers = K.load_json(hooks_path, before), K.load_json(mcp_path, mcp_before)
    if action == "install":
        new = K.with_flat(config, hooks_path, handlers(scope, machine), ours)
        new_servers = K.with_server(servers, mcp_path, K.server_entry(scope, machine, VARIABLE))
    else:
        new = K.without_flat(config, hooks_path, ours)
        new_servers = K.without_server(servers, mcp_path)
    return K.json_edit(hooks_path, before, new) + K.json_edit(mcp_path, mcp_before, new_servers)


def status(scope: str, root: Path, home: Path) -> Wired:
    hooks_path, mcp_path = files(scope, root, home)
    problems: list[str] = []
    hooks = K.wired_flat(K.look(hooks_path, problems), ours)
    mcp = K.has_server(K.look(mcp_path, problems))
    return K.wired(NAME, scope, hooks, mcp, [hooks_path, mcp_path], problems)
