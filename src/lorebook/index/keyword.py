"""The BM25 keyword index (bm25s), with title-weighted fields and query-side synonyms.

Built in memory from the documents kept in the manifest: 10,000 learnings index in well under a
second, so there is nothing to keep in sync on disk.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING

from .documents import Document
from .synonyms import SynonymTable, terms, words

if TYPE_CHECKING:
    import numpy as np

TITLE_WEIGHT = 3  # title terms count this many times: titles say what a learning is about
K1 = 1.2
B = 0.75


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
        import bm25s

        self.ids = [d.id for d in docs]
        self.synonyms = synonyms
        get = terms_of or (lambda _, doc: document_terms(doc))
        corpus = [get(i, d) or [""] for i, d in enumerate(docs)]
        self.size = len(corpus)
        self.df: Counter[str] = Counter()
        for tokens in corpus:
            self.df.update(set(tokens))
        self.model = bm25s.BM25(k1=K1, b=B)
        if corpus:
            self.model.index(corpus, show_progress=False)

    def idf(self, term: str) -> float:
        df = self.df.get(term, 0)
        return math.log(1 + (self.size - df + 0.5) / (df + 0.5))

    def query_terms(self, query: str) -> tuple[list[str], list[str]]:
        """(the query's own terms, the terms its synonyms add)."""
        qwords = words(query)
        own = terms(qwords)
        extra: list[str] = []
        for phrase in self.synonyms.expansions(qwords):
            extra.extend(terms(phrase))
        return own, [t for t in extra if t not in own]

    def scores(self, query: str) -> tuple[np.ndarray, np.ndarray]:
        """(raw BM25 scores, similarity in [0, 1]) for every document, in index order.

        Similarity is the score over the sum of the query's own terms' IDF — what a learning of
        average length mentioning every term once would score — capped at 1: roughly the
        IDF-weighted share of the query that matched, so it means the same for every query.
        (The stricter ceiling, every term at saturation, left most right answers of the
        duplicate-issue benchmarks under the 0.15 threshold in keyword mode.)
        """
        import numpy as np

        own, extra = self.query_terms(query)
        if not self.size or not own:
            zeros = np.zeros(self.size, dtype=np.float32)
            return zeros, zeros
        unique = list(dict.fromkeys(own + extra))
        ids = self.model.get_tokens_ids(unique)
        if not ids:
            zeros = np.zeros(self.size, dtype=np.float32)
            return zeros, zeros
        raw = np.asarray(self.model.get_scores(ids), dtype=np.float32)
        ceiling = sum(self.idf(t) for t in dict.fromkeys(own))
        similarity = np.clip(raw / ceiling, 0.0, 1.0) if ceiling > 0 else raw * 0
        return raw, similarity.astype(np.float32)
