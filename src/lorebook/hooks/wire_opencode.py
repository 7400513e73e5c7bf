"""`lore hooks install|uninstall|status opencode`: lorebook's OpenCode plugin and its MCP entry.

OpenCode has no command hooks: it loads every `.js`/`.ts` file in `<repo>/.opencode/plugins/`
(project) and `$XDG_CONFIG_HOME/opencode/plugins/` (user) and calls the functions it exports.
lorebook's plugin, `lorebook.js` (its text: `opencode_plugin.js` next to this module), pipes
each hook into `lore hook opencode <name>` and injects the brief and the prompt's lessons
through `experimental.chat.system.transform`. A project plugin finds the committed launcher
from its own path; a user plugin carries this machine's command (its one `const LORE` line).

MCP: `"mcp": {"lore": {"type": "local", "command": [...], "enabled": true}}` merged into
`<repo>/opencode.json` or `$XDG_CONFIG_HOME/opencode/opencode.json`. OpenCode reads that file
as JSON with comments; a file that has comments is refused (rewriting it would lose them).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .. import LoreError
from . import launcher as L
from . import wirekit as K
from .clients import OPENCODE_EVENTS
from .wiring import Edit, Wired

PLUGIN = Path("lorebook.js")
MARK = "// lorebook plugin for OpenCode"  # the first line of the plugin: how it knows its own
LORE_LINE = "const LORE = null;"
SERVER = "lore"
# project MCP command: the launcher of the repository OpenCode runs in (found walking up from
# its working directory: a committed file holds no machine's path)
WALK_UP = (
    'd=$PWD; until [ -f "$d/.lore/bin/lore" ] || [ -z "$d" ]; do d=${d%/*}; done;'
    ' exec sh "$d/.lore/bin/lore" mcp'
)


def config_home(home: Path, env: Mapping[str, str] | None = None) -> Path:
    """OpenCode's user folder: $XDG_CONFIG_HOME/opencode, else ~/.config/opencode."""
    given = (os.environ if env is None else env).get("XDG_CONFIG_HOME", "")
    return (Path(given) if os.path.isabs(given) else home / ".config") / "opencode"


def plugin_text(scope: str, machine: list[str]) -> str:
    """The plugin as install writes it for `scope`."""
    text = (Path(__file__).parent / "opencode_plugin.js").read_text(encoding="utf-8")
    if scope == "user":
        return text.replace(LORE_LINE, f"const LORE = {json.dumps(machine)};", 1)
    return text


def is_ours(text: str | None) -> bool:
    return (text or "").startswith(MARK)


def _places(scope: str, root: Path, home: Path) -> tuple[Path, Path]:
    """(the plugin, opencode.json)."""
    if scope == "project":
        return root / ".opencode" / "plugins" / PLUGIN, root / "opencode.json"
    folder = config_home(home)
    return folder / "plugins" / PLUGIN, folder / "opencode.json"


def server_entry(scope: str, machine: list[str]) -> dict[str, Any]:
    command = ["sh", "-c", WALK_UP] if scope == "project" else [*machine, "mcp"]
    return {"type": "local", "command": command, "enabled": True}


def is_our_server(entry: Any) -> bool:
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), list):
        return False
    words = [w for w in entry["command"] if isinstance(w, str)]
    if not words or not (words[-1] == "mcp" or words[-1].endswith(" mcp")):
        return False
    return K.is_lore(words) or any(str(L.LAUNCHER) in w for w in words)


def _mcp_edits(action: str, scope: str, path: Path, machine: list[str]) -> list[Edit]:
    entry = server_entry(scope, machine)
    return K.server_edits(action, path, entry, key="mcp", ours=is_our_server, jsonc=True)


def plan(action: str, scope: str, root: Path, home: Path, machine: list[str]) -> list[Edit]:
    """Edits for action "install" or "uninstall" (scope "project" or "user"); reads files,
    writes nothing; a broken file raises LoreError naming it and nothing is written."""
    if action not in ("install", "uninstall") or scope not in ("project", "user"):
        raise LoreError("opencode: unknown action or scope: {} {}", action, scope)
    plugin, config = _places(scope, root, home)
    before = K.read(plugin)
    edits = []
    if action == "install":
        if before is not None and not is_ours(before):
            raise LoreError(
                "{}: a plugin of your own has this name; lorebook does not overwrite it:"
                " rename it, then run again",
                plugin,
            )
        after = plugin_text(scope, machine)
        if before != after:
            edits.append(Edit(plugin, before, after))
    elif is_ours(before):
        edits.append(Edit(plugin, before, None))
    edits += _mcp_edits(action, scope, config, machine)
    return edits  # the project launcher: admin.py adds and removes it for every client


def status(scope: str, root: Path, home: Path) -> Wired:
    """The hooks lorebook's plugin serves (all or none), whether the MCP server is
    configured, and what is wrong (an outdated plugin, a broken opencode.json)."""
    plugin, config = _places(scope, root, home)
    hooks: list[str] = []
    files: list[Path] = []
    problems: list[str] = []
    try:
        text = K.read(plugin)
    except LoreError as exc:
        problems.append(str(exc))
        text = None
    if is_ours(text):
        hooks, files = list(OPENCODE_EVENTS), [plugin]
        if text is not None and _unpinned(text) != plugin_text("project", []):
            problems.append(f"{plugin}: written by another lorebook version; install again")
        if scope == "project" and not (root / L.LAUNCHER).is_file():
            problems.append(f"{root / L.LAUNCHER}: missing; the plugin runs it: install again")
    mcp = False
    try:
        found = K.load_json(config, K.read(config), jsonc=True)
        servers = found.get("mcp")
        mcp = isinstance(servers, dict) and is_our_server(servers.get(SERVER))
    except LoreError as exc:
        problems.append(str(exc))
    if mcp:
        files.append(config)
    return Wired("opencode", scope, hooks, mcp, files, problems)


def _unpinned(text: str) -> str:
    """A plugin's text with a user install's command line put back to the template's."""
    template = plugin_text("project", [])
    pinned = next((ln for ln in template.splitlines(True) if ln.startswith(LORE_LINE)), "")
    lines = [pinned if ln.startswith("const LORE = ") else ln for ln in text.splitlines(True)]
    return "".join(lines)
