"""Tokens for keyword matching: words, stemming, and a synonym table expanded on the query side.

Query-side expansion is enough for both directions: a query saying "rls" also asks for "row
level security", and a query saying "row level security" also asks for "rls".

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from ..settings import synonym_groups

TYPE_CHECKING = False  # typing costs milliseconds on cold paths; mypy still sees it
if TYPE_CHECKING:
    from typing import Any

# Each group lists interchangeable spellings; config `search.synonyms` adds groups.
DEFAULT_SYNONYMS: tuple[tuple[str, ...], ...] = (
    ("rls", "row level security"),
    ("auth", "authentication", "authn"),
    ("authz", "authorization"),
    ("db", "database"),
    ("k8s", "kubernetes"),
    ("env", "environment"),
    ("config", "configuration", "cfg"),
    ("repo", "repository"),
    ("deps", "dependencies"),
    ("ci", "continuous integration"),
    ("pr", "pull request"),
    ("perf", "performance"),
    ("js", "javascript"),
    ("ts", "typescript"),
    ("py", "python"),
    ("jwt", "json web token"),
    ("sso", "single sign on"),
    ("oom", "out of memory"),
    ("gc", "garbage collection"),
    ("dir", "directory", "folder"),
    ("pkg", "package"),
    ("msg", "message"),
    ("err", "error"),
    ("impl", "implementation"),
    ("async", "asynchronous"),
    ("ui", "user interface"),
    ("tz", "timezone", "time zone"),
    ("regex", "regular expression", "regexp"),
    ("segfault", "segmentation fault"),
    ("hang", "freeze"),
)

STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "for",
        "from",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "no",
        "nor",
        "not",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
    ]
)

_WORD = re.compile(r"[a-z0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def words(text: str) -> list[str]:
    """Lower-case words; camelCase and snake_case identifiers split into their parts."""
    return _WORD.findall(_CAMEL.sub(" ", text).lower())


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    try:
        import Stemmer
    except ImportError:  # PyStemmer is a dependency; without it, matching is exact
        return None
    return Stemmer.Stemmer("english")


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    stemmer = _stemmer()
    return str(stemmer.stemWord(word)) if stemmer is not None else word


def terms(text_words: Iterable[str]) -> list[str]:
    """Index terms: stop words dropped, the rest stemmed."""
    return [stem(w) for w in text_words if w not in STOPWORDS]


class SynonymTable:
    """Phrase groups; `expand` adds the other spellings of every phrase found in a query."""

    def __init__(self, groups: Iterable[Iterable[str]] = DEFAULT_SYNONYMS) -> None:
        self.groups: list[list[tuple[str, ...]]] = []
        for group in groups:
            phrases = [tuple(words(p)) for p in group]
            phrases = [p for p in phrases if p]
            if len(phrases) > 1:
                self.groups.append(phrases)

    @classmethod
    def from_config(cls, extra: object) -> SynonymTable:
        """The built-in groups plus `search.synonyms` (groups, or `{"rls": ["row level
        security"]}`; the typed settings hold groups already)."""
        return cls([*DEFAULT_SYNONYMS, *synonym_groups(extra or ())])

    def expansions(self, query_words: list[str]) -> list[list[str]]:
        """The other spellings (as word lists) of every synonym phrase in the query."""
        found: list[list[str]] = []
        joined = f" {' '.join(query_words)} "
        for group in self.groups:
            present = [p for p in group if f" {' '.join(p)} " in joined]
            if present:
                found.extend(list(p) for p in group if p not in present)
        return found
