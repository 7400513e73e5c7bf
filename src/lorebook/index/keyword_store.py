"""The keyword index saved next to the manifest it was built from (`keyword.jsonl`).

Tokenizing every learning again in each process was most of a cold keyword search (~1 s at
2,000 learnings on a loaded machine), and parsing the whole manifest (2 MB at 2,000 learnings,
24 MB at 10,000) most of what remained. So the file carries everything a keyword search needs:
line 1 holds the postings, each file's size and times (the freshness check), the fields ranking
and filtering read (`RANK_FIELDS`) and the byte offset of each document; every further line is
one document, read only for the results shown.

It is keyed by the digest of the manifest's bytes, and by the manifest file's identity (inode,
size, times) so that a search need not read the manifest to know the key still holds: any
change to the indexed documents (a file re-indexed, a rebuild, another redaction) makes it
stale, and it is rebuilt on the next search. It holds only the manifest's documents, which the
indexer redacted before storing them: no text that the manifest does not already hold.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import json
import os
import time
from contextlib import suppress
from pathlib import Path

from ..errors import LoreError
from ..store import atomic_write, settled
from .keyword import KeywordIndex
from .manifest import manifest_stamp
from .synonyms import SynonymTable

TYPE_CHECKING = False  # typing costs milliseconds on the cold path; mypy still sees it
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from .manifest import Manifest

FILE = "keyword.jsonl"
OLD_FILES = ("keyword.json",)  # what earlier versions saved: removed when this one is saved
FORMAT = 3  # bump when the terms (synonyms.terms, document_terms) or the state change
# what `_rank` and `Filters.admits` read of a document (besides the ids it supersedes, saved as
# one set): the rest is read for the results only
RANK_FIELDS = ("id", "title", "kind", "category", "severity", "status", "tags", "created", "stale")


class SavedIndexDamaged(ValueError):
    """The saved file exists but cannot be used: it is rebuilt, with a notice."""


class SavedIndex:
    """A saved keyword index read without the manifest: `index` scores, `files` say whether the
    learning files changed, `rows` rank and filter, `document(i)` reads one full document."""

    def __init__(self, path: Path, start: int, header: dict[str, Any], index: KeywordIndex) -> None:
        self.path = path
        self.start = start  # where the documents begin
        self.identity: list[int] = []  # of the file read (`load_saved` reuses it while it holds)
        self.checked_ns = int(header["checked_ns"])
        self.key = str(header["key"])
        self.stamp = header["stamp"]
        self.pins = tuple(header["pins"])
        self.vectors = bool(header["vectors"])
        names, stats = header["files"]["names"], header["files"]["stats"]
        # path -> (size, mtime_ns, checked_ns): lists of plain values parse faster than objects
        self.files = dict(
            zip(names, zip(stats[0::3], stats[1::3], stats[2::3], strict=True), strict=True)
        )
        self.keys: list[str] = header["keys"]  # the manifest path of each document
        self.rows = Rows(header["columns"])
        self.superseded = set(header["superseded"])
        self.offsets: list[int] = header["offsets"]
        self.index = index
        sizes = {len(self.keys), len(self.rows), len(self.offsets) - 1, len(index.ids)}
        if len(sizes) != 1 or len(stats) != 3 * len(names):
            raise SavedIndexDamaged("its parts disagree")

    def document(self, i: int) -> dict[str, Any]:
        """The full (redacted) document `i`; SavedIndexDamaged when the line is not it."""
        try:
            with open(self.path, "rb") as handle:
                handle.seek(self.start + self.offsets[i])
                doc = json.loads(handle.read(self.offsets[i + 1] - self.offsets[i]))
        except (OSError, ValueError) as exc:
            raise SavedIndexDamaged(f"document {i}: {exc}") from None
        if not isinstance(doc, dict) or doc.get("id") != self.index.ids[i]:
            raise SavedIndexDamaged(f"document {i} is not {self.index.ids[i]!r}")
        return doc


class Rows:
    """What ranking reads of each document, made into a dict only for the documents a query
    reaches (above the similarity floor): the fields are saved as one list each."""

    def __init__(self, columns: dict[str, list[Any]]) -> None:
        self.columns = [(f, columns[f]) for f in RANK_FIELDS]
        if len({len(values) for _, values in self.columns}) != 1:
            raise SavedIndexDamaged("its columns disagree")

    def __len__(self) -> int:
        return len(self.columns[0][1])

    def __getitem__(self, i: int) -> dict[str, Any]:
        return {f: values[i] for f, values in self.columns}

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return (self[i] for i in range(len(self)))


def load_saved(
    folder: Path, synonyms: SynonymTable, previous: SavedIndex | None = None
) -> SavedIndex | None:
    """The saved index when it was built from the manifest now on disk, known without reading
    the manifest (`previous` when neither file changed since it was read); None when missing,
    stale, or the manifest changed too recently to trust its identity; SavedIndexDamaged when
    the file is there but unreadable."""
    path = folder / FILE
    try:
        stamp = manifest_stamp(os.stat(folder / "manifest.json"))
        with open(path, "rb") as handle:
            identity = manifest_stamp(os.fstat(handle.fileno()))
            if previous is not None and (previous.identity, previous.stamp) == (identity, stamp):
                return previous
            first = handle.readline()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise SavedIndexDamaged(str(exc)) from None
    header = _header(first)
    if header is None or header.get("stamp") != stamp:
        return None
    saved = _saved(path, len(first), header, synonyms)
    if not trusted(saved, stamp):
        return None
    saved.identity = identity
    return saved


def trusted(saved: SavedIndex, stamp: list[int] | None) -> bool:
    """Whether the manifest file `stamp` identifies is the one `saved` was built from: the same
    identity, and written well before it was checked (within the clock's tick, another manifest
    could have taken a freed inode with the same size and times)."""
    return saved.stamp == stamp and stamp is not None and settled(stamp[2], saved.checked_ns)


def load_keyword_index(folder: Path, key: str, synonyms: SynonymTable) -> SavedIndex | None:
    """The saved index for the manifest whose digest is `key`; None when missing or stale;
    SavedIndexDamaged when it is there but unreadable (only a cache: rebuilt by the caller)."""
    path = folder / FILE
    try:
        with open(path, "rb") as handle:
            first = handle.readline()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise SavedIndexDamaged(str(exc)) from None
    header = _header(first)
    if header is None or header.get("key") != key:
        return None
    return _saved(path, len(first), header, synonyms)


def _header(first: bytes) -> dict[str, Any] | None:
    """The first line; None for another format (stale), SavedIndexDamaged when not JSON."""
    try:
        header = json.loads(first)
    except ValueError:
        raise SavedIndexDamaged("its first line is not JSON") from None
    if not isinstance(header, dict):
        raise SavedIndexDamaged("its first line is not an object")
    return header if header.get("format") == FORMAT else None


def _saved(path: Path, start: int, header: dict[str, Any], synonyms: SynonymTable) -> SavedIndex:
    try:
        return SavedIndex(path, start, header, KeywordIndex.restore(header, synonyms))
    except (KeyError, TypeError, ValueError) as exc:
        raise SavedIndexDamaged(str(exc) or type(exc).__name__) from None


def save_keyword_index(folder: Path, manifest: Manifest, index: KeywordIndex) -> None:
    """Save `index` as the keyword index of `manifest` (loaded from disk: it has a digest and a
    stamp); a cache that cannot be written (a read-only store) only costs the next search the
    manifest and the tokenizing again."""
    if not manifest.digest or manifest.stamp is None:
        return
    keys = [k for k, e in manifest.files.items() if e.doc]
    docs = [manifest.files[k].doc or {} for k in keys]
    lines = [_dumps(doc) + b"\n" for doc in docs]
    header: dict[str, Any] = {
        "format": FORMAT,
        "key": manifest.digest,
        "stamp": manifest.stamp,
        "checked_ns": time.time_ns(),
        "pins": [manifest.model, manifest.chunker, manifest.backend],
        "vectors": any(e.chunks for e in manifest.files.values()),
        "files": {
            "names": list(manifest.files),
            "stats": [
                n for e in manifest.files.values() for n in (e.size, e.mtime_ns, e.checked_ns)
            ],
        },
        "keys": keys,
        "columns": {f: [doc.get(f) for doc in docs] for f in RANK_FIELDS},
        "superseded": sorted({s for doc in docs for s in doc.get("supersedes") or []}),
        **index.state(),
    }
    offsets, at = [0], 0  # from the end of the first line
    for line in lines:
        at += len(line)
        offsets.append(at)
    header["offsets"] = offsets
    data = _dumps(header) + b"\n" + b"".join(lines)
    with suppress(LoreError):
        atomic_write(folder / FILE, data)
        for old in OLD_FILES:
            with suppress(OSError):
                (folder / old).unlink()
        _save_terms(folder, header, docs, lines)


def _save_terms(
    folder: Path, header: dict[str, Any], docs: list[dict[str, Any]], lines: list[bytes]
) -> None:
    """The same index as SQLite, read a term at a time (`terms_db`: the prompt hook's); a
    file that cannot be written leaves the hook the JSON index."""
    import sqlite3

    from .terms_db import discard as discard_terms
    from .terms_db import save_terms

    meta = {n: header[n] for n in ("key", "stamp", "checked_ns", "norms", "superseded")}
    rows = [{f: doc.get(f) for f in RANK_FIELDS} for doc in docs]
    try:
        save_terms(folder, meta, header["postings"], rows, header["keys"], lines)
    except (OSError, sqlite3.Error):
        discard_terms(folder)  # never a stale one beside a new JSON index


def discard(folder: Path) -> None:
    """Remove a damaged saved index, so that the next search saves a sound one."""
    from .terms_db import discard as discard_terms

    with suppress(OSError):
        (folder / FILE).unlink()
    discard_terms(folder)


def _dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
