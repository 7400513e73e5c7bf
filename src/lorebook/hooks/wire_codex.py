"""OpenAI Codex CLI: hooks in `hooks.json` (Claude Code's format with Codex's event names), the
MCP server as `[mcp_servers.lore]` in `config.toml`; both in `<repo>/.codex/` (project) or
`$CODEX_HOME` (user; `~/.codex` by default).

Codex runs a hook's command with `$SHELL -lc` in the session's working directory and sets no
project variable (codex-rs/hooks/src/engine/command_runner.rs), and it reads `.codex/` from
the working directory up to the project root: so a project hook finds the committed launcher
walking up from `$PWD` (`sh -c '…'`, whatever the user's shell). Codex runs project hooks only
in a trusted project, and only hooks the user has trusted (docs/hooks.md).

`config.toml` is edited as text: our table is appended, replaced or cut out, and every other
byte of the user's file stays as it was (`tomllib` only checks the file and finds our entry).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from .. import LoreError
from . import wirekit as K
from .clients import CLIENTS
from .wiring import Edit, Wired

NAME = "codex"
CONTEXT = {"session-start", "user-prompt-submit"}
HEADER = f"[mcp_servers.{K.SERVER}]"


def ours(handler: Any) -> bool:
    return isinstance(handler, dict) and K.runs_hook(handler.get("command"), NAME)


def folder(scope: str, root: Path, home: Path) -> Path:
    if scope == "user":
        given = os.environ.get("CODEX_HOME")
        return Path(given) if given else home / ".codex"
    return root / ".codex"


def groups(scope: str, root: Path, machine: list[str]) -> list[tuple[str, dict[str, Any]]]:
    prefix = K.hook_prefix(scope, machine, None)
    context = K.context_seconds(root)
    found = []
    for event, normalised in CLIENTS[NAME].events.items():
        seconds = context if normalised in CONTEXT else K.CAPTURE_SECONDS
        handler = {"type": "command", "command": f"{prefix} hook {NAME} {event}",
                   "timeout": seconds}  # fmt: skip
        found.append((event, {"hooks": [handler]}))
    return found


# -- config.toml -------------------------------------------------------------------------------
def load_toml(path: Path, text: str | None) -> dict[str, Any]:
    import tomllib

    try:
        return tomllib.loads(text or "")
    except tomllib.TOMLDecodeError as exc:
        line = re.search(r"at line (\d+)", str(exc))
        raise LoreError(
            "{}:{}: invalid TOML ({}); fix it, then run again (nothing was changed)",
            path,
            line.group(1) if line else "?",
            str(exc).split(" (at ")[0],
        ) from None


def table(entry: dict[str, Any]) -> str:
    """Our table as TOML text (JSON's string escapes are TOML's basic-string escapes)."""
    args = ", ".join(json.dumps(a) for a in entry["args"])
    return f"{HEADER}\ncommand = {json.dumps(entry['command'])}\nargs = [{args}]\n"


def span(lines: list[str]) -> tuple[int, int] | None:
    """The lines of our table (its header to the next table not under it), if written as one."""
    starts = [i for i, line in enumerate(lines) if line.strip() == HEADER]
    if len(starts) != 1:
        return None
    end = starts[0] + 1
    while end < len(lines):
        head = lines[end].strip()
        if head.startswith("[") and not head.startswith(f"[mcp_servers.{K.SERVER}."):
            break
        end += 1
    return starts[0], end


def with_server(path: Path, text: str | None, entry: dict[str, Any]) -> str:
    data = load_toml(path, text)
    lines = (text or "").splitlines(keepends=True)
    servers = data.get("mcp_servers")
    present = isinstance(servers, dict) and K.SERVER in servers
    if present and not K.is_our_server(servers[K.SERVER]):  # type: ignore[index]
        raise LoreError(
            "{}: an MCP server named {!r} is already registered and is not lorebook's;"
            " rename it, then run again",
            path,
            K.SERVER,
        )
    found = span(lines)
    if present and found is None:
        raise LoreError("{}: lorebook's MCP server is written in a form lorebook does not"
                        " edit; remove [mcp_servers.lore], then run again", path)  # fmt: skip
    if found is not None:
        start, end = found  # replaced in place, a blank line kept before a table after it
        block = table(entry) + ("\n" if end < len(lines) else "")
        return "".join(lines[:start]) + block + "".join(lines[end:])
    body = "".join(lines)
    if body and not body.endswith("\n"):
        body += "\n"
    return body + ("\n" if body else "") + table(entry)


def without_server(path: Path, text: str | None) -> str | None:
    data = load_toml(path, text)
    servers = data.get("mcp_servers")
    if not (isinstance(servers, dict) and K.is_our_server(servers.get(K.SERVER))):
        return text
    lines = (text or "").splitlines(keepends=True)
    found = span(lines)
    if found is None:
        raise LoreError("{}: lorebook's MCP server is written in a form lorebook does not"
                        " edit; remove [mcp_servers.lore] yourself", path)  # fmt: skip
    start, end = found
    if start > 0 and not lines[start - 1].strip():
        start -= 1  # the blank line install put before it
    left = "".join(lines[:start] + lines[end:])
    return left if left.strip() else None


# -- the installer -----------------------------------------------------------------------------
def plan(action: str, scope: str, root: Path, home: Path, machine: list[str]) -> list[Edit]:
    base = folder(scope, root, home)
    hooks_path, toml_path = base / "hooks.json", base / "config.toml"
    before = K.read(hooks_path)
    config = K.load_json(hooks_path, before)
    toml_text = K.read(toml_path)
    if action == "install":
        new = K.with_groups(config, hooks_path, groups(scope, root, machine), ours)
        entry = K.server_entry(scope, machine, None)
        toml_after: str | None = with_server(toml_path, toml_text, entry)
    else:
        new = K.without_groups(config, hooks_path, ours)
        toml_after = without_server(toml_path, toml_text)
    edits = K.json_edit(hooks_path, before, new)
    if toml_after != toml_text:
        edits.append(Edit(toml_path, toml_text, toml_after))
    return edits


def status(scope: str, root: Path, home: Path) -> Wired:
    base = folder(scope, root, home)
    hooks_path, toml_path = base / "hooks.json", base / "config.toml"
    problems: list[str] = []
    hooks = K.wired_groups(K.look(hooks_path, problems), ours)
    mcp = False
    try:
        servers = load_toml(toml_path, K.read(toml_path)).get("mcp_servers")
        mcp = isinstance(servers, dict) and K.is_our_server(servers.get(K.SERVER))
    except LoreError as exc:
        problems.append(str(exc))
    return K.wired(NAME, scope, hooks, mcp, [hooks_path, toml_path], problems)
