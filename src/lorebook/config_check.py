"""Checks `.lore/config.yaml` once, at load, against the types of the defaults.

A bad value (`log.max_line_bytes: big`) is then one line naming the file, the key and what is
expected, from every command, instead of a ValueError wherever the setting is first used.
Standard library only: the append path runs it on every cached load.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import math

from .errors import LoreError
from .timeutil import MAX_DAYS

TYPE_CHECKING = False  # typing costs milliseconds on the append path; mypy still sees it
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

ALSO_MAPPING = {"search.synonyms"}  # a list of groups or {word: [spellings]}
FRACTIONS = {"search.threshold", "search.dense_weight", "search.stale_factor",
             "search.unknown_success"}  # fmt: skip
UPPER = {"_days": MAX_DAYS, "_minutes": MAX_DAYS * 24 * 60}  # by key suffix: date arithmetic
TEXT_ITEMS = {"redaction.extra_secret_keys", "redaction.extra_patterns"}
PATTERNS = {"redaction.extra_patterns"}  # name -> regular expression
CLOSED = {"paths"}  # sections whose unknown keys are refused (a typo would move nothing)
POSITIVE = {"expertise.max_lines", "expertise.failure_max_age_days"}  # 0 would empty the file


def _texts_problem(value: Any) -> tuple[tuple[str, ...], str] | None:
    """(item keys, reason) unless `value` is a list of texts."""
    if not isinstance(value, list):
        return (), f"expected a list of text, got {shown(value)}"
    for index, item in enumerate(value):
        if not isinstance(item, str):
            return (f"[{index}]",), f"expected text, got {shown(item)}"
    return None


DOMAIN_NAME = r"^[a-z][a-z0-9_-]{0,39}$"  # an expertise domain (and its file name)


def _domains_problem(value: dict[str, Any]) -> tuple[tuple[str, ...], str] | None:
    """`expertise.domains`: {name: {keywords: [text], globs: [text]}} (either may be absent)."""
    import re  # (already loaded by the sanitizer)

    for name, spec in value.items():
        if not re.match(DOMAIN_NAME, str(name)):
            return (str(name),), "a domain name is a lowercase word like 'mobile'"
        if spec is None:
            continue
        if not isinstance(spec, dict):
            return (str(name),), f"expected a mapping with keywords and globs, got {shown(spec)}"
        for key in ("keywords", "globs"):
            found = _texts_problem(spec[key]) if spec.get(key) is not None else None
            if found is not None:
                return (str(name), key, *found[0]), found[1]
    return None


def _synonyms_problem(value: Any) -> tuple[tuple[str, ...], str] | None:
    """`search.synonyms`: a list of groups (lists of text), or {word: text or [text]}."""
    if isinstance(value, dict):
        for word, spellings in value.items():
            if isinstance(spellings, str):
                continue
            if not isinstance(spellings, list):
                return (str(word),), f"expected text or a list of text, got {shown(spellings)}"
            found = _texts_problem(spellings)
            if found is not None:
                return (str(word), *found[0]), found[1]
        return None
    for index, group in enumerate(value):
        found = _texts_problem(group)
        if found is not None:
            return (f"[{index}]", *found[0]), found[1]
    return None


SHAPES = {"expertise.domains": _domains_problem, "search.synonyms": _synonyms_problem}


def _item_problem(key: str, value: Any) -> tuple[str, str] | None:
    """(item key, reason) for the first item of a list or mapping of texts that is wrong."""
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for name, item in items:
        if not isinstance(item, str):
            where = f"[{name}]" if isinstance(name, int) else str(name)  # a list item: [i]
            return where, f"expected text, got {shown(item)}"
        if key in PATTERNS:
            import re  # (already loaded by the sanitizer)

            try:
                re.compile(item)
            except re.error as exc:
                return str(name), f"invalid regular expression: {exc}"
    return None


def shown(value: Any) -> str:
    """The value as the error shows it: a short scalar as written, else only its kind."""
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str) and len(value) > 40:
        return f"{len(value)} characters of text"
    return repr(value)


def _number_problem(key: str, value: Any, integer: bool) -> str | None:
    kind = "an integer" if integer else "a number"
    if isinstance(value, bool) or not isinstance(value, int if integer else (int, float)):
        return f"expected {kind}"
    if not math.isfinite(value):
        return f"expected {kind}, not infinity or NaN"
    if value < 0:
        return f"expected {kind} of at least 0"
    if key in POSITIVE and value == 0:
        return f"expected {kind} above 0"
    if key in FRACTIONS and value > 1:
        return "expected a number from 0 to 1"
    for suffix, most in UPPER.items():
        if key.endswith(suffix) and value > most:
            return f"expected {kind} of at most {most}"
    return None


def problem(key: str, value: Any, default: Any) -> str | None:
    """What is wrong with `value` for a setting whose default is `default` (None: nothing)."""
    if isinstance(default, bool):
        return None if isinstance(value, bool) else "expected true or false"
    if isinstance(default, int | float):
        return _number_problem(key, value, integer=isinstance(default, int))
    if isinstance(default, dict) or (key in ALSO_MAPPING and isinstance(value, dict)):
        return None if isinstance(value, dict) else "expected a mapping of settings"
    if isinstance(default, list):
        return None if isinstance(value, list) else "expected a list"
    if isinstance(default, str):
        return None if isinstance(value, str) else "expected text"
    if default is None:
        return None if isinstance(value, str) or value is None else "expected text"
    return None


def find_problem(
    data: dict[str, Any], defaults: dict[str, Any], prefix: tuple[str, ...] = ()
) -> tuple[tuple[str, ...], str] | None:
    """The first key (as a path) whose value does not fit its default, and why. Keys without a
    default are left alone (later features read them)."""
    for name, value in data.items():
        if name not in defaults:
            if ".".join(prefix) in CLOSED:
                known = ", ".join(defaults)
                return (*prefix, str(name)), f"unknown key, expected one of {known}"
            continue
        keys = (*prefix, str(name))
        default = defaults[name]
        found = problem(".".join(keys), value, default)
        if found is not None:
            return keys, f"{found}, got {shown(value)}"
        bad_item = _item_problem(".".join(keys), value) if ".".join(keys) in TEXT_ITEMS else None
        if bad_item is not None:
            return (*keys, bad_item[0]), bad_item[1]
        shape = SHAPES.get(".".join(keys))
        bad_shape = shape(value) if shape is not None else None
        if bad_shape is not None:
            return (*keys, *bad_shape[0]), bad_shape[1]
        if isinstance(default, dict) and default and isinstance(value, dict):
            nested = find_problem(value, default, keys)
            if nested is not None:
                return nested
    return None


def line_of(path: Path, keys: tuple[str, ...]) -> int | None:
    """The 1-based line of a nested key in the YAML file, when it can be found (error path
    only: this parses the file again, keeping positions)."""
    try:
        from ruamel.yaml import YAML

        node: Any = YAML().load(path.read_text(encoding="utf-8"))
        line = None
        for key in keys:
            index: Any = int(key.strip("[]")) if isinstance(node, list) else key  # a list item
            lc: Any = node.lc  # ruamel's positions
            position = lc.item(index) if isinstance(node, list) else lc.key(index)
            line = int(position[0]) + 1
            node = node[index]
        return line
    except Exception:  # a position is a nicety; the message stands without it
        return None


def check_types(data: dict[str, Any], defaults: dict[str, Any], path: Path) -> None:
    """Raise one LoreError `FILE:LINE: key.path: expected …, got …` for the first bad value."""
    found = find_problem(data, defaults)
    if found is None:
        return
    keys, reason = found
    line = line_of(path, keys)
    where = f"{path}:{line}" if line is not None else str(path)
    name = ".".join(keys).replace(".[", "[")  # list items as key[i]
    raise LoreError("{}: {}: {}", where, name, reason)  # a key named `passwd` is no secret
