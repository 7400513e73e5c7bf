"""What a mirror reads: the store's shards, each from where the last mirror stopped.

The watermark is per shard, not a timestamp: agents append records with older `ts` than
records already written (clocks and sessions differ), but a shard is an append-only file, so
the bytes up to the last complete line are exactly what was stored. A shard whose stored tail
no longer matches (a union merge reordered it, it was rewritten or shrank) is read again from
the start: a keyed re-sync, the target's primary keys drop what it already holds. Archived
(gzip) shards are whole files, read again when their size or tail changes.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator
from hashlib import blake2b
from pathlib import Path
from stat import S_ISREG
from typing import Any, NamedTuple

from ..knowledge.stats import APPLY, OCCURRENCE, subject
from ..log import writer
from ..log.archive_io import iter_archives, read_archive_bytes
from ..log.reader import shard_files, walk_days
from ..model import decode_line, validate_record
from ..redact.sanitize import Sanitizer

_fast_loads: Callable[[bytes], Any] | None
try:  # chromadb's own dependency, and the `postgres` extra's: see _decode
    from orjson import loads as _fast_loads
except ImportError:  # pragma: no cover - an install without it reads with json alone
    _fast_loads = None

_LONG_NUMBER = re.compile(rb"[0-9]{19}").search  # 10**18 < 2**63: shorter integers are exact

_TAIL = 4096


class Mark(NamedTuple):
    """How far one shard was stored: bytes up to the last complete line, lines, tail hash."""

    offset: int
    lines: int
    tail_hash: str


Identity = tuple[int, int, int, int]  # a shard's inode, size, mtime and ctime (ns)


class Chunk(NamedTuple):
    """Records read from one shard, and the shard's mark once they are stored."""

    rel: str
    records: list[dict[str, Any]]
    mark: Mark
    resynced: bool
    skipped: int  # lines that are no record (torn, invalid): `lore check` reports them
    clean: bool = False  # read from a shard the catalog's memo vouches for: nothing to redact
    whole: Identity | None = None  # on the last chunk of a live shard read whole: its identity
    last: bool = False  # the shard's last chunk in this read (its lines up to the last newline)


class Batch:
    """The chunks of one batch (up to `lines` lines), read from `source` as they are first
    iterated, so the rows stream to the server while the next shards are read and parsed; kept
    for the batch's other passes."""

    def __init__(self, source: Iterator[Chunk], lines: int) -> None:
        self.source, self.limit = source, lines
        self.chunks: list[Chunk] = []
        self.lines = 0

    def _pull(self) -> bool:
        if self.lines >= self.limit:
            return False
        chunk = next(self.source, None)
        if chunk is None:
            self.limit = self.lines  # the source is done
            return False
        self.chunks.append(chunk)
        self.lines += len(chunk.records) + chunk.skipped
        return True

    def __iter__(self) -> Iterator[Chunk]:
        n = 0
        while n < len(self.chunks) or self._pull():
            yield self.chunks[n]
            n += 1

    def any(self) -> bool:
        """Whether the batch holds a chunk (reading the first one)."""
        return bool(self.chunks) or self._pull()

    def all(self) -> list[Chunk]:
        """Every chunk of the batch, the rest read now."""
        while self._pull():
            pass
        return self.chunks


def tail_hash(data: bytes) -> str:
    return blake2b(data[-_TAIL:], digest_size=12).hexdigest()


def shards(actionlog: Path, root: Path) -> Iterator[tuple[str, Path, bool, os.stat_result]]:
    """(path relative to the root, path, archived, its lstat) of every shard that is a regular
    file (no symlink), live ones by day first. One lstat each: a store has thousands."""
    for _, day in walk_days(actionlog):
        for path in shard_files(day):
            st = _regular(path)
            if st is not None:
                yield path.relative_to(root).as_posix(), path, False, st
    for _, _, path in iter_archives(actionlog / "archive"):
        st = _regular(path)
        if st is not None:
            yield path.relative_to(root).as_posix(), path, True, st


def _regular(path: Path) -> os.stat_result | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None  # removed while listed
    return st if S_ISREG(st.st_mode) else None


def _still_there(handle: Any, size: int, mark: Mark) -> bool:
    """Whether the stored part of the shard is unchanged (same tail up to the mark)."""
    if size < mark.offset:
        return False
    handle.seek(max(0, mark.offset - _TAIL))
    return tail_hash(handle.read(min(mark.offset, _TAIL))) == mark.tail_hash


