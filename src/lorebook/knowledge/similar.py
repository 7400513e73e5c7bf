"""Near-duplicate detection for drafts: Jaccard similarity of word 3-shingles.

Cheap, deterministic and dependency-free: the text is lower-cased, split into words of letters
and digits, and every run of three consecutive words is a shingle; similarity is
|A ∩ B| / |A ∪ B|. Reordered paragraphs keep most shingles, a changed word removes up to three.
Texts of fewer than three words compare as word sets. Only the substance is compared: the title
and the `## ` sections, without the template's header block and review checklist (dates, ids
and timestamps there would make two drafts of one epic look different).

Two short lines (a retrospective's failure and an action item) share no 3-shingle even when
they are about the same thing: `related` compares their content words instead (no stop words,
plural and -ed/-ing endings folded), with the same Jaccard measure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

WORD = re.compile(r"[a-z0-9]+")
SHINGLE = 3
DUPLICATE = 0.95  # at or above: the draft is not written
SIMILAR = 0.80  # at or above (and below DUPLICATE): `supersedes` is suggested
RELATED = 0.25  # `related`: at or above, two short lines are about the same thing
_STOP = (
    "a an and are as at be been but by for from had has have in into is it its of on or so than "
    "that the their them then there these they this to too was we were what when which while who "
    "will with our us you your not no did do does done get got all any more most some very can "
    "could should would"
)
STOP_WORDS = frozenset(_STOP.split())
REVIEW_HEADING = "## Review checklist"


def substance(title: str, body: str) -> str:
    """The part of a learning two drafts are compared on."""
    start = body.find("## ")
    text = body[start:] if start >= 0 else body
    cut = text.find(REVIEW_HEADING)
    if cut >= 0:
        text = text[:cut]
    return f"{title}\n{text}"


def shingles(text: str, size: int = SHINGLE) -> frozenset[str]:
    words = WORD.findall(text.lower())
    if len(words) < size:
        return frozenset(words)
    return frozenset(" ".join(words[i : i + size]) for i in range(len(words) - size + 1))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def content_words(text: str) -> frozenset[str]:
    """The words that carry meaning: no stop words, endings folded ("ports" is "port")."""
    return frozenset(_stem(w) for w in WORD.findall(text.lower()) if w not in STOP_WORDS)


def related(a: str, b: str) -> float:
    """Jaccard similarity of two short texts' content words (0 when either has none)."""
    mine, theirs = content_words(a), content_words(b)
    return jaccard(mine, theirs) if mine and theirs else 0.0


@dataclass(frozen=True)
class Match:
    learning: str
    similarity: float


def best_matches(
    text: str, candidates: Iterable[tuple[str, str]], *, threshold: float = SIMILAR
) -> list[Match]:
    """Candidates (id, substance text) at least `threshold` similar to `text`, best first."""
    mine = shingles(text)
    found: list[Match] = []
    for learning, other in candidates:
        theirs = shingles(other)
        small, large = sorted((len(mine), len(theirs)))
        if large and small / large < threshold:  # Jaccard can never reach the threshold
            continue
        score = jaccard(mine, theirs)
        if score >= threshold:
            found.append(Match(learning, round(score, 4)))
    found.sort(key=lambda m: (-m.similarity, m.learning))
    return found
