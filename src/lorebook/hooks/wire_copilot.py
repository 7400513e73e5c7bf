"""GitHub Copilot CLI: hooks in its own format in `<repo>/.github/hooks/lorebook.json`
(project) or `$COPILOT_HOME/hooks/lorebook.json` (user; `~/.copilot` by default); the MCP
server in `<repo>/.github/mcp.json` (project; Copilot CLI's per-repository MCP file) or
`$COPILOT_HOME/mcp-config.json` (user).

Copilot runs the `bash` command with `COPILOT_PROJECT_DIR` (and `CLAUDE_PROJECT_DIR`) set; the
project command starts there (else the working directory) and walks up to the launcher.
Repository hooks fire only with `--trust-folder` or `COPILOT_ALLOW_ALL=true` (docs/hooks.md).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from . import wirekit as K
from .clients import CLIENTS
from .wiring import Edit, Wired

NAME = "copilot"
VARIABLE = "COPILOT_PROJECT_DIR"
CONTEXT = {"session-start", "user-prompt-submit"}


def ours(handler: Any) -> bool:
    return isinstance(handler, dict) and K.runs_hook(handler.get("bash"), NAME)


def files(scope: str, root: Path, home: Path) -> tuple[Path, Path]:
    if scope == "user":
        given = os.environ.get("COPILOT_HOME")
        base = Path(given) if given else home / ".copilot"
        return base / "hooks" / "lorebook.json", base / "mcp-config.json"
    return root / ".github" / "hooks" / "lorebook.json", root / ".github" / "mcp.json"


def handlers(scope: str, root: Path, machine: list[str]) -> list[tuple[str, K.Handler]]:
    prefix = K.hook_prefix(scope, machine, VARIABLE)
    context = K.context_seconds(root)
    found: list[tuple[str, K.Handler]] = []
    for event, normalised in CLIENTS[NAME].events.items():
        seconds = context if normalised in CONTEXT else K.CAPTURE_SECONDS
        found.append((event, {"type": "command", "bash": f"{prefix} hook {NAME} {event}",
                              "timeoutSec": seconds}))  # fmt: skip
    return found


def plan(action: str, scope: str, root: Path, home: Path, machine: list[str]) -> list[Edit]:
    hooks_path, mcp_path = files(scope, root, home)
    entry = {"type": "local", **K.server_entry(scope, machine, VARIABLE), "tools": ["*"]}
    given = handlers(scope, root, machine) if action == "install" else None
    return K.flat_edits(action, hooks_path, mcp_path, given, ours, entry)


def status(scope: str, root: Path, home: Path) -> Wired:
    return K.flat_status(NAME, scope, *files(scope, root, home), ours)
