"""What every client's installer (`wire_<client>.py`) shares: reading a config file (a broken
one refused with its line), recognising lorebook's own entries by their command, merging hook
entries and the MCP server into the user's file without touching the rest, and the command
that reaches lore (the committed launcher for a project, this install for a user).

Our entries are recognised by what they run (`… lore hook CLIENT EVENT`, `… lore mcp`), never
by position, so a rerun replaces them in place of adding copies and uninstall removes exactly
them.
"""

from __future__ import annotations

import json
import math
import re
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import LoreError
from . import launcher as L
from .clients import CLIENTS
from .wiring import Edit, Wired

SERVER = "lore"
CAPTURE_SECONDS = 5  # capture hooks answer at once: they detach (failopen.DETACHED)

Handler = dict[str, Any]
Ours = Callable[[Any], bool]


# -- files -----------------------------------------------------------------------------------
def read(path: Path) -> str | None:
    """The file's text (None: no file)."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise LoreError("{}: cannot be read ({}); nothing was changed", path, exc) from None


def load_json(path: Path, text: str | None, *, jsonc: bool = False) -> dict[str, Any]:
    """The file's JSON object ({} for no file or an empty one); LoreError naming the line.
    `jsonc`: the client reads the file as JSON with comments; one that has them is refused
    (rewriting it would lose them)."""
    if text is None or not text.strip():
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        if jsonc and _parses_as_jsonc(text):
            raise LoreError(
                "{}: holds comments or trailing commas (JSONC), which rewriting it would lose;"
                " remove them or add lorebook's entry by hand (docs/hooks.md), then run again",
                path,
            ) from None
        raise LoreError(
            "{}:{}: invalid JSON ({}); fix it, then run again (nothing was changed)",
            path,
            exc.lineno,
            exc.msg,
        ) from None
    if not isinstance(value, dict):
        raise LoreError("{}: must hold a JSON object; fix it, then run again", path)
    return value


def _parses_as_jsonc(text: str) -> bool:
    """True when `text` is JSON once its // and /* */ comments and trailing commas go."""
    out: list[str] = []
    i, n, quoted = 0, len(text), False
    while i < n:
        c = text[i]
        if quoted:
            out.append(c)
            if c == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 1
            elif c == '"':
                quoted = False
        elif c == '"':
            quoted = True
            out.append(c)
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
            continue
        else:
            out.append(c)
        i += 1
    cleaned = re.sub(r",(\s*[}\]])", r"\1", "".join(out))
    try:
        json.loads(cleaned)
    except ValueError:
        return False
    return True


def dump_json(value: dict[str, Any]) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def json_edit(path: Path, before: str | None, after: dict[str, Any]) -> list[Edit]:
    """The edit turning `before` into `after` (`{}`: remove the file); none when they mean the
    same, so a rerun changes nothing and the user's formatting survives it."""
    if load_json(path, before) == after and (before is not None or not after):
        return []
    return [Edit(path, before, dump_json(after) if after else None)]


