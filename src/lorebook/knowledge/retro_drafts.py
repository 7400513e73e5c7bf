"""A retrospective's pattern drafts: one per failure, with what addresses it paired to it.

A solution or a what-worked item goes to the failure it addresses, by the first rule that applies:
1. the same bullet ("Deploy blocked by a port conflict — fix: ask the registry"; also `fixed by`,
   `solution:`, `workaround:`, an arrow `→`), or a sub-item under the failure (a `root cause:` /
   `cause:` sub-item is its root cause), or a structured failure's own `solution(s)`;
2. an explicit reference in the item: `(fixes #2)`, `re: #2` (the failure's number, from 1 in the
   file's order), `re: <failure text>`, or a structured item's `fixes:` / `re:` key. A reference
   that names no failure is an error: the author meant a pairing that cannot be made;
3. the failure it is most `similar.related` to, at or above `similar.RELATED`.
Anything else stays unpaired: a failure nothing addresses gets no solution, and a "went well"
item that matches no failure is no failure's prevention.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..errors import UsageError
from ..redact.sanitize import clip
from .drafting import DraftSpec
from .retro import Item, Retro, section_name
from .similar import RELATED, related

_SAME_BULLET = re.compile(
    r"\s*(?:[;—–(]|\s-{1,2}\s)\s*(?:(?:fixed|solved|resolved|addressed|mitigated) by|fix|"
    r"solution|workaround|resolution|mitigation)\s*:?\s+(.+?)\)?\s*$",
    re.I,
)
_ARROW = re.compile(r"\s*(?:→|->|=>)\s*(.+)$")
_CAUSE = re.compile(r"^(?:root cause|cause|because|why)\s*:?\s*(.+)$", re.I)
_FIX_PREFIX = re.compile(r"^(?:(?:fixed|solved|resolved) by|fix|solution|workaround)\s*:?\s+", re.I)
_WORDS = r"(?:fix(?:es|ed)?|re|addresses|address|for|see|closes)"
_NUMBER_REF = re.compile(
    rf"\s*(?:\(\s*(?:{_WORDS}\s*:?\s*)?#(\d+)\s*\)|\b{_WORDS}\s*:?\s*#(\d+)\b)", re.I
)
_TEXT_REF = re.compile(r"\s*\(?\bre:\s*([^)#][^)]*?)\s*\)?\s*$", re.I)


@dataclass
class Paired:
    """One failure with what was paired with it."""

    failure: Item
    summary: str
    root_cause: str = ""
    solutions: list[str] = field(default_factory=list)
    prevention: list[str] = field(default_factory=list)


def _where(retro: Retro, item: Item) -> str:
    return f"{retro.source}:{item.line}" if item.line else retro.source


def _own(failure: Item) -> Paired:
    """The failure's summary, and what its own bullet and sub-items say."""
    summary, solutions, causes = failure.text, [], []
    for pattern in (_SAME_BULLET, _ARROW):
        found = pattern.search(summary)
        if found and found.start() > 0:
            summary, solutions = summary[: found.start()].strip(" .,;:"), [found.group(1)]
            break
    for sub in failure.subs:
        cause = _CAUSE.match(sub)
        if cause:
            causes.append(cause.group(1).strip())
        else:
            solutions.append(_FIX_PREFIX.sub("", sub).strip())
    root = failure.fields.get("root_cause")
    if isinstance(root, str) and root.strip():
        causes.insert(0, root.strip())
    return Paired(failure, summary, "\n".join(causes), [s for s in solutions if s])


def _reference(retro: Retro, item: Item, pairs: list[Paired]) -> tuple[str, Paired | None]:
    """(the item's text without its reference, the failure it names or None for none)."""
    text, number, named = item.text, None, None
    if item.reference is not None:
        raw = item.reference.strip().lstrip("#")
        number, named = (int(raw), None) if raw.isdigit() else (None, item.reference)
    else:
        found = _NUMBER_REF.search(text)
        if found:
            number = int(found.group(1) or found.group(2))
            text = (text[: found.start()] + text[found.end() :]).strip()
        else:
            found = _TEXT_REF.search(text)
            if found and found.start() > 0:
                named, text = found.group(1), text[: found.start()].strip()
    if number is not None:
        if not 1 <= number <= len(pairs):
            raise UsageError(
                "{}: {!r} refers to failure #{}, but the retrospective lists {} failure(s)",
                _where(retro, item),
                item.text,
                number,
                len(pairs),
            )
        return text, pairs[number - 1]
    if named is not None:
        wanted = section_name(named)
        hit = next((p for p in pairs if wanted and wanted in section_name(p.summary)), None)
        if hit is None:
            scored = [(related(named, p.summary), i) for i, p in enumerate(pairs)]
            best, index = max(scored, key=lambda s: (s[0], -s[1]))
            hit = pairs[index] if best > 0 else None
        if hit is None:
            raise UsageError(
                "{}: {!r} refers to {!r}, which names no failure of the retrospective",
                _where(retro, item),
                item.text,
                named,
            )
        return text, hit
    return text, None


def _closest(text: str, pairs: list[Paired]) -> Paired | None:
    """The failure `text` is most related to, at or above the threshold (ties: the first)."""
    best, found = 0.0, None
    for paired in pairs:
        score = related(text, paired.summary)
        if score > best:
            best, found = score, paired
    return found if best >= RELATED else None


def pair(retro: Retro) -> list[Paired]:
    """Every failure of `retro` with the solutions and prevention that address it."""
    pairs = [_own(failure) for failure in retro.failures]
    for items, target in ((retro.solutions, "solutions"), (retro.worked, "prevention")):
        for item in items:
            text, paired = _reference(retro, item, pairs)
            paired = paired or _closest(text, pairs)
            if paired is not None and text:
                getattr(paired, target).append(text)
    return pairs


# -- drafts -------------------------------------------------------------------------------------
def pattern_specs(retro: Retro) -> list[DraftSpec]:
    """One pattern draft per failure, with the solutions and prevention paired to it."""
    specs = []
    named = f"retrospective {retro.source}" + (f" ({retro.title})" if retro.title else "")
    for paired in pair(retro):
        failure = paired.failure
        texts = list(dict.fromkeys(paired.solutions))
        solutions = [{"id": f"s{i}", "text": t} for i, t in enumerate(texts, 1)]
        severity = failure.fields.get("severity")
        category = failure.fields.get("category") or retro.category
        specs.append(
            DraftSpec(
                title=clip(paired.summary.splitlines()[0], 120, ""),
                origin=named,
                kind="pattern",
                problem=paired.summary,
                root_cause=paired.root_cause,
                solution="\n".join(f"- {s['id']}: {s['text']}" for s in solutions),
                takeaway=texts[0] if texts else "",
                severity=severity if severity in ("high", "medium", "low") else "medium",
                category=str(category) if category else None,
                tags=["retro", "auto-draft"],
                source={"epic": retro.epic},
                solutions=solutions,
                prevention=list(dict.fromkeys(paired.prevention)),
            )
        )
    return specs
