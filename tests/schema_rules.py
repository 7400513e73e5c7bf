"""The portable subset of JSON Schema that every MCP client named in docs/mcp.md accepts.

The strictest readers of a tool schema set the rules: Gemini's function declarations (a subset
of the OpenAPI 3.0 schema object: one `type` per schema, no `null` type, no `$ref`) and Codex's
conversion (an `anyOf`/`oneOf` or a schema without `type` becomes a string; an array needs
`items`). `problems` names each breach by tool, side and JSON path.
"""

from __future__ import annotations

from typing import Any

TYPES = {"object", "array", "string", "number", "integer", "boolean"}
KEYWORDS = {
    "type",
    "description",
    "properties",
    "required",
    "items",
    "enum",
    "default",
    "minimum",
    "maximum",
}
MATCHES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}


def problems(tool: str, side: str, schema: Any) -> list[str]:
    """Every non-portable construct in one tool's `inputSchema` or `outputSchema`."""
    found: list[str] = []
    _walk(schema, f"{tool} {side} #", found)
    return found


def _walk(schema: Any, path: str, found: list[str]) -> None:
    if not isinstance(schema, dict):
        found.append(f"{path}: a schema must be an object, not {schema!r}")
        return
    for key in schema:
        if key not in KEYWORDS:
            found.append(f"{path}: keyword {key!r} is outside the portable subset")
    kind = schema.get("type")
    if not isinstance(kind, str) or kind not in TYPES:
        found.append(f"{path}: `type` must be one of {sorted(TYPES)}, not {kind!r}")
        kind = None
    allowed = MATCHES.get(kind or "", (object,))
    for value in schema.get("enum", []):
        if value is None or not _is(value, allowed):
            found.append(f"{path}/enum: value {value!r} does not match type {kind!r}")
    if "default" in schema and (schema["default"] is None or not _is(schema["default"], allowed)):
        found.append(f"{path}/default: {schema['default']!r} does not match type {kind!r}")
    if kind == "array":
        if "items" not in schema:
            found.append(f"{path}: an array needs `items`")
        else:
            _walk(schema["items"], f"{path}/items", found)
    elif "items" in schema and kind is not None:
        found.append(f"{path}: `items` on a schema of type {kind!r}")
    properties = schema.get("properties", {})
    if properties and kind not in ("object", None):
        found.append(f"{path}: `properties` on a schema of type {kind!r}")
    for name, sub in properties.items():
        _walk(sub, f"{path}/properties/{name}", found)
    for name in schema.get("required", []):
        if name not in properties:
            found.append(f"{path}/required: {name!r} is not a property")


def _is(value: Any, allowed: tuple[type, ...]) -> bool:
    return isinstance(value, allowed) and not (isinstance(value, bool) and bool not in allowed)
