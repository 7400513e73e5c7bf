"""The `## ` sections of a learning's body: one splitter for the model and the search index.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import re

HEADING = re.compile(r"^## +(.+?)\s*#*\s*$", re.MULTILINE)


def split_sections(body: str, *, keep_head: bool = False) -> dict[str, str]:
    """Section text by heading (the first of a repeated heading wins); with `keep_head`, text
    before the first heading is kept under `""`."""
    found = list(HEADING.finditer(body))
    out: dict[str, str] = {}
    head = body[: found[0].start()] if found else body
    if keep_head and head.strip():
        out[""] = head.strip()
    for i, match in enumerate(found):
        end = found[i + 1].start() if i + 1 < len(found) else len(body)
        out.setdefault(match.group(1), body[match.end() : end].strip())
    return out