def copy(value: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(json.dumps(value))
    return out


def member(config: dict[str, Any], key: str, kind: type, path: Path) -> Any:
    """`config[key]` (a new `kind()` when absent); LoreError when it has another type."""
    value = config.get(key, kind())
    if not isinstance(value, kind):
        what = "object" if kind is dict else "array"
        raise LoreError('{}: "{}" must be a JSON {}; fix it, then run again', path, key, what)
    return value


# -- recognising lorebook -----------------------------------------------------------------------
def is_lore(words: list[str]) -> bool:
    """True for a command that runs lorebook: `lore …`, `/x/lore …`, `python -m lorebook …`,
    the launcher `…/.lore/bin/lore`."""
    for i, word in enumerate(words):
        if word.rsplit("/", 1)[-1] in ("lore", "lore.exe"):
            return True
        if word == "-m" and words[i + 1 : i + 2] == ["lorebook"]:
            return True
    return False


def runs_hook(command: Any, client: str) -> bool:
    """True for our hook command for `client` (`… hook CLIENT EVENT`; Claude's: `… hook EVENT`
    with a normalised event)."""
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    if client == "claude":
        tail, known = words[-2:], set(CLIENTS["claude"].events.values())
        return len(words) >= 3 and tail[0] == "hook" and tail[1] in known and is_lore(words)
    known = set(CLIENTS[client].events)
    return (
        len(words) >= 4
        and words[-3:-1] == ["hook", client]
        and words[-1] in known
        and is_lore(words)
    )


def is_our_server(entry: Any) -> bool:
    """True for an MCP server entry that runs `… lore mcp`."""
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        return False
    args = entry.get("args") or []
    if not isinstance(args, list):
        return False
    words = [entry["command"], *(a for a in args if isinstance(a, str))]
    return bool(args) and words[-1] == "mcp" and is_lore(words)


# -- the command that reaches lore -------------------------------------------------------------
def project_script(variable: str | None) -> str:
    """POSIX sh that runs the committed launcher of the project around the client's project
    directory (`$variable` when the client sets it, else the working directory) or above it:
    the launcher is found walking up, as lore finds its store. With none (a clone that lacks
    it) it says so on stderr and exits 0: exit 2 would block the agent in most clients."""
    start = f'"${{{variable}:-$PWD}}"' if variable else '"$PWD"'
    return (
        f'd={start}; until [ -f "$d/{L.LAUNCHER}" ] || [ -z "$d" ]; do d=${{d%/*}}; done;'
        f' [ -n "$d" ] && exec sh "$d/{L.LAUNCHER}" "$@";'
        f" echo 'lorebook: no {L.LAUNCHER} here or above: run lore hooks install' >&2"
    )


def hook_prefix(scope: str, machine: list[str], variable: str | None) -> str:
    """Shell text before ` hook CLIENT EVENT`: this install's absolute command for a user's
    config, the project's launcher for a committed one."""
    if scope == "user":
        return shlex.join(machine)
    return shlex.join(["sh", "-c", project_script(variable), "lore"])


def server_entry(scope: str, machine: list[str], variable: str | None) -> dict[str, Any]:
    """`{"command", "args"}` that runs `lore mcp` (through the launcher for a project)."""
    if scope == "user":
        return {"command": machine[0], "args": [*machine[1:], "mcp"]}
    return {"command": "sh", "args": ["-c", project_script(variable), "lore", "mcp"]}


def context_seconds(root: Path) -> int:
    """How long a client waits for a context hook: the store's `hooks.budget_seconds` (the
    hook answers within it, failing open) and a margin for the interpreter to start."""
    budget = 1.0
    if (root / ".lore").is_dir():
        from .. import Lorebook

        budget = float(Lorebook.open(root, env={}).config.hooks.budget_seconds)
    return max(10, math.ceil(budget) + 5)


# -- Claude Code's hook format: {"hooks": {Event: [{"matcher"?, "hooks": [handler]}]}} ----------
def strip_groups(groups: list[Any], ours: Ours) -> tuple[list[Any], bool]:
    """The event's groups without our handlers (a group left empty by that goes too)."""
    kept, removed = [], False
    for group in groups:
        handlers = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(handlers, list) or not any(ours(h) for h in handlers):
            kept.append(group)
            continue
        removed = True
        rest = [h for h in handlers if not ours(h)]
        if rest:
            kept.append({**group, "hooks": rest})
    return kept, removed


def _events(config: dict[str, Any], path: Path) -> dict[str, Any]:
    hooks = member(config, "hooks", dict, path)
    for event, entries in hooks.items():
        if not isinstance(entries, list):
            raise LoreError(
                "{}: hooks.{} must be a JSON array; fix it, then run again", path, event
            )
    return hooks  # type: ignore[no-any-return]


def with_groups(
    config: dict[str, Any], path: Path, wanted: list[tuple[str, dict[str, Any]]], ours: Ours
) -> dict[str, Any]:
    """`config` with our groups (`wanted`: event, group), once each, after the user's own."""
    out = without_groups(config, path, ours)
    hooks = _events(out, path)
    for event, group in wanted:
        hooks[event] = [*hooks.get(event, []), group]
    out["hooks"] = hooks
    return out


def without_groups(config: dict[str, Any], path: Path, ours: Ours) -> dict[str, Any]:
    """`config` without our handlers (an event or `hooks` left empty by that goes too)."""
    out = copy(config)
    hooks = _events(out, path)
    for event in list(hooks):
        groups, removed = strip_groups(hooks[event], ours)
        if removed and not groups:
            del hooks[event]
        elif removed:
            hooks[event] = groups
    if "hooks" in out and not hooks and config.get("hooks"):
        del out["hooks"]
    return out


def wired_groups(config: dict[str, Any], ours: Ours) -> list[str]:
    """The events at which `config` runs one of our handlers."""
    hooks = config.get("hooks")
    found = []
    for event, groups in (hooks if isinstance(hooks, dict) else {}).items():
        for group in groups if isinstance(groups, list) else []:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            if isinstance(handlers, list) and any(ours(h) for h in handlers):
                found.append(event)
                break
    return found


# -- flat hook format (Copilot CLI, Cursor): {"version": 1, "hooks": {event: [handler]}} ------
def with_flat(
    config: dict[str, Any], path: Path, wanted: list[tuple[str, Handler]], ours: Ours
) -> dict[str, Any]:
    """`config` with our handlers (`wanted`: event, handler), once each, after the user's."""
    out = without_flat(config, path, ours)
    hooks = _events(out, path)
    for event, handler in wanted:
        hooks[event] = [*hooks.get(event, []), handler]
    return {"version": out.get("version", 1), **out, "hooks": hooks}


def without_flat(config: dict[str, Any], path: Path, ours: Ours) -> dict[str, Any]:
    """`config` without our handlers (an event, `hooks`, and a `version` left alone go too)."""
    out = copy(config)
    hooks = _events(out, path)
    for event in list(hooks):
        kept = [h for h in hooks[event] if not ours(h)]
        if len(kept) < len(hooks[event]):
            if kept:
                hooks[event] = kept
            else:
                del hooks[event]
    if not hooks and config.get("hooks"):
        del out["hooks"]
        if set(out) == {"version"} and set(config) <= {"version", "hooks"}:
            del out["version"]  # a file install created: nothing of the user's left
    return out


def wired_flat(config: dict[str, Any], ours: Ours) -> list[str]:
    hooks = config.get("hooks")
    return [
        event
        for event, handlers in (hooks if isinstance(hooks, dict) else {}).items()
        if isinstance(handlers, list) and any(ours(h) for h in handlers)
    ]


# -- MCP servers as {"mcpServers": {name: entry}} -----------------------------------------------
def with_server(
    config: dict[str, Any],
    path: Path,
    entry: dict[str, Any],
    key: str = "mcpServers",
    ours: Ours = is_our_server,
) -> dict[str, Any]:
    out = copy(config)
    servers = member(out, key, dict, path)
    if SERVER in servers and not ours(servers[SERVER]):
        raise LoreError(
            "{}: an MCP server named {!r} is already registered and is not lorebook's;"
            " rename it, then run again",
            path,
            SERVER,
        )
    servers[SERVER] = entry
    out[key] = servers
    return out


def without_server(
    config: dict[str, Any], path: Path, key: str = "mcpServers", ours: Ours = is_our_server
) -> dict[str, Any]:
    out = copy(config)
    servers = member(out, key, dict, path)
    if ours(servers.get(SERVER)):
        del servers[SERVER]
        if not servers:
            del out[key]
    return out


def has_server(config: dict[str, Any], key: str = "mcpServers", ours: Ours = is_our_server) -> bool:
    servers = config.get(key)
    return isinstance(servers, dict) and ours(servers.get(SERVER))


def server_edits(
    action: str,
    path: Path,
    entry: dict[str, Any],
    *,
    key: str = "mcpServers",
    ours: Ours = is_our_server,
    jsonc: bool = False,
) -> list[Edit]:
    """Register (install) or remove (uninstall) lorebook's MCP server in one JSON file of
    servers under `key`; `ours` knows our entry; `jsonc`: see `load_json`."""
    text = read(path)
    config = load_json(path, text, jsonc=jsonc)
    if action == "install":
        return json_edit(path, text, with_server(config, path, entry, key, ours))
    if text is None:
        return []
    return json_edit(path, text, without_server(config, path, key, ours))


def flat_edits(
    action: str, hooks_path: Path, mcp_path: Path, handlers: Any, ours: Ours, entry: dict[str, Any]
) -> list[Edit]:
    """A client with a flat hooks file (`{"version":1,"hooks":{event:[handler]}}`: Copilot
    CLI, Cursor) and a separate MCP file: both files' edits."""
    before = read(hooks_path)
    config = load_json(hooks_path, before)
    if action == "install":
        new = with_flat(config, hooks_path, handlers, ours)
    else:
        new = without_flat(config, hooks_path, ours)
    return json_edit(hooks_path, before, new) + server_edits(action, mcp_path, entry)


def flat_status(name: str, scope: str, hooks_path: Path, mcp_path: Path, ours: Ours) -> Wired:
    problems: list[str] = []
    hooks = wired_flat(look(hooks_path, problems), ours)
    mcp = has_server(look(mcp_path, problems))
    return wired(name, scope, hooks, mcp, [hooks_path, mcp_path], problems)


# -- status ------------------------------------------------------------------------------------
def look(path: Path, problems: list[str]) -> dict[str, Any]:
    """A config file for status: its JSON ({} when absent); a broken one noted in `problems`."""
    try:
        return load_json(path, read(path))
    except LoreError as exc:
        problems.append(str(exc))
        return {}


def wired(
    client: str,
    scope: str,
    hooks: list[str],
    mcp: bool,
    files: list[Path],
    problems: list[str],
) -> Wired:
    return Wired(client, scope, hooks, mcp, [f for f in files if f.exists()], problems)
