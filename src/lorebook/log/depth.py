"""How deeply JSON nests, measured without recursion: a context nested thousands of levels
deep would overflow the decoder's (and every later walker's) stack. Stdlib only: the append
path uses it."""

from __future__ import annotations

import re

TYPE_CHECKING = False  # typing costs milliseconds on the append path; mypy still sees it
if TYPE_CHECKING:
    from typing import Any

# a whole string (its brackets do not count) or one bracket
_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')


def too_deep_message(what: str, limit: int) -> str:
    return (
        f"{what}: too deeply nested (more than {limit} levels of objects and arrays; "
        "the limit is log.max_depth in .lore/config.yaml)"
    )


def text_too_deep(text: str, limit: int) -> bool:
    """True when the JSON `text` opens more than `limit` objects/arrays inside each other.

    Checked before decoding. Text the scan cannot tokenise (an unclosed string) is invalid
    JSON at that very point, where the decoder stops before any deeper bracket."""
    if text.count("[") + text.count("{") <= limit:  # the usual case: nothing to scan
        return False
    depth = 0
    for match in _TOKENS.finditer(text):
        char = match.group()[0]
        if char == "[" or char == "{":
            depth += 1
            if depth > limit:
                return True
        elif char == "]" or char == "}":
            depth -= 1
    return False


def value_too_deep(value: Any, limit: int) -> bool:
    """True when dicts/lists/tuples nest more than `limit` levels in `value` (a cycle is
    left to the sanitizer, which marks it)."""
    if type(value) is dict and not any(type(v) in (dict, list, tuple) for v in value.values()):
        return limit < 1  # the usual flat context
    stack: list[tuple[Any, int]] = [(value, 1)]
    seen: set[int] = set()
    while stack:
        node, depth = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if depth > limit:
            return True
        for child in node.values() if isinstance(node, dict) else node:
            if isinstance(child, (dict, list, tuple)):
                stack.append((child, depth + 1))
    return False
