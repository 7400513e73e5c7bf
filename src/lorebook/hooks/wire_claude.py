"""Claude Code: hooks in `.claude/settings.json` (project) or `~/.claude/settings.json` (user),
the MCP server in the project's `.mcp.json` (a user registers it with `claude mcp add`).

Project hooks and the `.mcp.json` entry run the committed launcher through `sh -c`, found from
`$CLAUDE_PROJECT_DIR` (Claude Code sets it for hooks and servers) or the working directory
(`wirekit.project_script`). They once ran `sh "$CLAUDE_PROJECT_DIR"/.lore/bin/lore`, which
exits 2 in a checkout without the launcher: that blocks the prompt in Claude Code.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from . import wirekit as K
from .wiring import Edit, Wired

NAME = "claude"
VARIABLE = "CLAUDE_PROJECT_DIR"
# (Claude Code event, `lore hook` event, matcher or None, a context hook). No `async`: Claude
# Code cancels async hooks when a headless session ends, losing the last captures; the capture
# hooks instead return at once and write from a detached child (see failopen.DETACHED).
EVENTS: list[tuple[str, str, str | None, bool]] = [
    ("SessionStart", "session-start", "startup|resume|clear|compact", True),
    ("UserPromptSubmit", "user-prompt-submit", None, True),
    ("PostToolUse", "post-tool-use", "*", False),
    ("PostToolUseFailure", "post-tool-use-failure", "*", False),
    ("SubagentStart", "subagent-start", None, False),
    ("SubagentStop", "subagent-stop", None, False),
    ("PreCompact", "pre-compact", None, False),
    ("Stop", "stop", None, False),
    ("SessionEnd", "session-end", None, False),
]
OUR_EVENTS = {ours for _, ours, _, _ in EVENTS}


def ours(handler: Any) -> bool:
    return isinstance(handler, dict) and K.runs_hook(handler.get("command"), NAME)


def files(scope: str, root: Path, home: Path) -> tuple[Path, Path | None]:
    """(settings.json, .mcp.json or None) for the scope."""
    if scope == "user":
        return home / ".claude" / "settings.json", None
    return root / ".claude" / "settings.json", root / ".mcp.json"


def groups(scope: str, root: Path, machine: list[str]) -> list[tuple[str, dict[str, Any]]]:
    prefix = K.hook_prefix(scope, machine, VARIABLE)
    context = K.context_seconds(root)
    found = []
    for event, normalised, matcher, gives_context in EVENTS:
        handler = {
            "type": "command",
            "command": f"{prefix} hook {normalised}",
            "timeout": context if gives_context else K.CAPTURE_SECONDS,
        }
        group: dict[str, Any] = {"matcher": matcher} if matcher else {}
        group["hooks"] = [handler]
        found.append((event, group))
    return found


def plan(action: str, scope: str, root: Path, home: Path, machine: list[str]) -> list[Edit]:
    settings_path, mcp_path = files(scope, root, home)
    before = K.read(settings_path)  # every file is read (and refused) before any is changed
    settings = K.load_json(settings_path, before)
    if action == "install":
        new = K.with_groups(settings, settings_path, groups(scope, root, machine), ours)
    else:
        new = K.without_groups(settings, settings_path, ours)
    edits = K.json_edit(settings_path, before, new)
    if mcp_path is not None:
        text = K.read(mcp_path)
        config = K.load_json(mcp_path, text)
        if action == "install":
            entry = K.server_entry(scope, machine, VARIABLE)
            servers = K.with_server(config, mcp_path, entry)
        else:
            servers = K.without_server(config, mcp_path)
        edits += K.json_edit(mcp_path, text, servers)
    return edits


def status(scope: str, root: Path, home: Path) -> Wired:
    settings_path, mcp_path = files(scope, root, home)
    problems: list[str] = []
    settings = K.look(settings_path, problems)
    hooks = K.wired_groups(settings, ours)
    if hooks and settings.get("disableAllHooks") is True:
        problems.append(f"{settings_path}: disableAllHooks is true: no hook runs")
    mcp = mcp_path is not None and K.has_server(K.look(mcp_path, problems))
    paths = [settings_path] + ([mcp_path] if mcp_path else [])
    return K.wired(NAME, scope, hooks, mcp, paths, problems)


def note(scope: str, machine: list[str]) -> str | None:
    """What install says after writing (Claude Code keeps user MCP servers in ~/.claude.json,
    which its own command edits)."""
    if scope == "user":
        command = shlex.join([*machine, "mcp"])
        return f"MCP server: run `claude mcp add --scope user {K.SERVER} -- {command}`"
    return None
