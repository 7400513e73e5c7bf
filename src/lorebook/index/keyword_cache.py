"""`KeywordCache`: the keyword side of a store's index as its searches read it -- the manifest on
disk, its BM25 index, the saved keyword index and its SQLite terms, and one built from the files
when there is no index -- kept in memory while the files on disk stay as they were; whether all
of it still matches the learning files (`fresh`); and the answers the keyword side gives alone
(a keyword search from the saved index, the lessons about a prompt). Apart from `SearchIndex`,
which takes turns, refreshes, asks the vector store, ranks (handed in as `Rank`) and warns.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..notices import Notice
from .chunks import CHUNKER_VERSION
from .corpus import Corpus
from .keyword import KeywordIndex, document_terms
from .manifest import Entry, Manifest, ManifestCorrupt, files_match

if TYPE_CHECKING:
    from ..paths import Layout
    from ..problems import Problem
    from ..redact.sanitize import Sanitizer
    from .chroma_store import ChromaStore
    from .keyword_store import SavedIndex
    from .result import SearchResult
    from .synonyms import SynonymTable

    # the caller's ranking of a corpus by its similarities; `full(i)` reads document `i` whole
    Rank = Callable[[Corpus, Sequence[float], Callable[[int], dict[str, Any]] | None],
                    list[SearchResult]]  # fmt: skip

DAMAGED = "the saved keyword index (.lore/cache/index/keyword.jsonl) was damaged; rebuilt it"


class KeywordCache:
    """The manifest and BM25 index of one index folder, read again only when they changed.
    `store` is the index's vector store (its backend, and closed when another process wrote
    the index: Chroma caches segments per process); `warn` says what a search should hear."""

    def __init__(
        self,
        layout: Layout,
        folder: Path,
        store: ChromaStore,
        synonyms: SynonymTable,
        sanitizer: Sanitizer,
        warn: Callable[[str], None],
    ) -> None:
        self.layout, self.folder, self.store = layout, folder, store
        self.synonyms, self.sanitizer, self.warn = synonyms, sanitizer, warn
        self._keyword: tuple[tuple[int, int], Manifest, KeywordIndex] | None = None
        self._stored: tuple[tuple[int, int], Manifest | None] | None = None
        self._terms: dict[str, tuple[str, list[str]]] = {}  # file -> (hash, BM25 terms)
        self._saved: SavedIndex | None = None  # the saved keyword index, while it holds
        self._corpus: tuple[Manifest, Corpus] | None = None  # of the manifest in `_keyword`
        self._files_index: tuple[tuple[Any, ...], tuple[Manifest, KeywordIndex], int] | None = None

    def stored_manifest(self) -> tuple[tuple[int, int], Manifest | None]:
        """The manifest on disk (None: missing or unreadable), read again only when it changed."""
        path = self.folder / "manifest.json"
        try:
            st = path.stat()
            stamp = (st.st_mtime_ns, st.st_size)
        except OSError:
            stamp = (0, 0)
        if self._stored is None or self._stored[0] != stamp:
            try:
                self._stored = (stamp, Manifest.load(path))
            except ManifestCorrupt:
                self._stored = (stamp, None)
        return self._stored

    def manifest(self) -> tuple[Manifest, KeywordIndex]:
        stamp, manifest = self.stored_manifest()
        if self._keyword is not None and self._keyword[0] == stamp:
            return self._keyword[1], self._keyword[2]
        if manifest is None:
            manifest = Manifest(None, None, 0, self.store.backend)
        keyword = self.keyword_index(manifest)
        if self._keyword is not None:
            self.store.close()  # another process wrote: Chroma caches segments per process
        self._keyword = (stamp, manifest, keyword)
        return manifest, keyword

    def keyword_index(self, manifest: Manifest, *, saved: bool = True) -> KeywordIndex:
        """BM25 over the manifest's documents: the one saved for this manifest (by its digest),
        else built, reusing the terms of files whose hash is known, and saved for the next
        process. A manifest made from the files in memory (`from_files`) is never saved."""
        from .documents import Document
        from .keyword_store import (
            SavedIndexDamaged,
            load_keyword_index,
            save_keyword_index,
            trusted,
        )
        from .terms_db import current as terms_current

        entries = [(k, e) for k, e in manifest.files.items() if e.doc]
        if manifest.digest and saved:
            try:
                found = load_keyword_index(self.folder, manifest.digest, self.synonyms)
            except SavedIndexDamaged:
                self.warn(DAMAGED)
                found = None
            if found is not None and found.keys == [k for k, _ in entries]:
                # the same bytes, another file: re-key; and the SQLite copy the prompt hook
                # reads, when missing (an older lorebook) or not of this manifest
                if not trusted(found, manifest.stamp) or not terms_current(self.folder):
                    save_keyword_index(self.folder, manifest, found.index)
                return found.index
        docs = [Document.from_dict(e.doc) for _, e in entries if e.doc]
        cache = self._terms
        fresh: dict[str, tuple[str, list[str]]] = {}

        def terms_of(i: int, doc: Document) -> list[str]:
            key, entry = entries[i]
            known = cache.get(key)
            found = known[1] if known and known[0] == entry.hash else document_terms(doc)
            fresh[key] = (entry.hash, found)
            return found

        keyword = KeywordIndex(docs, self.synonyms, terms_of)
        self._terms = fresh
        save_keyword_index(self.folder, manifest, keyword)
        return keyword

    def rebuilt(self, manifest: Manifest) -> KeywordIndex:
        """The manifest's keyword index built again (the saved one was damaged) and saved; the
        next search reads the manifest again."""
        keyword = self.keyword_index(manifest, saved=False)
        self._keyword = None
        return keyword

    def corpus(self, manifest: Manifest) -> Corpus:
        """What ranking reads of the manifest's documents, made once per manifest."""
        if self._corpus is None or self._corpus[0] is not manifest:
            self._corpus = (manifest, Corpus.of(manifest))
        return self._corpus[1]

    def from_files(self) -> tuple[Manifest, KeywordIndex]:
        """A keyword index built in memory from the learning files, when the cache has none
        (deleted, or being rebuilt by another process): the files can still answer. Their
        documents are redacted as the indexer redacts them: results print from them."""
        from .documents import learning_files, read_document
        from .indexer import redact_document

        paths = learning_files(self.layout)
        stamp = tuple(_stat_key(path) for path in paths)  # while the files are as they were,
        if self._files_index is not None and self._files_index[0] == stamp:  # answer from memory
            self._skipped(self._files_index[2])  # and say so again: it is this search's too
            return self._files_index[1]
        manifest = Manifest(None, None, 0, self.store.backend)
        skipped: list[Problem] = []
        for path in paths:
            got = read_document(path, self.layout, skipped.append)
            if got is not None and got[1] is not None:
                doc = redact_document(self.sanitizer, got[1], self.layout).to_dict()
                manifest.files[self.layout.rel(path)] = Entry(got[0], 0, 0, doc=doc)
        self._skipped(len(skipped))
        found = (manifest, self.keyword_index(manifest))
        self._files_index = (stamp, found, len(skipped))
        return found

    def _skipped(self, count: int) -> None:
        if count:
            self.warn(Notice("{} learning file(s) skipped; run `lore check` for details", count))

    def saved(self) -> SavedIndex | None:
        """The saved keyword index (`keyword_store.load_saved`): SavedIndexDamaged or
        ValueError when it cannot be read -- the caller then calls `damaged`."""
        from .keyword_store import load_saved

        self._saved = load_saved(self.folder, self.synonyms, self._saved)
        return self._saved

    def damaged(self) -> None:
        """The saved keyword index could not be used: say so, and remove it (rebuilt later)."""
        from .keyword_store import discard

        self._saved = None
        self.warn(DAMAGED)
        discard(self.folder)

    def warm(self) -> bool:
        """The manifest and its keyword index are in memory and current: then the full path
        costs less than reading the saved index again."""
        try:
            st = (self.folder / "manifest.json").stat()
        except OSError:
            return False
        return self._keyword is not None and self._keyword[0] == (st.st_mtime_ns, st.st_size)

    def fresh(self, model: Callable[[], str | None], saved: SavedIndex | None = None) -> bool:
        """The index (or the `saved` keyword index) matches the files, by their size and mtime,
        for the model configured (`model()`, asked only when there is an index): a search then
        needs neither the model nor Chroma to refresh. `lore index` still checks the vector
        store itself; a search sees a damaged one when it queries it."""
        files: Mapping[str, Sequence[int]]
        if saved is not None:
            pins, files, vectors = saved.pins, saved.files, saved.vectors
        else:
            _, manifest = self.stored_manifest()
            if manifest is None:
                return False
            pins = (manifest.model, manifest.chunker, manifest.backend)
            files = {k: (e.size, e.mtime_ns, e.checked_ns) for k, e in manifest.files.items()}
            vectors = any(e.chunks for e in manifest.files.values())
        pinned = model()
        if pins != (pinned, CHUNKER_VERSION, self.store.backend):
            return False
        if not files_match(self.layout, files):
            return False
        return not (pinned and vectors and not self.store.url and not self.store.path_exists())

    def saved_answer(
        self, query: str, usable: Callable[[SavedIndex], bool], rank: Rank
    ) -> list[SearchResult] | None:
        """A keyword search from the saved keyword index alone: no manifest to parse, and only
        the results' documents read. None when it cannot answer (no saved index, or it is not
        `usable`: it or the files changed): the full path then refreshes, rebuilds and saves it."""
        from .keyword_store import SavedIndexDamaged

        try:
            saved = self.saved()
            if saved is None or not usable(saved):
                return None
            _, kw_sim = saved.index.scores(query)
            corpus = Corpus(
                saved.keys, saved.rows, superseded=saved.superseded, files=lambda: saved.files
            )
            return rank(corpus, kw_sim, saved.document)
        except (SavedIndexDamaged, ValueError):  # a postings list too: rebuilt by the full path
            self.damaged()
            return None

    def prompt_answer(self, prompt: str, rank: Rank) -> list[SearchResult]:
        """The learnings about `prompt`, by its salient terms, from the cheapest keyword index
        there is: the SQLite terms (the prompt's terms only: the store's size does not matter),
        else the saved index, else the manifest's or the files' (built and saved, as a search
        would)."""
        import sqlite3

        from .keyword_store import SavedIndexDamaged
        from .terms_db import discard as discard_terms
        from .terms_db import open_terms

        terms = open_terms(self.folder)
        if terms is not None:
            try:
                corpus = Corpus(terms.keys, terms.rows, superseded=terms.superseded)  # type: ignore[arg-type]
                index = terms.index(prompt, self.synonyms)
                return _about(index, corpus, prompt, rank, terms.document)
            except (sqlite3.Error, ValueError):  # rebuilt with the JSON index, below
                discard_terms(self.folder)
            finally:
                terms.close()
        try:
            saved = self.saved()
            if saved is not None:
                corpus = Corpus(saved.keys, saved.rows, superseded=saved.superseded)
                return _about(saved.index, corpus, prompt, rank, saved.document)
        except (SavedIndexDamaged, ValueError):  # rebuilt below, as a search would
            self.damaged()
        manifest, keyword = self.manifest()
        if not manifest.files:
            manifest, keyword = self.from_files()
        if not manifest.files:
            return []
        return _about(keyword, Corpus.of(manifest), prompt, rank)


def _about(
    keyword: KeywordIndex,
    corpus: Corpus,
    prompt: str,
    rank: Rank,
    full: Callable[[int], dict[str, Any]] | None = None,
) -> list[SearchResult]:
    """`rank` of the corpus by the prompt's salient terms (`KeywordIndex.salient`); a long
    prompt's learnings must match two of them."""
    from .keyword import LONG_PROMPT_TERMS
    from .synonyms import terms, words

    query = keyword.salient(prompt)
    if not query:
        return []
    _, sim = keyword.scores(query)
    if len(set(terms(words(prompt)))) > LONG_PROMPT_TERMS:
        sim = [s if n >= 2 else 0.0 for s, n in zip(sim, keyword.matched(query), strict=True)]
    return rank(corpus, sim, full)


def _stat_key(path: Path) -> tuple[str, int, int]:
    try:
        st = path.stat()
    except OSError:
        return (str(path), -1, -1)
    return (str(path), st.st_size, st.st_mtime_ns)
