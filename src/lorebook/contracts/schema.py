"""Write (or check) docs/schema/<name>.schema.json from the `--json` types in this package.

    python -m lorebook.contracts.schema [--check] [DIR]

The schemas are made by pydantic from the TypedDicts, then closed: an object that lists its keys
refuses any other (`additionalProperties: false`) unless its type is in OPEN, so an output that
gains, loses or renames a key fails the contract test until the type and the file follow.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from . import OUTPUTS

# Objects that may carry keys of their own: a learning's front matter keeps the keys a person
# added (and its source and solutions theirs), and a v1 action line may carry extra keys.
OPEN = frozenset({"LearningData", "RcaAdded", "Source", "SolutionData", "ActionRecord"})

BASE = "https://lorebook.dev/schema/"
DEFAULT_DIR = Path(__file__).resolve().parents[3] / "docs" / "schema"


def schema(name: str) -> dict[str, Any]:
    """The JSON Schema of output `name` (a key of OUTPUTS)."""
    from pydantic import TypeAdapter

    kind, commands = OUTPUTS[name]
    made = TypeAdapter(kind).json_schema()
    _close(made)
    for node in made.get("$defs", {}).values():
        _close(node)
    shown = ", ".join(f"`lore {c} --json`" for c in commands)
    head = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"{BASE}{name}.schema.json",
        "title": f"{shown} (generated from lorebook.contracts; do not edit)",
    }
    made.pop("title", None)
    return {**head, **made}


def _close(node: Any, name: str | None = None) -> None:
    """Refuse unlisted keys on every object that lists its own (but OPEN ones); drop pydantic's
    per-property titles (the property's name again)."""
    if isinstance(node, list):
        for item in node:
            _close(item)
        return
    if not isinstance(node, dict):
        return
    title = node.get("title")
    if "properties" in node:
        if title not in OPEN:
            node.setdefault("additionalProperties", False)
        for sub in node["properties"].values():
            if isinstance(sub, dict):
                sub.pop("title", None)
            _close(sub)
    for key, value in node.items():
        if key not in ("properties", "$defs"):
            _close(value)


def text(name: str) -> str:
    return json.dumps(schema(name), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    check = "--check" in argv
    rest = [a for a in argv if a != "--check"]
    folder = Path(rest[0]) if rest else DEFAULT_DIR
    stale = []
    for name in OUTPUTS:
        path = folder / f"{name}.schema.json"
        wanted = text(name)
        if path.is_file() and path.read_text(encoding="utf-8") == wanted:
            continue
        if check:
            stale.append(path.name)
        else:
            path.write_text(wanted, encoding="utf-8")
            print(f"wrote {path}")
    if stale:
        print(f"out of date (run python -m lorebook.contracts.schema): {', '.join(stale)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
