"""How deeply JSON nests, measured without recursion: a context nested thousands of levels
deep would overflow the decoder's (and every later walker's) stack. Stdlib only: the append
path uses it.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # typing costs milliseconds on the append path; mypy still sees it
if TYPE_CHECKING:
    from typing import Any

    from ..errors import UsageError

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')  # its brackets do not count
_INNERMOST = re.compile(r"[\[{][^\[\]{}]*[\]}]")  # a pair with no bracket inside
_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')  # strings hide their brackets


def too_deep(what: str, limit: int) -> UsageError:
    """The error for a value nested deeper than `limit` (`what` names where it came from)."""
    from ..errors import UsageError

    return UsageError(
        "{}: too deeply nested (more than {} levels of objects and arrays; "
        "the limit is log.max_depth in .lore/config.yaml)",
        what,
        limit,
    )


def text_too_deep(text: str, limit: int) -> bool:
    """True when the JSON `text` nests objects/arrays more than `limit` deep; checked before
    decoding, each pass (in C) removing the innermost level. Unclosed brackets count as
    levels. Text the scan cannot tokenise (an unclosed string) is invalid JSON right there,
    where the decoder stops."""
    if text.count("[") + text.count("{") <= limit:  # the usual case: nothing to scan
        return False
    rest = _STRING.sub("", text)
    for _ in range(limit):
        rest, removed = _INNERMOST.subn("", rest)
        if not removed:
            return rest.count("[") + rest.count("{") > limit
    return _INNERMOST.search(rest) is not None or rest.count("[") + rest.count("{") > limit


def value_too_deep(value: Any, limit: int) -> bool:
    """True when dicts/lists/tuples nest more than `limit` levels in `value`, level by level
    (a cycle counts as endless nesting)."""
    level = [value]
    for _ in range(limit):
        inner = []
        for node in level:
            for child in node.values() if type(node) is dict else node:
                kind = type(child)
                if kind is dict or kind is list or kind is tuple:
                    inner.append(child)
        if not inner:
            return False
        level = inner
    return True


def decode_context(text: str, source: str, max_depth: int) -> dict[str, Any]:
    """An action context given as JSON text (`lore log --context`): one object, nested at most
    `max_depth` deep (checked before the decoder recurses), else a usage error naming `source`
    and the line and column."""
    import json

    from ..errors import UsageError

    if text_too_deep(text, max_depth):
        raise too_deep(source, max_depth)
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(
            "{}:{}:{}: invalid JSON: {} (char {})", source, exc.lineno, exc.colno, exc.msg, exc.pos
        ) from None
    if not isinstance(value, dict):
        raise UsageError("{}: context must be a JSON object, not {}", source, type(value).__name__)
    return value


TOO_DEEP_MARK = "[TRUNCATED: nested too deep]"  # the sanitizer's marker (redact.sanitize)
PATH_PARTS = 4  # a clipped field is named by its first few keys: "context.a.b.c.d…"
MAX_PATHS = 10  # at most this many clipped fields are named


def clip_deep(value: dict[str, Any], limit: int, name: str) -> tuple[dict[str, Any], list[str]]:
    """`value` with every object or array nested `limit` or more levels below it replaced by
    the too-deep marker (what `value_too_deep` counts), and the paths of what was cut, `name`
    first, abbreviated; copied level by level, so any depth (or a cycle) never recurses."""
    top: dict[str, Any] = dict(value)
    level: list[tuple[Any, str]] = [(top, name)]
    clipped: list[str] = []
    for depth in range(1, max(limit, 1) + 1):
        inner: list[tuple[Any, str]] = []
        for node, path in level:
            keys = node.keys() if type(node) is dict else range(len(node))
            for key in keys:
                child = node[key]
                kind = type(child)
                if not (kind is dict or kind is list or kind is tuple):
                    continue
                where = f"{path}.{key}" if depth <= PATH_PARTS else path
                if depth == limit:
                    node[key] = TOO_DEEP_MARK
                    text = where if depth <= PATH_PARTS else where + "…"
                    if text not in clipped:
                        clipped.append(text)
                    continue
                copy = dict(child) if kind is dict else list(child)
                node[key] = copy
                inner.append((copy, where))
        if not inner:
            break
        level = inner
    if len(clipped) > MAX_PATHS:
        clipped[MAX_PATHS:] = [f"… {len(clipped) - MAX_PATHS} more"]
    return top, clipped


def clip_json_text(text: str, limit: int) -> str:
    """The JSON `text` with each object or array nested more than `limit` deep replaced by the
    too-deep marker, by a scan of its brackets (a decoder recurses, and gives up at some
    depth). Text that is not JSON stays not JSON: the decoder says where."""
    if text.count("[") + text.count("{") <= limit:
        return text
    import json

    parts: list[str] = []
    depth, kept, cut_at = 0, 0, -1
    for found in _TOKENS.finditer(text):
        token = found.group()
        if token[0] == '"':
            continue
        if token in "[{":
            depth += 1
            if depth == limit + 1:
                parts.append(text[kept : found.start()])
                cut_at = found.start()
        else:
            if depth == limit + 1 and cut_at >= 0:
                parts.append(json.dumps(TOO_DEEP_MARK))
                kept, cut_at = found.end(), -1
            depth -= 1
    parts.append(text[kept:] if cut_at < 0 else text[kept:cut_at])
    return "".join(parts)
