"""`lore hooks install|uninstall|status cline`: Cline's hook files and its MCP settings.

Cline (CLI 3.x) runs every file in its hook folders whose name is an event's, with or without
an extension (`PostToolUse`, `PostToolUse.sh`, `posttooluse.py` …), through the interpreter its
`#!` line names, payload JSON on stdin; when several files answer one event, their `context`s
are joined. So lorebook writes one extension-less POSIX-sh file per event and a user's own
`PostToolUse.sh` keeps running beside it; only a user's file with the very same name is in the
way, and install then refuses, naming it (nothing is overwritten, nothing chained).

Folders: `<repo>/.clinerules/hooks/` (project; `<repo>/.cline/hooks/` when `.clinerules` is
Cline's old single rules file) and `~/.cline/hooks/` (user). Project files run the committed
launcher, found from the hook file's own path; user files run this machine's lore.

MCP: Cline keeps one settings file per user, `~/.cline/data/settings/cline_mcp_settings.json`
(no per-project file), so the server is registered at user scope only.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from .. import LoreError
from . import launcher as L
from . import wirekit as K
from .clients import CLINE_EVENTS
from .wiring import Edit, Wired

HEADER = "# lorebook hook for Cline"  # line 2 of every file lorebook writes: how it knows its own
PROJECT_FOLDERS = (Path(".clinerules") / "hooks", Path(".cline") / "hooks")
USER_FOLDER = Path(".cline") / "hooks"
MCP_FILE = Path(".cline") / "data" / "settings" / "cline_mcp_settings.json"
SERVER = "lore"


def script(event: str, scope: str, machine: list[str]) -> str:
    """The hook file for `event`: POSIX sh, stdin passed through, exit 0 when lore is gone."""
    head = (
        f"#!/bin/sh\n{HEADER}, written by `lore hooks install cline"
        f"{' --scope user' if scope == 'user' else ''}`; `lore hooks uninstall cline` removes it.\n"
        f"# Cline's {event} payload (JSON on stdin) goes to `lore hook cline {event}`;"
        " it never blocks Cline.\n"
    )
    if scope == "project":
        return head + (
            "case $0 in */*) here=${0%/*} ;; *) here=. ;; esac\n"
            "launcher=$here/../../.lore/bin/lore\n"
            'if [ ! -f "$launcher" ]; then cat >/dev/null 2>&1; exit 0; fi\n'
            f'exec sh "$launcher" hook cline {event}\n'
        )
    program = shlex.quote(machine[0])
    return head + (
        f"if [ ! -x {program} ]; then cat >/dev/null 2>&1; exit 0; fi\n"
        f"exec {shlex.join([*machine, 'hook', 'cline', event])}\n"
    )


def is_ours(text: str | None) -> bool:
    lines = (text or "").splitlines()
    return len(lines) > 1 and lines[1].startswith(HEADER)


def _folders(scope: str, root: Path, home: Path) -> list[Path]:
    if scope == "user":
        return [home / USER_FOLDER]
    return [root / folder for folder in PROJECT_FOLDERS]


def _folder(root: Path) -> Path:
    """Where a project install writes: .clinerules/hooks, unless .clinerules is a file."""
    rules = root / ".clinerules"
    if rules.is_file() and not rules.is_symlink():
        return root / PROJECT_FOLDERS[1]
    return root / PROJECT_FOLDERS[0]


def _hook_edits(action: str, scope: str, root: Path, home: Path, machine: list[str]) -> list[Edit]:
    edits = []
    if action == "install":
        folder = _folder(root) if scope == "project" else home / USER_FOLDER
        for event in CLINE_EVENTS:
            path = folder / event
            before = K.read(path)
            if before is not None and not is_ours(before):
                raise LoreError(
                    "{}: a hook of your own is already there; lorebook does not overwrite it:"
                    " rename it to {}.sh (Cline runs both), then run again",
                    path,
                    event,
                )
            after = script(event, scope, machine)
            if before != after:
                edits.append(Edit(path, before, after, executable=True))
        return edits
    for folder in _folders(scope, root, home):
        if not folder.is_dir():
            continue
        for event in CLINE_EVENTS:
            path = folder / event
            before = K.read(path)
            if is_ours(before):
                edits.append(Edit(path, before, None))
    return edits


def _server(machine: list[str]) -> dict[str, Any]:
    return {
        "type": "stdio",
        "command": machine[0],
        "args": [*machine[1:], "mcp"],
        "disabled": False,
    }


def _mcp_edits(action: str, home: Path, machine: list[str]) -> list[Edit]:
    return K.server_edits(action, home / MCP_FILE, _server(machine))


def plan(action: str, scope: str, root: Path, home: Path, machine: list[str]) -> list[Edit]:
    """Edits for action "install" or "uninstall" (scope "project" or "user"); reads files,
    writes nothing; a broken file raises LoreError naming it and nothing is written."""
    if action not in ("install", "uninstall") or scope not in ("project", "user"):
        raise LoreError("cline: unknown action or scope: {} {}", action, scope)
    edits = _hook_edits(action, scope, root, home, machine)
    if scope == "user":
        edits += _mcp_edits(action, home, machine)
    return edits  # the project launcher: admin.py adds and removes it for every client


def status(scope: str, root: Path, home: Path) -> Wired:
    """Which events run lorebook's hook files, whether the MCP server is registered (user
    scope: Cline has no project MCP file), and what is wrong."""
    hooks, files, problems = [], [], []
    for folder in _folders(scope, root, home):
        if not folder.is_dir():
            continue
        for event in CLINE_EVENTS:
            path = folder / event
            try:
                text = K.read(path)
            except LoreError as exc:
                problems.append(str(exc))
                continue
            if is_ours(text):
                hooks.append(event)
                files.append(path)
                if scope == "project" and text != script(event, scope, []):
                    problems.append(f"{path}: written by another lorebook version; install again")
    if scope == "project" and hooks and not (root / L.LAUNCHER).is_file():
        problems.append(
            f"{root / L.LAUNCHER}: missing; the hook files run it: run `lore hooks install cline`"
        )
    mcp = False
    if scope == "user":
        path = home / MCP_FILE
        try:
            config = K.load_json(path, K.read(path))
        except LoreError as exc:
            problems.append(str(exc))
            config = {}
        if "mcpServers" in config and not isinstance(config["mcpServers"], dict):
            problems.append(f'{path}: "mcpServers" must be a JSON object')
        mcp = K.has_server(config)
        if mcp:
            files.append(path)
    return Wired("cline", scope, hooks, mcp, files, problems)
