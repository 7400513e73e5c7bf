"""Mine a retrospective into pattern drafts (`lore extract retro FILE`).

The common formats are read: what went well / what went wrong / action items;
start-stop-continue; the 4Ls (liked, learned, lacked, longed for); the LEO fields
(`failure_patterns`, `key_learnings`, `lessons_learned`, `what_went_well`, `success_patterns`).
Each section has a role (`ROLES`): failures, solutions, or what worked. In Markdown a section is
a heading of any level or a bold line, in any case; in YAML or JSON a top-level key.

Every failure becomes one pattern draft (`retro_drafts`). A solution or a what-worked item is
paired with the failure it addresses, never given to every failure; unpaired items stay
unpaired.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import UsageError
from ..redact.sanitize import Sanitizer
from .docload import key_line, load_document
from .store import redact_strings

FAILURES, SOLUTIONS, WORKED = "failures", "solutions", "worked"
# a section's name (lower case, words only) -> its role
ROLES: dict[str, str] = {
    FAILURES: (
        "failure patterns|failures|what went wrong|went wrong|what went badly|what didnt go well|"
        "didnt go well|what did not go well|did not go well|what could be improved|"
        "could be improved|could have gone better|problems|issues|challenges|pain points|stop|"
        "stop doing|lacked|what we lacked"
    ),
    SOLUTIONS: (
        "key learnings|lessons learned|lessons|learnings|action items|actions|next steps|"
        "improvements|start|start doing|learned|what we learned|longed for|what we longed for|"
        "try|things to try"
    ),
    WORKED: (
        "what went well|went well|success patterns|successes|wins|continue|keep doing|liked|"
        "what we liked"
    ),
}
LOOKED_FOR = (
    "'What went wrong', 'Failure patterns', 'Stop' or 'Lacked' (failures); 'Action items', "
    "'Key learnings', 'Start', 'Learned' or 'Longed for' (solutions); 'What went well', "
    "'Continue' or 'Liked' (what worked)"
)
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_BOLD = re.compile(r"^\s*(\*\*|__)(.+?)\1\s*:?\s*$")
_LABEL = re.compile(r"^\s*([A-Za-z][^:#*_]{1,60}):\s*$")  # "What went wrong:" on its own line
_ITEM = re.compile(r"^(\s*)(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?(.*\S)\s*$")
_FIELD = re.compile(
    r"^\s*\**(epic|sd_id|category|learning_category)\**\s*:\s*\**\s*(.+?)\s*$", re.I
)
_NAME = re.compile(r"[^a-z0-9]+")
TEXT_KEYS = ("summary", "pattern", "issue", "text", "title", "item", "action", "what")
OWN_SOLUTION_KEYS = ("solution", "solutions", "fix", "fixes_with")
REFERENCE_KEYS = ("fixes", "re", "addresses", "failure", "for")


@dataclass
class Item:
    """One list item: its text, where it is, and what came with it (sub-items, fields)."""

    text: str
    line: int | None = None  # Markdown: the line it is on
    subs: list[str] = field(default_factory=list)
    fields: dict[str, Any] = field(default_factory=dict)  # a structured failure's extra keys
    reference: str | None = None  # a structured item's `fixes: 2` / `re: <failure text>`


@dataclass
class Retro:
    source: str
    title: str | None = None
    epic: str | None = None
    category: str | None = None
    failures: list[Item] = field(default_factory=list)
    solutions: list[Item] = field(default_factory=list)
    worked: list[Item] = field(default_factory=list)


def redact_retro(sanitizer: Sanitizer, retro: Retro) -> Retro:
    """`retro` with secrets redacted in every text, before drafts shorten any of it."""

    def clean(items: list[Item]) -> list[Item]:
        return [
            replace(
                item,
                text=redact_strings(sanitizer, item.text),
                subs=redact_strings(sanitizer, item.subs),
                fields=redact_strings(sanitizer, item.fields),
                reference=redact_strings(sanitizer, item.reference),
            )
            for item in items
        ]

    return replace(
        retro,
        title=redact_strings(sanitizer, retro.title),
        epic=redact_strings(sanitizer, retro.epic),
        category=redact_strings(sanitizer, retro.category),
        failures=clean(retro.failures),
        solutions=clean(retro.solutions),
        worked=clean(retro.worked),
    )


def section_name(text: str) -> str:
    """`**What didn't go well? 😞**` -> `what didnt go well`."""
    return " ".join(_NAME.sub(" ", text.lower().replace("'", "").replace("’", "")).split())


def role_of(heading: str) -> str | None:
    """The role a section heading names, or None (no role, or more than one: a title such as
    "Start / Stop / Continue" is not a section)."""
    name = f" {section_name(heading)} "
    found = {
        role for role, names in ROLES.items() if any(f" {n} " in name for n in names.split("|"))
    }
    return found.pop() if len(found) == 1 else None


def _heading(line: str) -> tuple[int, str] | None:
    """(level, text) of a Markdown heading, a bold line or a `Name:` label line."""
    found = _HEADING.match(line)
    if found:
        return len(found.group(1)), found.group(2).strip()
    found = _BOLD.match(line)
    if found:
        return 7, found.group(2).strip().rstrip(":")
    found = _LABEL.match(line)
    if found and role_of(found.group(1)):  # a plain label only when it names a section
        return 8, found.group(1).strip()
    return None


def _no_failures(source: str, found: list[str], what: str) -> UsageError:
    seen = f"; found only {', '.join(found)}" if found else ""
    return UsageError(
        "{}: no failures to extract: looked for {} {}{}", source, what, LOOKED_FOR, seen
    )


# -- Markdown -----------------------------------------------------------------------------------
def parse_markdown(text: str, source: str) -> Retro:
    retro = Retro(source)
    role: str | None = None
    found: list[str] = []
    base: int | None = None  # the indent of the section's top-level items
    last: Item | None = None
    for number, line in enumerate(text.splitlines(), 1):
        heading = _heading(line)
        if heading is not None and not _ITEM.match(line):
            level, name = heading
            role, base, last = role_of(name), None, None
            if role is not None:
                found.append(name)
            elif level == 1 and retro.title is None:
                retro.title = name
            continue
        item = _ITEM.match(line)
        if item is None:
            fields = _FIELD.match(line)
            if fields and role is None:
                key, value = fields.group(1).lower(), fields.group(2).strip("* ")
                if key in ("epic", "sd_id"):
                    retro.epic = value
                else:
                    retro.category = value
            elif last is not None and line.strip() and line[:1].isspace():
                last.text = f"{last.text} {line.strip()}"  # a wrapped item
            continue
        if role is None:
            continue
        indent = len(item.group(1).expandtabs(4))
        if base is None or indent <= base or last is None:
            base = indent if base is None else min(base, indent)
            last = Item(item.group(2), number)
            getattr(retro, role).append(last)
        else:
            last.subs.append(item.group(2))  # a sub-item belongs to the item above it
    if not retro.failures:
        raise _no_failures(source, found, "headings (any level, or a bold line) like")
    return retro


# -- YAML / JSON --------------------------------------------------------------------------------
def _text_of(value: Any, where: str, key: str) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise UsageError("{}: every '{}' item must be text or a mapping with 'text'", where, key)
    return str(value).strip()


def _item(value: Any, key: str, where: str) -> Item | None:
    if not isinstance(value, Mapping):
        plain = _text_of(value, where, key)
        return Item(plain) if plain else None
    text: Any = next((value[k] for k in TEXT_KEYS if isinstance(value.get(k), str | int)), None)
    if text is None or not str(text).strip():
        raise UsageError(
            "{}: a '{}' item needs a 'summary' (or 'text', 'pattern', 'action') text", where, key
        )
    own: Any = next((value[k] for k in OWN_SOLUTION_KEYS if value.get(k)), [])
    if not isinstance(own, str | list):
        raise UsageError("{}: a '{}' item's solution must be text or a list of texts", where, key)
    subs = [own] if isinstance(own, str) else [s for s in own if isinstance(s, str)]
    reference = next((value[k] for k in REFERENCE_KEYS if value.get(k) not in (None, "")), None)
    extra = {k: v for k, v in value.items() if k in ("severity", "category", "root_cause")}
    return Item(
        str(text).strip(),
        subs=subs,
        fields=extra,
        reference=None if reference is None else str(reference),
    )


def parse_structured(data: Any, text: str, source: str) -> Retro:
    if not isinstance(data, Mapping):
        raise UsageError("{}:1: a retrospective must be a mapping of fields", source)
    retro = Retro(source)
    found: list[str] = []
    for key, value in data.items():
        role = role_of(str(key))
        if role is None or value is None:
            continue
        found.append(str(key))
        where = f"{source}:{key_line(text, str(key))}"
        values = [value] if isinstance(value, str) else value
        if not isinstance(values, list):
            raise UsageError("{}: '{}' must be a list, not {}", where, key, type(value).__name__)
        for raw in values:
            item = _item(raw, str(key), where)
            if item is not None:
                getattr(retro, role).append(item)
    if not retro.failures:
        raise _no_failures(source, found, "keys like")
    epic = data.get("epic") or data.get("epic_id") or data.get("sd_id")
    category = data.get("learning_category") or data.get("category")
    title = data.get("title")
    retro.title = str(title) if isinstance(title, str | int) else None
    retro.epic = str(epic) if isinstance(epic, str | int) else None
    retro.category = str(category) if isinstance(category, str) else None
    return retro


def parse_retro(text: str, source: str) -> Retro:
    """A retrospective from YAML, JSON or Markdown (one-line file:line errors)."""
    if source.endswith((".md", ".markdown")) or (
        not source.endswith((".yaml", ".yml", ".json")) and _looks_like_markdown(text)
    ):
        return parse_markdown(text, source)
    if not text.strip():
        raise _no_failures(source, [], "keys or headings like")
    return parse_structured(load_document(text, source), text, source)


def _looks_like_markdown(text: str) -> bool:
    """Stdin or an unknown extension: Markdown when a section heading is there (a YAML comment
    line also starts with `#`, so that alone says nothing)."""
    for line in text.splitlines():
        heading = _heading(line)
        if heading is not None and heading[0] != 8 and role_of(heading[1]) is not None:
            return True
    return False
