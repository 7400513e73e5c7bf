"""Google Gemini CLI: hooks and the MCP server in `settings.json`, `<repo>/.gemini/` (project)
or `$GEMINI_CLI_HOME/.gemini/` (user; the home directory by default).

Gemini runs a hook's command in a shell in the session's directory and sets
`GEMINI_PROJECT_DIR` (and `CLAUDE_PROJECT_DIR`) to it; before that it replaces a bare
`$GEMINI_PROJECT_DIR` or `$CLAUDE_PROJECT_DIR` in the command text with the quoted directory
(packages/core/src/hooks/hookRunner.ts), and when it loads settings it replaces `$VAR` and
`${VAR}` naming a set variable. So the project command names the directory only as
`${GEMINI_PROJECT_DIR:-$PWD}`, which neither substitution touches and `sh` expands. Project
hooks run only in a trusted folder (docs/hooks.md). Timeouts are in milliseconds.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from . import wirekit as K
from .clients import CLIENTS
from .wiring import Edit, Wired

NAME = "gemini"
VARIABLE = "GEMINI_PROJECT_DIR"
CONTEXT = {"session-start", "user-prompt-submit"}


def ours(handler: Any) -> bool:
    return isinstance(handler, dict) and K.runs_hook(handler.get("command"), NAME)


def settings_path(scope: str, root: Path, home: Path) -> Path:
    if scope == "user":
        given = os.environ.get("GEMINI_CLI_HOME")
        return (Path(given) if given else home) / ".gemini" / "settings.json"
    return root / ".gemini" / "settings.json"


def groups(scope: str, root: Path, machine: list[str]) -> list[tuple[str, dict[str, Any]]]:
    prefix = K.hook_prefix(scope, machine, VARIABLE)
    context = K.context_seconds(root)
    found = []
    for event, normalised in CLIENTS[NAME].events.items():
        seconds = context if normalised in CONTEXT else K.CAPTURE_SECONDS
        command = f"{prefix} hook {NAME} {event}"
        handler = {"type": "command", "name": f"lorebook-{normalised}", "command": command,
                   "timeout": seconds * 1000}  # fmt: skip
        found.append((event, {"hooks": [handler]}))
    return found


def plan(action: str, scope: str, root: Path, home: Path, machine: list[str]) -> list[Edit]:
    path = settings_path(scope, root, home)
    before = K.read(path)
    settings = K.load_json(path, before)
    if action == "install":
        theirs = K.without_groups(settings, path, ours).get("hooks")
        new = K.with_groups(settings, path, groups(scope, root, machine), ours)
        switch = K.member(new, "hooksConfig", dict, path)
        if "enabled" not in switch and not theirs:  # hooks of the user's own already run;
            new["hooksConfig"] = {**switch, "enabled": True}  # a user's false stays false
        new = K.with_server(new, path, K.server_entry(scope, machine, VARIABLE))
    else:
        new = K.without_server(K.without_groups(settings, path, ours), path)
        if not new.get("hooks") and new.get("hooksConfig") == {"enabled": True}:
            del new["hooksConfig"]  # nothing left for it to enable
    return K.json_edit(path, before, new)


def status(scope: str, root: Path, home: Path) -> Wired:
    path = settings_path(scope, root, home)
    problems: list[str] = []
    settings = K.look(path, problems)
    hooks = K.wired_groups(settings, ours)
    switch = settings.get("hooksConfig")
    if hooks and isinstance(switch, dict) and switch.get("enabled") is False:
        problems.append(f"{path}: hooksConfig.enabled is false: no hook runs")
    return K.wired(NAME, scope, hooks, K.has_server(settings), [path], problems)