def identity_of(st: os.stat_result) -> Identity:
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def read_shard(
    rel: str,
    path: Path,
    archived: bool,
    mark: Mark | None,
    lines_per_chunk: int,
    vouched: Identity | None = None,
) -> Iterator[Chunk]:
    """The records after `mark` (all of them when the shard changed under it), in chunks
    of at most `lines_per_chunk` lines, each with the mark that covers it.

    `vouched`: the identity the catalog's memo says held nothing to redact. The chunks are
    `clean` only when the file, stat'ed after its bytes were read, still has that identity (an
    edit since, even by hand, changes its mtime or ctime). `whole` on the last chunk: the
    identity of a live shard read from its start to its last byte, unchanged while read."""
    if mark is not None and not archived and _size(path) == mark.offset:
        return  # nothing appended: a shard only grows (a reordering keeps its size and rows)
    with open(path, "rb") as handle:
        before = os.fstat(handle.fileno())
        size = before.st_size
        same = mark is not None and _still_there(handle, size, mark)
        if archived:
            if same and mark is not None and size == mark.offset:
                return
            handle.seek(0)
            whole = handle.read()
            data, error = read_archive_bytes(path)
            if error is not None:
                yield Chunk(rel, [], Mark(size, 0, tail_hash(whole)), mark is not None, 1)
                return
            records, skipped = _decode(data.split(b"\n"))
            yield Chunk(rel, records, Mark(size, len(records), tail_hash(whole)), mark is not None,
                        skipped, last=True)  # fmt: skip
            return
        start, lines = (mark.offset, mark.lines) if same and mark is not None else (0, 0)
        if same and mark is not None and size == mark.offset:
            return
        handle.seek(start)
        data = handle.read(size - start)
        after = identity_of(os.fstat(handle.fileno()))
    end = data.rfind(b"\n") + 1  # a torn last line waits for its end
    if end == 0:
        return
    clean = vouched is not None and after == vouched
    entire = after if start == 0 and end == size and after == identity_of(before) else None
    raw = data[:end].split(b"\n")[:-1]
    resynced = mark is not None and not same
    position = start
    for first in range(0, len(raw), lines_per_chunk):
        part = raw[first : first + lines_per_chunk]
        last = first + lines_per_chunk >= len(raw)
        position += sum(len(line) + 1 for line in part)
        lines += len(part)
        records, skipped = _decode(part)
        tail = data[max(0, position - start - _TAIL) : position - start]
        if position - start < _TAIL and start > 0:  # the tail reaches back before this read
            with open(path, "rb") as again:
                again.seek(max(0, position - _TAIL))
                tail = again.read(min(position, _TAIL))
        mark_now = Mark(position, lines, tail_hash(tail))
        read_whole = entire if last else None
        yield Chunk(rel, records, mark_now, resynced, skipped, clean, read_whole, last)
        resynced = False


def _size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return -1


def _decode(lines: list[bytes]) -> tuple[list[dict[str, Any]], int]:
    """The records of `lines` (and how many are none), as `decode_line` reads them. orjson
    parses a line in about half json's time; a line it parses to a valid record is one json
    parses to an equal record (tests/test_mirror_decode.py), and any other line -- one it
    refuses (NaN, an integer past 64 bits, a lone surrogate) or that is no record -- is left
    to `decode_line`, which decides and says why. So is a line with a run of 19 digits: orjson
    reads an integer past 64 bits as a float, json as an int (the run is cheap to look for)."""
    records, skipped = [], 0
    fast = _fast_loads
    for raw in lines:
        if not raw.strip():
            continue
        record: Any = None
        if fast is not None and not _LONG_NUMBER(raw):
            try:
                record = fast(raw)
            except ValueError:  # (orjson.JSONDecodeError is one)
                record = None
            if record is not None and validate_record(record) is not None:
                record = None
        if record is None:
            record, _ = decode_line(raw)
        if record is None:
            skipped += 1
        else:
            records.append(record)
    return records, skipped


def redacted(sanitizer: Sanitizer, records: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """The records as the store shows them (`lore actions`): redacted again like the writer
    does (a line edited by hand, or written before a rule existed, must not carry a secret
    into the database), their structural fields (id, ts, session ...) as written."""
    return writer.redacted(sanitizer, records)


def _unencodable(value: Any) -> Any:
    raise TypeError(f"{type(value).__name__} is not JSON")


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=_unencodable)
# what `json.dumps(value, ...)` runs, built once: it builds an encoder and its closures on every
# call, a fifth of a mirror's time once redaction is skipped (no cycle check: the values come
# from json.loads or the sanitizer, which make no cycles)
_C_ENCODER = getattr(json.encoder, "c_make_encoder", None)
_ENCODE = None
if _C_ENCODER is not None:
    _ENCODE = _C_ENCODER(
        None, _unencodable, json.encoder.encode_basestring, None, ":", ",", False, False, True
    )


def _json(value: Any) -> str:
    if not value or not isinstance(value, dict):
        return "{}"  # most records' `meta`
    if _ENCODE is None:  # an interpreter without the _json accelerator
        return _ENCODER.encode(value)
    return "".join(_ENCODE(value, 0))


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def action_row(repository: str, rec: dict[str, Any]) -> tuple[Any, ...]:
    """One supervisor_actions row (see migrations/0001_seed_schema.sql)."""
    g = rec.get
    return (
        repository, rec["id"], rec["session"], g("agent") or "", g("project"), g("type") or "",
        g("category"), _json(g("context")), g("outcome") or "success", g("error"),
        _number(g("duration_s")), rec["ts"], _json(g("meta")), _text(g("parent")), g("epic"),
        g("issue"),
    )  # fmt: skip


ACTION_COLUMNS = (
    "repository, id, session_id, supervisor_type, project, action_type, action_category, "
    "context, outcome, error_message, duration_seconds, timestamp, metadata, parent_action_id, "
    "related_epic_id, related_issue_id"
)


def application_row(repository: str, rec: dict[str, Any]) -> tuple[Any, ...] | None:
    """One lorebook_applications row for an `apply_learning` / `occurrence` action."""
    if rec.get("type") not in (APPLY, OCCURRENCE):
        return None
    learning = subject(rec)
    if learning is None:
        return None
    context = rec.get("context")
    solution = context.get("solution") if isinstance(context, dict) else None
    return (
        repository, rec["id"], learning, rec["type"], _text(solution),
        rec.get("outcome") or "success", rec["ts"], rec["session"], rec.get("epic"),
        _text(rec.get("parent")),
    )  # fmt: skip


APPLICATION_COLUMNS = (
    "repository, action_id, learning_id, kind, solution, outcome, timestamp, session_id, "
    "related_epic_id, parent_action_id"
)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
