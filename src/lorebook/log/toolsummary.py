"""What one agent tool call was, in a few first-class fields: the tool and its telling argument.

Claude Code's tool inputs differ per tool (`command`, `file_path`, `pattern`, ...); a reader
(the brief, a report) should not have to know each shape, so capture stores them normalised
beside the clipped input. Pure: no I/O, stdlib only (it runs on the capture path).

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import os

from ..redact.sanitize import clip

TYPE_CHECKING = False  # typing costs milliseconds on the append path; mypy still sees it
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any

LIMIT = 200  # characters kept of each field (after redaction)
FILE_TOOLS = {
    "Read": "file_path",
    "Edit": "file_path",
    "Write": "file_path",
    "MultiEdit": "file_path",
    "NotebookEdit": "notebook_path",
    "LSP": "filePath",
}
# tool -> ((summary field, input key), ...): the first input key present fills the field
FIELDS: dict[str, tuple[tuple[str, str], ...]] = {
    "Bash": (("command", "command"),),
    "Grep": (("pattern", "pattern"),),
    "Glob": (("pattern", "pattern"),),
    "WebFetch": (("url", "url"),),
    "WebSearch": (("query", "query"),),
    "Task": (("subagent", "subagent_type"), ("description", "description")),
    "Agent": (("subagent", "subagent_type"), ("description", "description")),
    "Skill": (("skill", "skill"),),
}


def tool_summary(
    tool: str,
    tool_input: Any,
    root: str | Path | None = None,
    redact: Callable[[str], str] | None = None,
) -> dict[str, str]:
    """`{"tool": name, <field>: value, ...}` for one call of `tool` with `tool_input`: the
    Bash `command`, the `file` of a file tool (relative to `root` when inside it), the Grep/Glob
    `pattern`, the WebFetch `url`, the WebSearch `query`, a Task's `subagent` and
    `description`, a Skill's `skill`, an MCP tool's `mcp_server` and `mcp_tool`. Each value is
    passed through `redact` (redact first, then cut) and cut to LIMIT characters."""
    name = tool if isinstance(tool, str) and tool else "unknown"
    fields: dict[str, str] = {}
    given = tool_input if isinstance(tool_input, dict) else {}
    if name in FILE_TOOLS:
        path = given.get(FILE_TOOLS[name])
        if isinstance(path, str) and path:
            fields["file"] = _relative(path, root)
    for field, key in FIELDS.get(name, ()):
        value = given.get(key)
        if isinstance(value, str) and value.strip():
            fields[field] = value
    if name.startswith("mcp__") and name.count("__") >= 2:
        server, _, operation = name[5:].partition("__")
        fields["mcp_server"], fields["mcp_tool"] = server, operation
    out = {"tool": clip(redact(name) if redact else name, LIMIT)}
    for field, value in fields.items():
        out[field] = clip(redact(value) if redact else value, LIMIT)
    return out


def _relative(path: str, root: str | Path | None) -> str:
    """`path` relative to `root` when it lies inside it (by name: nothing is resolved)."""
    if root is None or not os.path.isabs(path):
        return path
    base = os.path.normpath(str(root))
    full = os.path.normpath(path)
    try:
        inside = os.path.commonpath([base, full]) == base
    except ValueError:  # different drives
        return path
    return os.path.relpath(full, base) if inside and full != base else path
