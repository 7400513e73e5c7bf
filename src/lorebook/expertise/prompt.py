"""The Markdown block an agent reads before a task (the seed's format); pure functions."""

from __future__ import annotations

from typing import Any

from ..redact.sanitize import clip


def _text(value: Any) -> str:
    if isinstance(value, dict):  # a pattern written as {name, description}
        name, description = value.get("name"), value.get("description")
        if name and description:
            return f"{name} — {description}"  # "name: text" would read as a secret assignment
        return " ".join(f"{k}: {v}" for k, v in value.items())
    return " ".join(str(value).split())


def _items(content: dict[str, Any], key: str) -> list[Any]:
    value = content.get(key)
    return list(value) if isinstance(value, list) else []


def format_prompt(content: dict[str, Any]) -> str:
    """Heading, overview, Key Files (10, then "... and N more"), Known Patterns (5), Best
    Practices (5), Lessons from Past Issues (last 3, with solutions), Effective Approaches
    (last 3)."""
    domain = str(content.get("domain") or "general")
    lines = [f"## Domain Expertise: {domain.title()}", ""]
    overview = _text(content.get("overview") or "")
    if overview:
        lines += [overview, ""]
    files = _items(content, "core_files")
    if files:
        lines.append("### Key Files")
        lines += [f"- `{f}`" for f in files[:10]]
        if len(files) > 10:
            lines.append(f"- ... and {len(files) - 10} more")
        lines.append("")
    for key, title in (("patterns", "Known Patterns"), ("best_practices", "Best Practices")):
        entries = _items(content, key)
        if entries:
            lines.append(f"### {title}")
            lines += [f"- {_text(p)}" for p in entries[:5]]
            lines.append("")
    lessons = [x for x in _items(content, "learned_from_failures") if isinstance(x, dict)]
    if lessons:
        lines.append("### Lessons from Past Issues")
        for lesson in lessons[-3:]:
            issue = clip(_text(lesson.get("issue") or "Issue"), 50, "")
            error = clip(_text(lesson.get("error") or ""), 100, "")
            lines.append(f"- **{issue}**: {error}")
            if lesson.get("solution"):
                lines.append(f"  - Solution: {_text(lesson['solution'])}")
        lines.append("")
    approaches = _items(content, "effective_patterns")
    if approaches:
        lines.append("### Effective Approaches")
        lines += [f"- {_text(p)}" for p in approaches[-3:]]
        lines.append("")
    return "\n".join(lines)
