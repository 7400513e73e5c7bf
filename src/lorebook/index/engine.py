"""`SearchIndex`: the search capability of one store (update, search), over files in learnings/.

It takes turns between threads, refreshes the index, builds it in the background, fuses the
keyword and dense sides and says what degraded; what it composes is apart, each handed what it
uses: the keyword side (`keyword_cache`), the dense side (`dense`), the ranking (`shortlist`).

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import date
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import Config
from ..errors import UsageError
from ..notices import Notice
from ..paths import Layout
from ..problems import Problem
from ..progress import INDEX_BUILD
from .chroma_store import ChromaStore, ChromaUnavailable, reason
from .corpus import Corpus
from .dense import Model, nearest
from .keyword_cache import DAMAGED, KeywordCache
from .lock import IndexBusy, IndexLocks, IndexReadOnly
from .rank import MODES, Filters
from .result import SearchResult, SearchResults, StatsProvider, no_stats
from .shortlist import shortlist
from .swap import settle
from .synonyms import SynonymTable

if TYPE_CHECKING:
    from ..progress import Progress
    from ..redact.sanitize import Sanitizer
    from .embed import Embedder
    from .indexer import IndexReport
    from .keyword_store import SavedIndex

MAX_QUERY_CHARS = 10_000
UPDATING = "the search index is being updated"


class _Call:
    """What one search gathers as it runs (its warnings, the mode it could use, why it was
    degraded): returned with its results, never left on the index for the next search."""

    __slots__ = ("degraded", "mode", "query", "warnings")

    def __init__(self, query: str, mode: str) -> None:
        self.query, self.mode = query, mode
        self.degraded: str | None = None
        self.warnings: list[str] = []

    def results(self, found: list[SearchResult]) -> SearchResults:
        return SearchResults(found, query=self.query, mode=self.mode, warnings=self.warnings,
                             degraded=self.degraded)  # fmt: skip


class SearchIndex:
    """Hybrid search over a store's learnings; the index under `.lore/cache/index/` is derived.

    Each search returns its own warnings, mode and `degraded` in its `SearchResults`; what the
    instance keeps is about the index and the process (the model that could not load, a
    background build that failed: `standing`). One lock makes its updates and searches safe
    from several threads: they take turns, except that a search while another thread updates
    the index does not wait for it -- it answers by keywords from the saved index or the files."""

    def __init__(
        self,
        layout: Layout,
        config: Config,
        sanitizer: Sanitizer,
        *,
        env: Mapping[str, str] | None = None,
        stats: StatsProvider = no_stats,
        stats_snapshot: Callable[[], StatsProvider] | None = None,
        stale_snapshot: Callable[[str | None], Collection[str]] | None = None,
        warn: Callable[[str], None] | None = None,
    ) -> None:
        """`stats_snapshot`, when given, is called once per search for fresh figures
        (applications, success rate, occurrences) of the learnings found; else `stats`.
        `stale_snapshot` likewise gives the ids of stale learnings (down-ranked, flagged), told
        the learning files' state when the search knows it (`manifest.files_key`), else None.
        `sanitizer` redacts each document as it is indexed (see Indexer)."""
        environ = os.environ if env is None else env
        self._config, self._env = config, environ  # for the background builder's own index
        self.layout = layout
        self.sanitizer = sanitizer
        self.folder = layout.cache / "index"
        self.model_name = config.embedding.model
        self.embedding_enabled = config.embedding.enabled
        url = environ.get("LORE_CHROMA_URL") or config.index.chroma_url or None
        collection = config.index.collection or f"lore-{_slug(layout.root.name)}"
        self.store = ChromaStore(path=self.folder / "chroma", url=url, name=collection)
        self.locks = IndexLocks(self.folder, read_timeout=config.index.read_timeout)
        self.rank = config.search
        self.synonyms = SynonymTable.from_config(config.search.synonyms)
        self.stats = stats
        self.stats_snapshot = stats_snapshot
        self.stale_snapshot = stale_snapshot
        self.warnings: list[str] = []  # every warning given, once each, for the process's life
        self.standing: list[str] = []  # facts about the index every later search repeats
        self._warn = warn
        self._said = threading.Lock()  # `warnings`, `standing`
        self._lock = threading.RLock()  # the caches and the vector store's client: one user
        self._updates = 0  # updates running or waiting in other threads (searches do not wait)
        self._reader: SearchIndex | None = None  # answers by keywords meanwhile (`_meanwhile`)
        self._local = threading.local()  # `.call`: the search this thread runs
        self._model_lock = threading.Lock()  # loading the model; making `_reader`
        self._model = Model(self.model_name, self.embedding_enabled, self._model_lock)
        self._progress: Progress | None = None
        self._building: threading.Event | None = None  # set when the background build is done
        # the manifest, its keyword index and the saved one, kept while the files stay as they were
        self._keywords = KeywordCache(layout, self.folder, self.store, self.synonyms, sanitizer,
                                     self.warn)  # fmt: skip

    # -- model -----------------------------------------------------------------------------
    def on_warning(self, callback: Callable[[str], None]) -> None:
        """Report warnings (model missing, index busy, rebuilt) as they happen."""
        self._warn = callback
        for message in self.warnings:
            callback(message)

    def on_progress(self, callback: Progress | None) -> None:
        """Report long work (model export and load, index builds) to `callback`."""
        self._progress = callback

    def warn(self, message: str, *, standing: bool = False) -> None:
        """Say `message`: in the result of the search this thread runs, if any; once to the
        `on_warning` callback; with `standing`, in every later search's result too (a fact
        about the index, such as a failed background build)."""
        call = getattr(self._local, "call", None)
        if call is not None and message not in call.warnings:
            call.warnings.append(message)
        with self._said:
            if standing and message not in self.standing:
                self.standing.append(message)
            if message in self.warnings:
                return
            self.warnings.append(message)
        if self._warn is not None:
            self._warn(message)

    def embedder(self) -> Embedder | None:
        """The embedding model, loaded once; None when it cannot load, said to every search
        that wanted it (for the life of the process, each of them is keyword-only)."""
        return self._model.load(self.warn, self._progress)

    # -- writing ---------------------------------------------------------------------------
    def update(
        self,
        *,
        rebuild: bool = False,
        paths: list[Path] | None = None,
        progress: Progress | None = None,
        on_problem: Callable[[Problem], None] | None = None,
        wait: float | None = None,
    ) -> IndexReport:
        """Bring the index up to date with the files (only `paths` when given); `progress`
        (default: the `on_progress` callback) hears of the files done."""
        from .indexer import Indexer  # not for a search of a fresh index

        report_to = progress or self._progress
        files = None if report_to is None else partial(report_to, INDEX_BUILD)
        refresh = getattr(self._local, "call", None) is not None  # a search's, in its turn
        if not refresh:
            with self._said:
                self._updates += 1
        try:
            with self._lock:
                with self.locks.writer(wait):  # first: a busy index must not cost a model load
                    indexer = Indexer(
                        self.layout, self.folder, self.store, self.locks, self.embedder(),
                        self.sanitizer,
                    )  # fmt: skip
                    report = indexer.update(
                        rebuild=rebuild, paths=paths, progress=files, on_problem=on_problem
                    )
                # its keyword index saved now, not by the first search: a hook answering a
                # prompt reads it, and at 10,000 learnings could not build it within its budget
                self._keywords.manifest()
        finally:
            if not refresh:
                with self._said:
                    self._updates -= 1
        for notice in report.notices:
            self.warn(notice)
        return report

    def exists(self) -> bool:
        """An index was built here (its manifest, written last, is on disk)."""
        return (self.folder / "manifest.json").is_file()

    def build_in_background(self, elsewhere: Callable[[], None] | None = None) -> threading.Event:
        """Bring the index up to date (and load the model) in a daemon thread, on an index of
        its own, and return the event set when it is done; `elsewhere`, when given, builds it
        instead (in another process: the thread only waits, then loads the model). Until then
        this index's searches do not refresh (the build holds the writer lock): they search
        the index as it is, and by keywords from the files while there is none -- flagged in
        `degraded`. For a server whose calls must answer at once on a fresh clone."""
        if self._building is not None:
            return self._building
        done = self._building = threading.Event()
        builder = SearchIndex(
            self.layout, self._config, self.sanitizer, env=self._env, warn=self.warn
        )

        def build() -> None:
            try:
                if elsewhere is not None:
                    elsewhere()
                    builder.store.client()  # the vector store's import, not the next search's
                builder.embedder()  # the process keeps it: this index's searches reuse it
                if elsewhere is None and not builder._fresh():
                    builder.update(on_problem=lambda problem: self.warn(str(problem)))
            except Exception as exc:  # the searches say what fails; this must not crash
                self.warn(
                    Notice("the search index could not be built in the background ({})", exc),
                    standing=True,
                )
            finally:
                builder.close()
                done.set()

        threading.Thread(target=build, name="lore-index-build", daemon=True).start()
        return done

    @property
    def building(self) -> bool:
        """A background build (`build_in_background`) is running."""
        return self._building is not None and not self._building.is_set()

    # -- reading ---------------------------------------------------------------------------
    def _call(self) -> _Call:
        """The search this thread runs (a throwaway one for an update outside a search)."""
        call = getattr(self._local, "call", None)
        return _Call("", "keyword") if call is None else call

    def _degrade(self, reason: str) -> None:
        """Results are keyword-only this time: say so once, and flag the search."""
        call = self._call()
        call.degraded = f"keyword-only: {reason}"
        call.mode = "keyword"
        self.warn(Notice("{}: searched by keywords only", reason))

    @contextmanager
    def _turn(self, call: _Call, *, wait: bool = False) -> Iterator[bool]:
        """This thread's search, in its turn: True once it holds the index; False (at once,
        unless it must `wait`) when another thread is updating it -- the search then answers
        by `_meanwhile`."""
        self._local.call = call
        try:
            for message in list(self.standing):
                self.warn(message)
            if self._lock.acquire(blocking=False) or (
                (wait or not self._updates) and self._lock.acquire()
            ):
                try:
                    yield True
                finally:
                    self._lock.release()
            else:
                yield False
        finally:
            self._local.call = None

    def _meanwhile(self, query: str, limit: int, threshold: float | None, filters: Filters,
                   today: date | None) -> list[SearchResult]:  # fmt: skip
        """A keyword search while another thread updates this index: by an index object of
        its own (its own caches; no Chroma), from the saved keyword index or else
        the files -- it writes nothing the update writes."""
        with self._model_lock:
            if self._reader is None:
                self._reader = SearchIndex(
                    self.layout, self._config, self.sanitizer, env=self._env, stats=self.stats,
                    stats_snapshot=self.stats_snapshot, stale_snapshot=self.stale_snapshot,
                    warn=self.warn,
                )  # fmt: skip
            reader = self._reader
        with reader._lock:
            reader._local.call = self._call()  # its warnings are this search's
            try:
                found = reader._saved_search(query, False, limit, threshold, filters, today)
                if found is not None:
                    return found
                manifest, keyword = reader._keywords.from_files()
                if not manifest.files:
                    return []
                _, sim = keyword.scores(query)
                day = today or date.today()
                corpus = Corpus.of(manifest)
                return reader._rank(corpus, sim, None, "keyword", limit, threshold, filters, day)
            finally:
                reader._local.call = None

    def search(
        self,
        query: str,
        *,
        mode: str = "hybrid",
        limit: int = 5,
        refresh: bool = True,
        threshold: float | None = None,
        filters: Filters | None = None,
        today: date | None = None,
        **filter_fields: Any,
    ) -> SearchResults:
        """The best `limit` learnings for `query`, best first (see `lore search --help`), with
        this search's warnings, the mode it could use and why it was degraded, if it was."""
        too_long = _check_query(query)
        query = query[:MAX_QUERY_CHARS]
        if mode not in MODES:
            raise UsageError("mode {!r} is not one of: " + ", ".join(MODES), mode)
        if limit < 1:
            raise UsageError("limit must be a positive number, not {}", limit)
        if threshold is not None and not 0 <= threshold <= 1:  # also refuses NaN
            raise UsageError("threshold must be a number from 0 to 1, not {}", threshold)
        filters = filters or Filters(**filter_fields)
        call = _Call(self.sanitizer.redact_text(query)[0], mode)
        with self._turn(call) as mine:
            if too_long:
                self.warn(too_long)
            if mine:
                found = self._search(query, mode, limit, refresh, threshold, filters, today)
            else:
                if mode != "keyword":
                    self._degrade(UPDATING)
                found = self._meanwhile(query, limit, threshold, filters, today)
        return call.results(found)

    def _search(
        self,
        query: str,
        mode: str,
        limit: int,
        refresh: bool,
        threshold: float | None,
        filters: Filters,
        today: date | None,
    ) -> list[SearchResult]:
        call = self._call()
        settle(self.folder, self.locks)  # a killed rebuild's leftovers (two stats when none)
        if mode == "keyword" and not self._keywords.warm():  # the saved keyword index alone
            found = self._saved_search(query, refresh, limit, threshold, filters, today)
            if found is not None:
                return found
        building = self.building
        if refresh and not building:
            self._refresh()
        manifest, keyword = self._keywords.manifest()
        if not manifest.files:
            manifest, keyword = self._keywords.from_files()
            if manifest.files:
                self._degrade(
                    "the search index is being built"
                    if building
                    else "the search index is missing or being rebuilt"
                )
        if not manifest.files:
            return []
        try:
            _, kw_sim = keyword.scores(query)
        except ValueError:  # the saved keyword index is damaged: build it again, and save it
            self.warn(DAMAGED)
            keyword = self._keywords.rebuilt(manifest)
            _, kw_sim = keyword.scores(query)
        corpus = self._keywords.corpus(manifest)
        dense = None
        if mode != "keyword" and call.degraded is None:
            dense = self._dense(query, manifest.model, corpus.chunks)
        if mode != "keyword" and dense is None:
            call.mode = "keyword"
        if mode == "semantic" and dense is None:
            mode = "keyword"
        return self._rank(
            corpus, kw_sim, dense, mode, limit, threshold, filters, today or date.today()
        )

    def prompt_lessons(
        self, prompt: str, *, limit: int = 3, threshold: float | None = None, **filter_fields: Any
    ) -> SearchResults:
        """The learnings about an agent's prompt, for a hook that must answer within its budget
        however large the store: by the prompt's salient terms (`KeywordIndex.salient`: a long
        chatty prompt matches by what it is about), from the saved keyword index as it is (no
        refresh, no model), ranked by similarity and recency only -- nothing is read from the
        action log or git, whose size must not matter. Without a saved index (never indexed,
        or another process rebuilding it), the keyword path of `search` builds one."""
        too_long = _check_query(prompt)
        prompt = prompt[:MAX_QUERY_CHARS]
        call = _Call(self.sanitizer.redact_text(prompt)[0], "keyword")
        with self._turn(call, wait=True):  # a hook's, in a process of its own: never waits
            if too_long:
                self.warn(too_long)
            found = self._prompt_lessons(prompt, limit, threshold, Filters(**filter_fields))
        return call.results(found)

    def _prompt_lessons(
        self, prompt: str, limit: int, threshold: float | None, filters: Filters
    ) -> list[SearchResult]:
        settle(self.folder, self.locks)
        return self._keywords.prompt_answer(
            prompt,
            lambda corpus, sim, full: self._rank(corpus, sim, None, "keyword", limit, threshold,
                                                 filters, date.today(), full, figures=False),
        )  # fmt: skip

    def _fresh(self, saved: SavedIndex | None = None) -> bool:
        """The index (or the `saved` keyword index) matches the files for the model configured:
        a search then needs neither the model nor Chroma to refresh (`KeywordCache.fresh`)."""
        return self._keywords.fresh(self._model.pinned, saved)

    def _saved_search(
        self,
        query: str,
        refresh: bool,
        limit: int,
        threshold: float | None,
        filters: Filters,
        today: date | None,
    ) -> list[SearchResult] | None:
        """A keyword search from the saved keyword index alone (`KeywordCache.saved_answer`),
        when it is there and, to `refresh`, matches the files; else None."""
        return self._keywords.saved_answer(
            query,
            lambda saved: not refresh or self._fresh(saved),
            lambda corpus, sim, full: self._rank(corpus, sim, None, "keyword", limit, threshold,
                                                 filters, today or date.today(), full),
        )  # fmt: skip

    def _refresh(self) -> None:
        """Update the index first; when that cannot happen, search what is there."""
        if self._fresh():
            return
        try:
            self.update(wait=0.0, on_problem=lambda problem: self.warn(str(problem)))
        except IndexBusy:  # another process is updating: search what is there
            pass
        except IndexReadOnly as exc:
            self._degrade(f"the search index cannot be refreshed ({exc.reason})")
        except Exception as exc:  # the cache deleted or replaced under the update
            self._after_store_error(exc)
            self._degrade(f"the search index could not be refreshed ({reason(exc)})")

    def _after_store_error(self, exc: Exception) -> None:
        """An unreachable Chroma server is a setting to fix (one error line); anything else
        from the local cache is degraded to keywords by the caller."""
        self.store.close()
        if isinstance(exc, ChromaUnavailable) and self.store.url:
            raise exc

    def _dense(self, query: str, model: str | None, chunks: int) -> dict[str, float] | None:
        """The best similarity of each learning among the nearest passages (`dense.nearest`);
        None (degraded) when the model differs from the index's or the vector store holds other
        than `chunks` passages."""
        embedder = self.embedder()
        if embedder is None or model != embedder.name:
            return None
        return nearest(embedder, query, self.store, self.locks, chunks, self._degrade,
                       self._after_store_error)  # fmt: skip

    def _rank(
        self,
        corpus: Corpus,
        kw_sim: Sequence[float],
        dense: dict[str, float] | None,
        mode: str,
        limit: int,
        threshold: float | None,
        filters: Filters,
        today: date,
        full: Callable[[int], dict[str, Any]] | None = None,
        *,
        figures: bool = True,
    ) -> list[SearchResult]:
        """The best `limit` of the corpus's documents (`shortlist`; `full(i)`, when given,
        reads the whole document `i` for the results). Without `figures`, the log's figures
        (applications, success rates) and the stale learnings' cache are not asked: a
        document's own `stale` flag counts."""
        return shortlist(
            corpus, kw_sim, dense, mode, limit=limit, filters=filters, today=today,
            floor=self.rank.threshold if threshold is None else threshold, settings=self.rank,
            stats=self.stats if figures else no_stats,
            stats_snapshot=self.stats_snapshot if figures else None,
            stale_snapshot=self.stale_snapshot if figures else None, full=full,
        )  # fmt: skip

    def close(self) -> None:
        with self._lock:
            self.store.close()


def _check_query(query: str) -> str | None:
    """Refuse an empty query; the warning for an over-long one (searched by its start)."""
    if not isinstance(query, str) or not query.strip():
        raise UsageError(
            'empty query: say what to search for, e.g. lore search "RLS blocks insert"'
        )
    if len(query) > MAX_QUERY_CHARS:
        return Notice(
            "the query is {} characters long; searched its first {}", len(query), MAX_QUERY_CHARS
        )
    return None


def _slug(name: str) -> str:
    cleaned = "".join(c if c.isalnum() else "-" for c in name.lower()).strip("-")
    return (cleaned or "store")[:40]
