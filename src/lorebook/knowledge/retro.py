"""Mine a retrospective into pattern drafts (`lore extract retro FILE`).

Input: YAML, JSON or Markdown with `failure_patterns`, `success_patterns`, `key_learnings` (or
`lessons_learned`) and `what_went_well`; Markdown uses headings with those names (any case,
spaces or dashes) over `- ` list items. As in the LEO knowledge base, every failure pattern
becomes one pattern draft: the failure is its Problem, the key learnings its `solutions`, what
went well and the success patterns its `prevention` checklist.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import UsageError
from ..redact.sanitize import Sanitizer, clip
from .docload import key_line, load_document
from .drafting import DraftSpec
from .store import redact_strings

FAILURES = ("failure_patterns",)
SOLUTIONS = ("key_learnings", "lessons_learned")
PREVENTION = ("what_went_well", "success_patterns")
KNOWN = (*FAILURES, *SOLUTIONS, *PREVENTION)
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?(.*\S)\s*$")
_FIELD = re.compile(
    r"^\s*\**(epic|sd_id|category|learning_category)\**\s*:\s*\**\s*(.+?)\s*$", re.I
)


@dataclass
class Retro:
    source: str
    title: str | None = None
    epic: str | None = None
    category: str | None = None
    failures: list[dict[str, Any]] = field(default_factory=list)
    solutions: list[str] = field(default_factory=list)
    prevention: list[str] = field(default_factory=list)


def redact_retro(sanitizer: Sanitizer, retro: Retro) -> Retro:
    """`retro` with secrets redacted in every text, before drafts shorten any of it."""
    texts = ("title", "epic", "category", "failures", "solutions", "prevention")
    return replace(retro, **{k: redact_strings(sanitizer, getattr(retro, k)) for k in texts})


def _key(heading: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", heading.lower()).strip("_")


def parse_markdown(text: str, source: str) -> Retro:
    retro = Retro(source)
    section: str | None = None
    lists: dict[str, list[tuple[int, str]]] = {}
    for number, line in enumerate(text.splitlines(), 1):
        heading = _HEADING.match(line)
        if heading:
            name = _key(heading.group(2))
            if heading.group(1) == "#" and retro.title is None and name not in KNOWN:
                retro.title = heading.group(2).strip()
            section = name if name in KNOWN else None
            continue
        found = _FIELD.match(line)
        if found and section is None:
            key, value = found.group(1).lower(), found.group(2).strip("* ")
            if key in ("epic", "sd_id"):
                retro.epic = value
            else:
                retro.category = value
            continue
        item = _ITEM.match(line)
        if item and section is not None:
            lists.setdefault(section, []).append((number, item.group(1)))
    if not any(lists.get(k) for k in FAILURES):
        raise UsageError(
            f"{source}: no failure patterns found: expected a '## Failure patterns' heading "
            "over '- ' list items"
        )
    retro.failures = [{"summary": text, "line": n} for n, text in lists.get("failure_patterns", [])]
    retro.solutions = [t for k in SOLUTIONS for _, t in lists.get(k, [])]
    retro.prevention = [t for k in PREVENTION for _, t in lists.get(k, [])]
    return retro


def _items(data: Mapping[str, Any], key: str, text: str, source: str) -> list[Any]:
    value = data.get(key)
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list):
        raise UsageError(
            f"{source}:{key_line(text, key)}: '{key}' must be a list, not {type(value).__name__}"
        )
    return value


def _strings(data: Mapping[str, Any], key: str, text: str, source: str) -> list[str]:
    out = []
    for item in _items(data, key, text, source):
        if isinstance(item, bool) or not isinstance(item, str | int | float):
            raise UsageError(f"{source}:{key_line(text, key)}: every '{key}' item must be text")
        if str(item).strip():
            out.append(str(item).strip())
    return out


def parse_structured(data: Any, text: str, source: str) -> Retro:
    if not isinstance(data, Mapping):
        raise UsageError(f"{source}:1: a retrospective must be a mapping of fields")
    failures = []
    for item in _items(data, "failure_patterns", text, source):
        if isinstance(item, str) and item.strip():
            failures.append({"summary": item.strip()})
        elif isinstance(item, Mapping):
            summary = item.get("summary") or item.get("pattern") or item.get("issue")
            if not isinstance(summary, str) or not summary.strip():
                raise UsageError(
                    f"{source}:{key_line(text, 'failure_patterns')}: a failure pattern needs a "
                    "'summary' (or 'pattern') text"
                )
            failures.append({**item, "summary": summary.strip()})
        else:
            raise UsageError(
                f"{source}:{key_line(text, 'failure_patterns')}: every failure pattern must be "
                "text or a mapping with 'summary'"
            )
    if not failures:
        raise UsageError(f"{source}: no failure_patterns: nothing to extract")
    epic = data.get("epic") or data.get("epic_id") or data.get("sd_id")
    category = data.get("learning_category") or data.get("category")
    title = data.get("title")
    return Retro(
        source,
        title=str(title) if isinstance(title, str | int) else None,
        epic=str(epic) if isinstance(epic, str | int) else None,
        category=str(category) if isinstance(category, str) else None,
        failures=failures,
        solutions=[s for k in SOLUTIONS for s in _strings(data, k, text, source)],
        prevention=[s for k in PREVENTION for s in _strings(data, k, text, source)],
    )


def parse_retro(text: str, source: str) -> Retro:
    """A retrospective from YAML, JSON or Markdown (one-line file:line errors)."""
    if source.endswith((".md", ".markdown")) or (
        not source.endswith((".yaml", ".yml", ".json")) and _looks_like_markdown(text)
    ):
        return parse_markdown(text, source)
    return parse_structured(load_document(text, source), text, source)


def _looks_like_markdown(text: str) -> bool:
    """Stdin or an unknown extension: Markdown when a `## Failure patterns`-style heading is
    there (a YAML comment line also starts with `#`, so that alone says nothing)."""
    for line in text.splitlines():
        heading = _HEADING.match(line)
        if heading and len(heading.group(1)) > 1 and _key(heading.group(2)) in KNOWN:
            return True
    return False


def pattern_specs(retro: Retro) -> list[DraftSpec]:
    """One pattern draft per failure pattern."""
    specs = []
    named = f"retrospective {retro.source}" + (f" ({retro.title})" if retro.title else "")
    for failure in retro.failures:
        summary = str(failure["summary"])
        own = failure.get("solution") or failure.get("solutions") or []
        own = [own] if isinstance(own, str) else [str(s) for s in own if isinstance(s, str)]
        texts = list(dict.fromkeys([*own, *retro.solutions]))
        solutions = [{"id": f"s{i}", "text": t} for i, t in enumerate(texts, 1)]
        severity = failure.get("severity")
        category = failure.get("category") or retro.category
        specs.append(
            DraftSpec(
                title=clip(summary.splitlines()[0], 120, ""),
                origin=named,
                kind="pattern",
                problem=summary,
                root_cause=str(failure.get("root_cause") or ""),
                solution="\n".join(f"- {s['id']}: {s['text']}" for s in solutions),
                takeaway=texts[0] if texts else "",
                severity=severity if severity in ("high", "medium", "low") else "medium",
                category=str(category) if category else None,
                tags=["retro", "auto-draft"],
                source={"epic": retro.epic},
                solutions=solutions,
                prevention=list(dict.fromkeys(retro.prevention)),
            )
        )
    return specs
