"""Bringing the index up to date with the files: incremental by content hash, or a rebuild.

Embedding happens outside the access lock; only writing a batch into Chroma holds it, so
searches in other processes wait at most one batch. A rebuild of the embedded index is built
beside the live one and swapped in when complete (see swap.py): the old one serves searches
until then, and a killed rebuild loses nothing.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..paths import Layout
from ..problems import Problem
from .chroma_store import ChromaStore
from .chunks import CHUNKER_VERSION, passages
from .documents import Document, learning_files, read_document
from .hubness import PASSAGES_ASKED, hubness, nearest_others
from .lock import IndexLocks
from .manifest import Entry, Manifest, ManifestCorrupt
from .swap import building, recover, swap_in

if TYPE_CHECKING:
    import numpy as np

    from ..redact.sanitize import Sanitizer
    from .embed import Embedder

Progress = Callable[[int, int], None]  # (done, total) files
DOCS_PER_BATCH = 64


@dataclass
class IndexReport:
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0
    skipped: list[str] = field(default_factory=list)  # "file:line: reason"
    rebuilt: bool = False
    notices: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed or self.rebuilt)

    def to_dict(self) -> dict[str, Any]:
        return {
            "added": len(self.added),
            "updated": len(self.updated),
            "removed": len(self.removed),
            "unchanged": self.unchanged,
            "skipped": self.skipped,
            "rebuilt": self.rebuilt,
            "notices": self.notices,
            "files": {"added": self.added, "updated": self.updated, "removed": self.removed},
        }


class Indexer:
    """Writes the manifest and the Chroma collection; callers hold the writer lock."""

    def __init__(
        self,
        layout: Layout,
        folder: Path,
        store: ChromaStore,
        locks: IndexLocks,
        embedder: Embedder | None,
        sanitizer: Sanitizer,
    ) -> None:
        self.layout = layout
        self.sanitizer = sanitizer
        self.folder = folder
        self.store = store
        self.locks = locks
        self.embedder = embedder
        self.manifest_path = folder / "manifest.json"
        self.live = (folder, store)  # where the index is served from (a rebuild stages beside)

    def fresh_manifest(self, generation: int) -> Manifest:
        return Manifest(
            model=self.embedder.name if self.embedder else None,
            dim=self.embedder.dim if self.embedder else None,
            chunker=CHUNKER_VERSION,
            backend=self.store.backend,
            generation=generation,
        )

    # -- deciding between incremental and rebuild -------------------------------------------
    def _current(self, rebuild: bool, report: IndexReport) -> Manifest:
        try:
            manifest = Manifest.load(self.manifest_path)
        except ManifestCorrupt as exc:
            report.notices.append(f"the index manifest was unreadable ({exc}); rebuilt the index")
            manifest = None
            rebuild = True
        wanted = self.fresh_manifest(0)
        if manifest is not None and not rebuild and manifest.pins() != wanted.pins():
            report.notices.append(
                "the embedding model, chunker or index location changed "
                f"({_pins(manifest)} -> {_pins(wanted)}); rebuilt the index"
            )
            rebuild = True
        if manifest is not None and not rebuild and self.embedder is not None:
            problem = self._damage(manifest)
            if problem:
                report.notices.append(f"the index cache was {problem}; rebuilt the index")
                rebuild = True
        if manifest is None or rebuild:
            report.rebuilt = True
            if self.store.url:
                self._reset()
            else:
                self._stage()
            return self.fresh_manifest((manifest.generation + 1) if manifest else 1)
        return manifest

    def _damage(self, manifest: Manifest) -> str | None:
        """Why the vector store does not match the manifest, if it does not."""
        expected = sum(e.chunks for e in manifest.files.values())
        if not self.store.url and expected and not (self.folder / "chroma").is_dir():
            return "missing"
        try:
            with self.locks.read(timeout=self.locks.write_timeout):
                have = self.store.count()
        except Exception as exc:  # a damaged SQLite file or HNSW segment
            self.store.close()
            return f"damaged ({type(exc).__name__})"
        if have != expected:
            return f"out of step with the files ({have} passages stored, {expected} expected)"
        return None

    def _reset(self) -> None:
        """A server's collection is dropped and refilled (the old manifest stays until the
        new one replaces it: searches during a rebuild still have the keyword index)."""
        with self.locks.write():
            self.store.drop()

    def _stage(self) -> None:
        """Build the new embedded index beside the live one (which goes on serving)."""
        folder = building(self.live[0])
        shutil.rmtree(folder, ignore_errors=True)  # a killed rebuild's: we hold the writer lock
        folder.mkdir(parents=True)
        self.folder = folder
        self.store = ChromaStore(path=folder / "chroma", name=self.live[1].name)
        self.manifest_path = folder / "manifest.json"

    def _swap(self) -> None:
        """Put the complete staged index in the live one's place (both clients released:
        Chroma caches a system per path and process, which must not outlive the swap)."""
        self.store.close()
        self.live[1].close()
        swap_in(self.live[0], self.locks)
        self.folder, self.store = self.live
        self.manifest_path = self.folder / "manifest.json"

    # -- the update ------------------------------------------------------------------------
    def update(
        self,
        *,
        rebuild: bool = False,
        paths: list[Path] | None = None,
        progress: Progress | None = None,
        on_problem: Callable[[Problem], None] | None = None,
    ) -> IndexReport:
        report = IndexReport()
        recover(self.live[0])  # what a killed rebuild left behind (we hold the writer lock)
        manifest = self._current(rebuild, report)
        full = paths is None or report.rebuilt
        files = learning_files(self.layout) if full else (paths or [])
        on_disk = {self.layout.rel(p): p for p in files}
        if full:
            removed = [k for k in manifest.files if k not in on_disk]
        else:
            removed = [k for k, p in on_disk.items() if not p.is_file() and k in manifest.files]
        unindex: list[str] = []  # files whose passages go (now unparseable)
        changed: list[tuple[str, Entry, Document]] = []
        dirty = report.rebuilt

        def problem(found: Problem) -> None:
            report.skipped.append(str(found))
            if on_problem:
                on_problem(found)

        for i, (rel, path) in enumerate(on_disk.items()):
            if progress and i % 500 == 0:
                progress(0, len(on_disk))
            if rel in removed:
                continue
            try:
                st = path.stat()
            except OSError:
                continue
            old = manifest.files.get(rel)
            if old is not None and old.stat_matches(st.st_size, st.st_mtime_ns):
                report.unchanged += 1
                continue
            got = read_document(path, self.layout, problem)
            if got is None:  # vanished while we looked
                if rel in manifest.files:
                    removed.append(rel)
                continue
            dirty = True
            digest, doc = got
            if doc is not None:  # before anything derived is made of it: passages, manifest
                doc = redact_document(self.sanitizer, doc, self.layout)
            if old is not None and old.hash == digest:
                old.size, old.mtime_ns, old.checked_ns = st.st_size, st.st_mtime_ns, time.time_ns()
                report.unchanged += 1
                continue
            entry = Entry(digest, st.st_size, st.st_mtime_ns, checked_ns=time.time_ns())
            if doc is None:
                problem_text = report.skipped[-1] if report.skipped else "unreadable"
                entry.problem = self.sanitizer.redact_text(problem_text)[0]
                if old is not None and old.doc is not None:
                    unindex.append(rel)
                    report.removed.append(rel)
                manifest.files[rel] = entry
                continue
            (report.updated if old is not None and old.doc is not None else report.added).append(
                rel
            )
            changed.append((rel, entry, doc))

        titles = self._write(manifest, changed, progress, len(on_disk))
        if progress and on_disk:  # ends at the total when nothing needed embedding, too
            progress(len(on_disk), len(on_disk))
        if removed or unindex:
            dirty = True
            with self.locks.write():
                if self.embedder is not None:
                    self.store.delete_keys(removed + unindex)
            for rel in removed:
                gone = manifest.files.pop(rel, None)
                if gone is not None and gone.doc is not None:
                    report.removed.append(rel)
        self._hubness(manifest, titles)
        if report.changed:
            manifest.generation += 1
        if dirty or report.changed or not self.manifest_path.exists():
            manifest.save(self.manifest_path)  # last: a staged index with one is complete
        if self.folder != self.live[0]:
            self._swap()
        return report

    def _write(
        self,
        manifest: Manifest,
        changed: list[tuple[str, Entry, Document]],
        progress: Progress | None,
        total: int,
    ) -> list[tuple[str, Any]]:
        """Embed the changed documents (one batch ahead, in a thread) and store them; returns
        (file, title vector) of each document embedded."""
        batches = [changed[i : i + DOCS_PER_BATCH] for i in range(0, len(changed), DOCS_PER_BATCH)]
        done = total - len(changed)
        ready: dict[int, Any] = {}
        titles: list[tuple[str, Any]] = []

        def embed(index: int) -> None:
            ready[index] = self._embed(batches[index])

        pending: threading.Thread | None = None
        if batches:
            pending = threading.Thread(target=embed, args=(0,), daemon=True)
            pending.start()
        for n, batch in enumerate(batches):
            assert pending is not None
            pending.join()
            if n + 1 < len(batches):
                pending = threading.Thread(target=embed, args=(n + 1,), daemon=True)
                pending.start()
            keys, vectors, counts = ready.pop(n)
            with self.locks.write():
                if self.embedder is not None:
                    self.store.delete_keys([rel for rel, _, _ in batch])
                    if len(keys):
                        self.store.add(keys, vectors)
            first = 0
            for (rel, entry, doc), count in zip(batch, counts, strict=True):
                if count:  # the title is every document's first passage (chunks.passages)
                    titles.append((rel, vectors[first]))
                first += count
                entry.chunks = count
                entry.doc = doc.to_dict()
                manifest.files[rel] = entry
            done += len(batch)
            if progress:
                progress(done, total)
        return titles

    def _hubness(self, manifest: Manifest, titles: list[tuple[str, Any]]) -> None:
        """Each newly embedded learning's hubness, from its title's nearest passages of the
        others (one batched Chroma query per 500). Learnings indexed before keep theirs until
        the next rebuild: one arrival moves a mean over three neighbours little."""
        import numpy as np

        for i in range(0, len(titles), 500):
            part = [(rel, vec) for rel, vec in titles[i : i + 500] if rel in manifest.files]
            if not part:
                continue
            with self.locks.read(timeout=self.locks.write_timeout):
                found, _ = self.store.query_many(np.stack([vec for _, vec in part]), PASSAGES_ASKED)
            for (rel, _), hits in zip(part, found, strict=False):
                manifest.files[rel].hub = round(hubness(nearest_others(hits, rel)), 6)

    def _embed(self, batch: list[tuple[str, Entry, Document]]) -> tuple[list[str], Any, list[int]]:
        if self.embedder is None:
            return [], None, [0] * len(batch)
        keys: list[str] = []
        texts: list[str] = []
        counts = []
        for rel, _, doc in batch:
            parts = passages(doc)
            keys.extend([rel] * len(parts))
            texts.extend(parts)
            counts.append(len(parts))
        vectors: np.ndarray = self.embedder.encode(texts)
        return keys, vectors, counts


def redact_document(sanitizer: Sanitizer, doc: Document, layout: Layout) -> Document:
    """`doc` with its free text redacted: the manifest (which search prints from), the
    keyword index and the embedded passages are all made from this copy, never the file's
    text, so a token pasted into a learning reaches no cache and no search result. A long
    body redacted before (same text, same rules) comes from the store's cache of them."""
    from ..knowledge.cache import RedactedTexts

    text = RedactedTexts(layout.cache / "redacted", sanitizer).redact

    def texts(values: list[str]) -> list[str]:
        return [text(v) for v in values]

    return replace(
        doc,
        title=text(doc.title),
        body=text(doc.body),
        category=None if doc.category is None else text(doc.category),
        tags=texts(doc.tags),
        solutions=[{k: text(v) for k, v in s.items()} for s in doc.solutions],
        prevention=texts(doc.prevention),
    )


def _pins(manifest: Manifest) -> str:
    return f"model={manifest.model}, dim={manifest.dim}, chunker={manifest.chunker}"


def disk_size(folder: Path) -> int:
    total = 0
    for base, _, names in os.walk(folder):
        for name in names:
            with contextlib.suppress(OSError):
                total += os.path.getsize(os.path.join(base, name))
    return total
