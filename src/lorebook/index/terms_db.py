"""The saved keyword index again, as SQLite (`keyword.sqlite`), read a term at a time.

A hook answering a prompt must not pay for the whole store: `keyword.jsonl` is parsed whole
(its first line held 7.7 MB at 10,000 learnings: ~0.15 s of a 1 s budget, eight agents at
once on two cores spending it eight times). This file holds the same postings, one row per
term, so a prompt reads only its own terms' postings, the ranking fields of the learnings that
reach the floor and the documents shown: the cost no longer grows with the store. It is written
beside `keyword.jsonl` from the same state (`keyword_store.save_keyword_index`), keyed by the
same manifest identity, and replaced whole (a reader sees the old file or the new one).

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import json
import os
import sqlite3
from contextlib import closing, suppress
from pathlib import Path

from ..store import settled, temp_path
from .keyword import KeywordIndex
from .manifest import manifest_stamp
from .synonyms import STOPWORDS, SynonymTable, stem, words

TYPE_CHECKING = False  # typing costs milliseconds on the cold path; mypy still sees it
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

FILE = "keyword.sqlite"
FORMAT = 1  # bump with keyword_store.FORMAT, or when the tables change


def save_terms(
    folder: Path,
    meta: dict[str, Any],
    postings: dict[str, str],
    rows: list[dict[str, Any]],
    keys: list[str],
    documents: list[bytes],
) -> None:
    """Write the file from a saved keyword index's parts (`meta`: key, stamp, checked_ns, norms,
    superseded); OSError and sqlite3.Error propagate (the caller keeps the JSON index)."""
    path = folder / FILE
    tmp = temp_path(path)
    tmp.unlink(missing_ok=True)
    try:
        with closing(sqlite3.connect(tmp)) as db:
            db.executescript(
                "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
                "CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;"
                "CREATE TABLE terms (term TEXT PRIMARY KEY, df INTEGER, postings TEXT)"
                " WITHOUT ROWID;"
                "CREATE TABLE docs (i INTEGER PRIMARY KEY, path TEXT, row TEXT, doc BLOB);"
            )
            db.executemany(
                "INSERT INTO meta VALUES (?, ?)",
                [(k, json.dumps(v)) for k, v in {**meta, "format": FORMAT}.items()],
            )
            db.executemany(
                "INSERT INTO terms VALUES (?, ?, ?)",
                ((t, (p.count(" ") + 1) // 2, p) for t, p in postings.items()),
            )
            db.executemany(
                "INSERT INTO docs VALUES (?, ?, ?, ?)",
                (
                    (i, key, json.dumps(row, ensure_ascii=False), doc)
                    for i, (key, row, doc) in enumerate(zip(keys, rows, documents, strict=True))
                ),
            )
            db.commit()
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


class TermsDb:
    """An open `keyword.sqlite` whose manifest is the one on disk."""

    def __init__(self, db: sqlite3.Connection, meta: dict[str, Any]) -> None:
        self.db = db
        self.norms: list[float] = [float(n) for n in meta["norms"]]
        self.superseded = set(meta["superseded"])
        self.size = len(self.norms)
        self.keys = _Column(db, "path", self.size)
        self.rows = _Column(db, "row", self.size)

    def index(self, prompt: str, synonyms: SynonymTable) -> KeywordIndex:
        """A keyword index holding the postings of the prompt's terms (and their synonyms')
        only: enough for `salient`, `scores` and `matched` on that prompt."""
        qwords = words(prompt)
        spelled = [*qwords, *(w for p in synonyms.expansions(qwords) for w in p)]
        wanted = sorted({stem(w) for w in spelled if w not in STOPWORDS})
        postings: dict[str, str] = {}
        for start in range(0, len(wanted), 500):  # SQLite's limit on bound parameters
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            sql = f"SELECT term, postings FROM terms WHERE term IN ({marks})"
            postings.update(self.db.execute(sql, chunk).fetchall())
        state = {"ids": [""] * self.size, "norms": self.norms, "postings": postings}
        return KeywordIndex.restore(state, synonyms)

    def document(self, i: int) -> dict[str, Any]:
        found = self.db.execute("SELECT doc FROM docs WHERE i = ?", (i,)).fetchone()
        if found is None:
            raise ValueError(f"a damaged keyword index: no document {i}")
        doc = json.loads(found[0])
        if not isinstance(doc, dict):
            raise ValueError(f"a damaged keyword index: document {i} is not an object")
        return doc

    def close(self) -> None:
        self.db.close()


class _Column:
    """One column of `docs` by index, read only for the documents asked for."""

    def __init__(self, db: sqlite3.Connection, name: str, size: int) -> None:
        self.sql = f"SELECT {name} FROM docs WHERE i = ?"  # a fixed column name
        self.db = db
        self.name = name
        self.size = size
        self.cache: dict[int, Any] = {}

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, i: int) -> Any:
        if i not in self.cache:
            try:
                found = self.db.execute(self.sql, (i,)).fetchone()
            except sqlite3.Error as exc:
                raise ValueError(f"a damaged keyword index: {exc}") from None
            if found is None:
                raise ValueError(f"a damaged keyword index: no document {i}")
            self.cache[i] = json.loads(found[0]) if self.name == "row" else found[0]
        return self.cache[i]

    def __iter__(self) -> Iterator[Any]:
        return (self[i] for i in range(self.size))

    def close(self) -> None:
        """Close the file the column is read from (its TermsDb's connection)."""
        self.db.close()


def open_terms(folder: Path) -> TermsDb | None:
    """The file when it was built from the manifest now on disk (its identity, written well
    before the file was: see `keyword_store.trusted`); None when missing, stale or unreadable
    (the JSON index, or a rebuild, answers then)."""
    path = folder / FILE
    try:
        stamp = manifest_stamp(os.stat(folder / "manifest.json"))
        os.stat(path)
    except OSError:
        return None
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        meta = {k: json.loads(v) for k, v in db.execute("SELECT name, value FROM meta")}
        if meta.get("format") != FORMAT or meta.get("stamp") != stamp:
            db.close()
            return None
        if not settled(stamp[2], int(meta["checked_ns"])) and not _verified(folder, meta):
            db.close()
            return None
        return TermsDb(db, meta)
    except (sqlite3.Error, ValueError, KeyError, TypeError):
        db.close()
        return None


def current(folder: Path) -> bool:
    """The file is there and made from the manifest now on disk."""
    found = open_terms(folder)
    if found is not None:
        found.close()
    return found is not None


def _verified(folder: Path, meta: dict[str, Any]) -> bool:
    """The manifest was written too close to the file to trust its identity (`lore index`
    saves both at once): its bytes are the ones the file was built from when their digest is
    the file's key. Then the file is marked as checked now, so that later readers trust it
    once the manifest is old enough, without reading it."""
    import time

    try:  # hashlib.blake2b without hashlib's OpenSSL start-up (as in lorebook.log.catalog_sync)
        from _blake2 import blake2b
    except ImportError:  # pragma: no cover - another interpreter
        from hashlib import blake2b

    try:
        raw = (folder / "manifest.json").read_bytes()
    except OSError:
        return False
    if blake2b(raw, digest_size=16).hexdigest() != meta.get("key"):
        return False
    with suppress(sqlite3.Error), closing(sqlite3.connect(folder / FILE, timeout=0)) as db:
        db.execute("UPDATE meta SET value = ? WHERE name = 'checked_ns'", (str(time.time_ns()),))
        db.commit()
    return True


def discard(folder: Path) -> None:
    with suppress(OSError):
        (folder / FILE).unlink()
