"""`lore hooks install|uninstall|status`: wire lorebook into Claude Code's settings.

The user's files are merged, never rewritten wholesale: our handlers are recognised by their
command (`… lore hook <event>`), so installing twice changes nothing, everything else already
there is kept, and uninstalling removes exactly our entries. A file that is not valid JSON is
refused untouched.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from .. import LoreError

# (Claude Code event, `lore hook` event, matcher or None, handler fields). No `async`: Claude
# Code cancels async hooks when a headless session ends, losing the last captures; the capture
# hooks instead return at once and write from a detached child (see failopen.DETACHED).
CAPTURE = {"timeout": 5}
EVENTS: list[tuple[str, str, str | None, dict[str, Any]]] = [
    ("SessionStart", "session-start", "startup|resume|clear|compact", {"timeout": 10}),
    ("UserPromptSubmit", "user-prompt-submit", None, {"timeout": 10}),
    ("PostToolUse", "post-tool-use", "*", CAPTURE),
    ("PostToolUseFailure", "post-tool-use-failure", "*", CAPTURE),
    ("SubagentStart", "subagent-start", None, CAPTURE),
    ("SubagentStop", "subagent-stop", None, CAPTURE),
    ("PreCompact", "pre-compact", None, CAPTURE),
    ("Stop", "stop", None, CAPTURE),
    ("SessionEnd", "session-end", None, CAPTURE),
]
OUR_EVENTS = {ours for _, ours, _, _ in EVENTS}
SERVER = "lore"


# -- recognising and building our entries ----------------------------------------------------
def lore_command(scope: str) -> list[str]:
    """How Claude Code should run `lore`: the bare name when PATH finds this very install
    (portable in a committed project file), else its absolute path."""
    argv0 = Path(sys.argv[0])
    if argv0.name in ("lore", "lore.exe") and argv0.exists():
        exe = str(argv0.absolute())
        found = shutil.which("lore")
        if scope == "project" and found and Path(found).absolute() == Path(exe):
            return ["lore"]
        return [exe]
    return [sys.executable, "-m", "lorebook"]


def is_lore(words: list[str]) -> bool:
    """True for a command that runs lorebook: `lore …`, `/x/lore …`, `python -m lorebook …`."""
    for i, word in enumerate(words):
        if os.path.basename(word) in ("lore", "lore.exe"):
            return True
        if word == "-m" and words[i + 1 : i + 2] == ["lorebook"]:
            return True
    return False


def is_ours(handler: Any) -> bool:
    if not isinstance(handler, dict) or not isinstance(handler.get("command"), str):
        return False
    try:
        words = shlex.split(handler["command"])
    except ValueError:
        return False
    return len(words) >= 3 and words[-2] == "hook" and words[-1] in OUR_EVENTS and is_lore(words)


def _strip(groups: list[Any]) -> tuple[list[Any], bool]:
    """The event's groups without our handlers (a group left empty by that goes too)."""
    kept, removed = [], False
    for group in groups:
        handlers = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(handlers, list) or not any(is_ours(h) for h in handlers):
            kept.append(group)
            continue
        removed = True
        rest = [h for h in handlers if not is_ours(h)]
        if rest:
            kept.append({**group, "hooks": rest})
    return kept, removed


def _hooks_of(claude: dict[str, Any], path: Path) -> dict[str, Any]:
    hooks = claude.get("hooks", {})
    if not isinstance(hooks, dict):
        raise LoreError('{}: "hooks" must be a JSON object; fix it, then run again', path)
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            raise LoreError(
                "{}: hooks.{} must be a JSON array; fix it, then run again", path, event
            )
    return hooks


def with_hooks(claude: dict[str, Any], path: Path, prefix: str) -> dict[str, Any]:
    """Claude Code settings `claude` with our handlers, once each, after the user's own;
    `prefix` is the shell text that runs lore (`shlex.join` of a command, or the launcher's)."""
    out: dict[str, Any] = json.loads(json.dumps(claude))
    hooks = _hooks_of(out, path)
    for event, ours, matcher, fields in EVENTS:
        groups, _ = _strip(hooks.get(event, []))
        handler = {"type": "command", "command": f"{prefix} hook {ours}", **fields}
        group: dict[str, Any] = {"matcher": matcher} if matcher else {}
        group["hooks"] = [handler]
        hooks[event] = [*groups, group]
    out["hooks"] = hooks
    return out


def without_hooks(claude: dict[str, Any], path: Path) -> dict[str, Any]:
    """Claude Code settings `claude` without our handlers (an event or `hooks` left empty goes
    too)."""
    out: dict[str, Any] = json.loads(json.dumps(claude))
    hooks = _hooks_of(out, path)
    for event in list(hooks):
        groups, removed = _strip(hooks[event])
        if removed and not groups:
            del hooks[event]
        elif removed:
            hooks[event] = groups
    if "hooks" in out and not hooks and claude.get("hooks"):
        del out["hooks"]
    return out


def server_entry(command: list[str]) -> dict[str, Any]:
    return {"command": command[0], "args": [*command[1:], "mcp"]}


def is_our_server(entry: Any) -> bool:
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        return False
    args = entry.get("args") or []
    words = [entry["command"], *(a for a in args if isinstance(a, str))]
    return bool(args) and words[-1] == "mcp" and is_lore(words)


def _servers(mcp_json: dict[str, Any], path: Path) -> dict[str, Any]:
    servers = mcp_json.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise LoreError('{}: "mcpServers" must be a JSON object; fix it, then run again', path)
    return servers


def with_server(mcp_json: dict[str, Any], path: Path, command: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(json.dumps(mcp_json))
    servers = _servers(out, path)
    if SERVER in servers and not is_our_server(servers[SERVER]):
        raise LoreError(
            "{}: an MCP server named {!r} is already registered and is not lorebook's;"
            " rename it, then run again",
            path,
            SERVER,
        )
    servers[SERVER] = server_entry(command)
    out["mcpServers"] = servers
    return out


def without_server(mcp_json: dict[str, Any], path: Path) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(json.dumps(mcp_json))
    servers = _servers(out, path)
    if is_our_server(servers.get(SERVER)):
        del servers[SERVER]
        if not servers:
            del out["mcpServers"]
    return out


# -- files -----------------------------------------------------------------------------------
def read_json(path: Path) -> dict[str, Any] | None:
    """The file's JSON object (None: no file); LoreError naming the line when it is invalid."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise LoreError("{}: cannot be read ({}); nothing was changed", path, exc) from None
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LoreError(
            "{}:{}: invalid JSON ({}); fix it, then run again (nothing was changed)",
            path,
            exc.lineno,
            exc.msg,
        ) from None
    if not isinstance(value, dict):
        raise LoreError("{}: must hold a JSON object; fix it, then run again", path)
    return value


def render(value: dict[str, Any] | None) -> str:
    return "" if value is None else json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def write(path: Path, value: dict[str, Any] | None) -> None:
    """Replace the file atomically (None or `{}` left by an uninstall: remove it)."""
    if not value:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(render(value))
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
