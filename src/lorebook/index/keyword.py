"""The BM25 keyword index, with title-weighted fields and query-side synonyms.

Built from the documents kept in the manifest and saved next to it (`keyword_store`): tokenizing
2,000 learnings cost a cold search more than all else it does. The scoring is BM25's Lucene
variant (as bm25s computes it, tested against it) over plain postings lists: importing bm25s
(scipy, numpy) cost a cold keyword search ~0.9 s; a query over 10,000 learnings costs
milliseconds either way.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable

from .synonyms import STOPWORDS, SynonymTable, stem, terms, words

TYPE_CHECKING = False  # typing costs milliseconds on cold paths; mypy still sees it
if TYPE_CHECKING:
    from typing import Any

if TYPE_CHECKING:  # documents.py reads front matter (pydantic): not for `lore resume`
    from .documents import Document

TITLE_WEIGHT = 3  # title terms count this many times: titles say what a learning is about
K1 = 1.2
B = 0.75
# a prompt is asked in chat: its terms beyond these (the rarest in the learnings) are chatter
SALIENT_TERMS = 12
# a prompt of more terms than this (besides stop words) is a paragraph: one word in common
# with a learning is chance, not a topic; two of its salient terms must match
LONG_PROMPT_TERMS = 8
# words of conversation that the stop words leave in a prompt (as stemmed terms): they say
# nothing about the work, yet a learning may happen to use them
CHATTER = frozenset(terms(words(
    "hi hello hey hiya morning afternoon evening thanks thank cheers please sorry okay ok "
    "hope weekend yesterday today tomorrow honestly probably maybe really quick favour favor "
    "appreciated appreciate lot bit little sure idea look glance help wonder wondering "
    "think thought know let like love need want would mind whether also still again "
    "after before big small good great nice fine weird odd strange thing things stuff way "
    "week day night everyone someone anyone something anything everything suddenly already "
    "actually basically now right well yes guys folks kind sort"
)))  # fmt: skip


def document_terms(doc: Document) -> list[str]:
    title = terms(words(doc.title))
    meta = terms(words(" ".join([*doc.tags, doc.category or ""])))
    body = terms(words(doc.body))
    return title * TITLE_WEIGHT + meta + body


class KeywordIndex:
    """BM25 scores of every document for a query, plus a [0, 1] similarity per document."""

    def __init__(
        self,
        docs: list[Document],
        synonyms: SynonymTable,
        terms_of: Callable[[int, Document], list[str]] | None = None,
    ) -> None:
        """`terms_of(i, doc)` may return cached terms (tokenizing is most of the build time)."""
        self.ids = [d.id for d in docs]
        self.synonyms = synonyms
        get = terms_of or (lambda _, doc: document_terms(doc))
        corpus = [get(i, d) or [""] for i, d in enumerate(docs)]
        self.size = len(corpus)
        self.postings: dict[str, list[list[int]]] = {}  # term -> [[document...], [frequency...]]
        self._saved: dict[str, str] = {}  # from `restore`: decoded per query term (`_posting`)
        for i, tokens in enumerate(corpus):
            for term, count in Counter(tokens).items():
                found = self.postings.get(term)
                if found is None:
                    self.postings[term] = [[i], [count]]
                else:
                    found[0].append(i)
                    found[1].append(count)
        average = sum(map(len, corpus)) / self.size if corpus else 1.0
        # the length part of the term-frequency saturation, per document
        self.norms = [K1 * (1 - B + B * len(tokens) / average) for tokens in corpus]

    def state(self) -> dict[str, Any]:
        """What `restore` needs, JSON-friendly: each postings list as one string of
        "document frequency ..." pairs, so loading parses strings and decodes only the lists a
        query asks for. Made only of the documents' terms (redacted before they were indexed)."""
        postings = dict(self._saved)
        for term, (docs, counts) in self.postings.items():
            postings[term] = " ".join(f"{d} {c}" for d, c in zip(docs, counts, strict=True))
        return {"ids": self.ids, "norms": self.norms, "postings": postings}

    @classmethod
    def restore(cls, state: dict[str, Any], synonyms: SynonymTable) -> KeywordIndex:
        """The index `state()` described (ValueError when it is not one; a damaged postings
        list raises ValueError when a query reads it)."""
        index = cls.__new__(cls)
        try:
            index.ids = [str(i) for i in state["ids"]]
            index.norms = [float(n) for n in state["norms"]]
            saved = state["postings"]
        except (KeyError, TypeError) as exc:
            raise ValueError(f"not a keyword index: {exc}") from None
        if not isinstance(saved, dict) or len(index.norms) != len(index.ids):
            raise ValueError("not a keyword index")
        index.postings = {}
        index._saved = saved
        index.size = len(index.ids)
        index.synonyms = synonyms
        return index

    def _posting(self, term: str) -> list[list[int]] | None:
        found = self.postings.get(term)
        if found is None and term in self._saved:
            found = self.postings[term] = _decode(self._saved[term], self.size)
        return found

    def idf(self, term: str) -> float:
        found = self._posting(term)
        df = len(found[0]) if found else 0
        return math.log(1 + (self.size - df + 0.5) / (df + 0.5))

    def query_terms(self, query: str) -> tuple[list[str], list[str]]:
        """(the query's own terms, the terms its synonyms add)."""
        qwords = words(query)
        own = terms(qwords)
        extra: list[str] = []
        for phrase in self.synonyms.expansions(qwords):
            extra.extend(terms(phrase))
        return own, [t for t in extra if t not in own]

    def salient(self, query: str, most: int = SALIENT_TERMS) -> str:
        """The `most` telling terms of a long natural prompt, as a query: chatter and terms no
        learning uses dropped (they cannot match, and counted they would sink the similarity
        of every learning under the floor), the rarest (highest IDF) first; a synonym the
        learnings use stands in for a spelling they do not. A query of them asks what the
        prompt is about, whatever chat surrounds it."""
        qwords = words(query)
        spelled: dict[str, str] = {}  # term -> a word that spells it (stems are not words)
        for word in [*qwords, *(w for p in self.synonyms.expansions(qwords) for w in p)]:
            if word not in STOPWORDS:
                spelled.setdefault(stem(word), word)
        kept = []
        for term, word in spelled.items():
            found = self._posting(term) if term not in CHATTER else None
            if found:
                kept.append((len(found[0]), term, word))
        kept.sort()
        return " ".join(word for _, _, word in kept[:most])

    def matched(self, query: str) -> list[int]:
        """How many of the query's own terms each document holds, in index order."""
        counts = [0] * self.size
        for term in dict.fromkeys(terms(words(query))):
            for i in (self._posting(term) or [[]])[0]:
                counts[i] += 1
        return counts

    def scores(self, query: str) -> tuple[list[float], list[float]]:
        """(raw BM25 scores, similarity in [0, 1]) for every document, in index order.

        Similarity is the score over the sum of the query's own terms' IDF — what a learning of
        average length mentioning every term once would score — capped at 1: roughly the
        IDF-weighted share of the query that matched, so it means the same for every query.
        (The stricter ceiling, every term at saturation, left most right answers of the
        duplicate-issue benchmarks under the 0.15 threshold in keyword mode.)
        """
        raw = [0.0] * self.size
        own, extra = self.query_terms(query)
        if not self.size or not own:
            return raw, list(raw)
        for term in dict.fromkeys(own + extra):
            found = self._posting(term)
            if not found:
                continue
            idf, norms = self.idf(term), self.norms
            for i, count in zip(found[0], found[1], strict=True):
                raw[i] += idf * count / (norms[i] + count)
        ceiling = sum(self.idf(t) for t in dict.fromkeys(own))
        if ceiling <= 0:
            return raw, [0.0] * self.size
        # every score is >= 0 (IDF > 0, counts > 0): only the cap at 1 is needed
        return raw, [score / ceiling if score < ceiling else 1.0 for score in raw]


def _decode(text: Any, size: int) -> list[list[int]]:
    """A saved postings list -> [[document...], [frequency...]]; ValueError when damaged."""
    if not isinstance(text, str):
        raise ValueError("a damaged keyword index: a postings list is not text")
    numbers = [int(n) for n in text.split()]
    docs, counts = numbers[0::2], numbers[1::2]
    if not docs or len(docs) != len(counts) or not all(0 <= d < size for d in docs):
        raise ValueError("a damaged keyword index: a postings list names no such document")
    return [docs, counts]
