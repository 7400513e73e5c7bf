"""Which domain a task belongs to: keyword scores plus file-path hints (the seed's rules).

A keyword scores 1 when it occurs as a whole word (or inflected: "tests", "migrations",
"deployed") in the text; a file path scores 2 for a domain whose globs match it (`src/auth/x.py`
for security's `**/auth/**/*.py`) or that the seed's path hint names: testing (`test`), api
(`api`, `route`) or frontend (`component`, `ui` as a path part) — 2 at most per file and domain.
The highest score wins; a tie goes to the domain with more keyword hits, then to the one listed
first in the table; no score at all means `general`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .schema import FALLBACK, DomainTable, glob_regex

if TYPE_CHECKING:
    from ..contracts.expertise import Classification as ClassificationData

_WORD = re.compile(r"[a-z0-9]+")
_PATH_PART = re.compile(r"[/\\._-]+")
_SUFFIXES = ("", "s", "es", "ing", "ed", "d", "er", "ers", "ment", "ments")


@dataclass(frozen=True)
class Classification:
    domain: str
    scores: dict[str, int]
    matched: dict[str, list[str]]

    def to_dict(self) -> ClassificationData:
        return {"domain": self.domain, "scores": self.scores, "matched": self.matched}


def _keyword_hits(words: set[str], text: str, keyword: str) -> bool:
    if " " in keyword:
        return keyword in text
    # inflected forms count ("tests", "migrations", "deployed"), other words that merely start
    # alike do not ("format" is not "form", "author" is not "auth")
    return any(keyword + suffix in words for suffix in _SUFFIXES)


def path_hint(path: str) -> str | None:
    """The seed's file-path hint for one path (test -> testing, api/route -> api, ...)."""
    lower = path.lower()
    parts = set(_PATH_PART.split(lower))
    if "test" in lower:
        return "testing"
    if "api" in parts or "route" in lower:
        return "api"
    if "component" in lower or "ui" in parts:
        return "frontend"
    return None


def classify(
    text: str, files: Iterable[str] = (), table: DomainTable | None = None
) -> Classification:
    """Score every domain for `text` and `files`; see the module docstring for the rules."""
    table = table or DomainTable()
    lower = text.lower()
    words = set(_WORD.findall(lower))
    scores = {name: 0 for name in table.names}
    text_scores = dict(scores)
    matched: dict[str, list[str]] = {name: [] for name in table.names}
    for name in table.names:
        for keyword in table.keywords.get(name, ()):
            if _keyword_hits(words, lower, keyword.lower()):
                scores[name] += 1
                text_scores[name] += 1
                matched[name].append(keyword)
    globs = {name: [glob_regex(g) for g in table.globs.get(name, ())] for name in table.names}
    for path in files:
        hint = path_hint(path)
        for name in table.names:
            if name == hint or any(regex.match(path) for regex in globs[name]):
                scores[name] += 2
                matched[name].append(path)
    # a tie goes to the domain the words themselves point at, then to the one listed first
    best = max(table.names, key=lambda name: (scores[name], text_scores[name]))
    domain = best if scores[best] > 0 else FALLBACK
    return Classification(domain, scores, {k: v for k, v in matched.items() if v})


def too_weak(found: Classification, minimum: int) -> str | None:
    """Why learning must not write into `found.domain`: its score is below `minimum` (the
    fallback `general`, where nothing points anywhere, is always allowed); None when it may."""
    score = found.scores.get(found.domain, 0)
    if found.domain == FALLBACK or score >= minimum:
        return None
    why = ", ".join(found.matched.get(found.domain, [])) or "nothing"
    return (
        f"its best domain, {found.domain}, scores {score} (matched: {why}), below "
        f"expertise.learn_min_score {minimum}"
    )
