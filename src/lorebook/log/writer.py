"""Build, redact, encode and append action-log records: the hot path, stdlib only.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import json
import math
import os
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping

from ..errors import UsageError
from ..ids import new_ulid, ulid_ms
from ..model import (
    OUTCOMES,
    SCHEMA_VERSION,
    SESSION_ID_RE,
    SESSION_TYPES,
    TYPE_RE,
    ULID_RE,
    infer_category,
)
from ..redact.identifiers import check_identifier
from ..redact.sanitize import Sanitizer, clip
from ..store import SIDE, append_line, find_git_dir, git_operation
from ..timeutil import UTC, datetime, format_ts, utcnow

TYPE_CHECKING = False  # typing costs milliseconds on the append path; mypy still sees it
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

STRUCTURAL = ("v", "id", "ts", "kind", "session")  # validated, never redacted
_STRUCTURAL = frozenset(STRUCTURAL)
# record fields that are keys (catalog rows, filters, report groups): refused when they hold a
# secret, where free text is redacted
IDENTIFIERS = ("type", "agent", "project", "epic", "issue")


_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True, allow_nan=False)
_make_c_encoder = getattr(json.encoder, "c_make_encoder", None)


def encode(record: Mapping[str, Any]) -> bytes:
    """Canonical line: compact, sorted keys, UTF-8, newline-terminated."""
    # `json.dumps(record, **options)` builds a JSONEncoder and, in `iterencode`, its closures
    # on every call (~5 µs of a ~15 µs encode); calling the C encoder directly skips that and
    # writes the same bytes with the same checks (a fresh `markers` dict: cycles still raise).
    if _make_c_encoder is None:  # an interpreter without the _json accelerator
        return (_JSON.encode(record) + "\n").encode("utf-8")
    chunks = _make_c_encoder(
        {}, _JSON.default, json.encoder.encode_basestring, None, ":", ",", True, False, False
    )(record, 0)
    return ("".join(chunks) + "\n").encode("utf-8")


def shard_path(actionlog: Path | str, ts: str, session: str) -> str:
    """`actionlog/YYYY/MM/DD/<session>.jsonl` for the record's UTC day (a string: building a
    Path costs more than the append itself, and pathlib's import ~8 ms of a cold `lore log`)."""
    return os.path.join(actionlog, ts[0:4], ts[5:7], ts[8:10], f"{session}.jsonl")


def host_name() -> str:
    return os.uname().nodename or "localhost"


def auto_session_id(agent: str, project: str, host: str, day: str) -> str:
    """The shared session of (agent, project, host, UTC day): every process computes the same id."""
    # two 32-bit checksums: stable across processes and versions, and zlib loads in
    # microseconds where hashlib loads OpenSSL (~5 ms on the append path)
    key = f"{agent}\0{project}\0{host}".encode()
    digest = f"{zlib.crc32(key):08x}{zlib.adler32(key):08x}"[:12]
    return f"auto-{day.replace('-', '')}-{digest}"


def session_start_day(session: str) -> str | None:
    """The earliest UTC day a session can have shards, when its id says so (auto ids, ULIDs).

    A ULID gets a day of slack for clock skew between the id's maker and the writer.
    """
    if session.startswith("auto-") and len(session) > 13 and session[5:13].isdigit():
        d = session[5:13]
        return f"{d[:4]}-{d[4:6]}-{d[6:]}"
    if ULID_RE.match(session):
        ms = ulid_ms(session)
        if ms is not None:
            return datetime.fromtimestamp(ms / 1000 - 86400, UTC).strftime("%Y-%m-%d")
    return None


def check_session_id(
    session: str, label: str = "session", sanitizer: Sanitizer | None = None
) -> str:
    """A session id names its shard files: a safe file name that does not look like a secret
    under `sanitizer`'s rules (`label` says where it came from: an option, LORE_SESSION)."""
    if not SESSION_ID_RE.match(session):
        where = "" if label == "session" else f"{label}: "
        raise UsageError(
            "{}session id {!r} must be 1-128 characters of letters, digits, '.', '_' or '-'",
            where,
            session,
        )
    return check_identifier(label, session, sanitizer)


def duration_error(duration_s: object) -> UsageError | None:
    """Why `duration_s` is not a duration (None, or a finite number of seconds >= 0): what
    `action_record` refuses, and what the appender clips instead when asked to."""
    if duration_s is None:
        return None
    if isinstance(duration_s, bool) or not isinstance(duration_s, int | float):
        return UsageError("duration {!r} must be a number of seconds", duration_s)
    if not 0 <= duration_s < math.inf:  # also refuses nan and inf (not valid JSON)
        return UsageError("duration {!r} must be a non-negative number of seconds", duration_s)
    return None


def action_record(
    action_type: str,
    *,
    session: str,
    agent: str | None,
    project: str | None,
    context: Any = None,
    outcome: str = "success",
    category: str | None = None,
    error: str | None = None,
    duration_s: float | None = None,
    parent: str | None = None,
    epic: str | None = None,
    issue: str | None = None,
    meta: Mapping[str, Any] | None = None,
    now: datetime | None = None,
) -> dict[str, Any]:
    """A v1 action record (not yet redacted), with every argument checked but `session`: the
    appender checks a session id where it enters (`Appender.default_session`), before it
    reads the session's shards."""
    if not isinstance(action_type, str) or not TYPE_RE.match(action_type):
        raise UsageError(
            "action type {!r} must be a lowercase word (letters, digits, '_'), "
            "e.g. commit, deploy, tool_call",
            action_type,
        )
    if outcome not in OUTCOMES:
        raise UsageError("outcome {!r} is not one of: " + ", ".join(OUTCOMES), outcome)
    if context is None:
        context = {}
    if not isinstance(context, Mapping):
        raise UsageError("context must be a JSON object, not {}", type(context).__name__)
    refused = duration_error(duration_s)
    if refused is not None:
        raise refused
    if parent is not None and not ULID_RE.match(parent):
        raise UsageError("parent {!r} is not an action id (a 26-character ULID)", parent)
    moment = now or utcnow()
    return {
        "v": SCHEMA_VERSION,
        "kind": "action",
        "id": new_ulid(int(moment.timestamp() * 1000)),
        "ts": format_ts(moment),
        "session": session,
        "agent": agent,
        "project": project,
        "type": action_type,
        "category": category or infer_category(action_type),
        "outcome": outcome,
        "context": dict(context),
        "error": error,
        "duration_s": duration_s,
        "parent": parent,
        "epic": epic,
        "issue": issue,
        "meta": dict(meta or {}),
    }


def session_record(
    event: str,
    *,
    session: str,
    agent: str | None,
    project: str | None,
    session_type: str | None = None,
    reason: str | None = None,
    meta: Mapping[str, Any] | None = None,
    now: datetime | None = None,
) -> dict[str, Any]:
    """A v1 session event (start, end or heartbeat); `session` is checked by the appender."""
    if session_type is not None and session_type not in SESSION_TYPES:
        raise UsageError(
            "session type {!r} is not one of: " + ", ".join(SESSION_TYPES), session_type
        )
    if reason is not None and not TYPE_RE.match(reason):
        raise UsageError("end reason {!r} must be a lowercase word like normal or timeout", reason)
    moment = now or utcnow()
    record: dict[str, Any] = {
        "v": SCHEMA_VERSION,
        "kind": "session",
        "event": event,
        "id": new_ulid(int(moment.timestamp() * 1000)),
        "ts": format_ts(moment),
        "session": session,
        "agent": agent,
        "project": project,
        "meta": dict(meta or {}),
    }
    if session_type is not None:
        record["session_type"] = session_type
    if reason is not None:
        record["reason"] = reason
    return record


def _redact_free(sanitizer: Sanitizer, record: Mapping[str, Any]) -> tuple[dict[str, Any], int]:
    """The free-form fields of `record`, redacted in one walk, and how many were replaced."""
    free = {k: v for k, v in record.items() if k not in _STRUCTURAL}
    free["meta"] = free.get("meta") or {}
    clean, total = sanitizer.sanitize(free)
    if total:
        meta = clean["meta"]
        meta["redactions"] = int(meta.get("redactions", 0) or 0) + total
    return clean, total


def redacted(sanitizer: Sanitizer, records: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """`records` as read, redacted like the writer does (`lore check` alone reads them raw, to
    report them): a line edited by hand, or written before a rule existed, may hold a secret.
    A record with nothing to redact is yielded as it is; closing this closes `records`."""
    try:
        for record in records:
            clean, total = _redact_free(sanitizer, record)
            if not total:
                yield record
                continue
            out = {k: record[k] if k in _STRUCTURAL else clean[k] for k in record}
            out.update((k, v) for k, v in clean.items() if k not in out)
            yield out
    finally:  # a catalog query releases its connection
        close = getattr(records, "close", None)
        if close is not None:
            close()


class LogWriter:
    """Redacts and appends records to their session's shard; publishes each stored record."""

    def __init__(
        self,
        actionlog: Path | str,
        sanitizer: Sanitizer,
        *,
        fsync: bool = False,
        max_line_bytes: int = 65536,
        listeners: list[Callable[[dict[str, Any]], None]] | None = None,
    ) -> None:
        self.actionlog = os.fspath(actionlog)  # the directory of the shards
        self.sanitizer = sanitizer
        self.fsync = fsync
        self.max_line_bytes = max_line_bytes
        self.listeners = listeners if listeners is not None else []
        self._paths: dict[tuple[str, str], tuple[str, bool]] = {}  # -> (path, not today)
        self._git_dir: str | None = None  # found on the first write (a few stats), then kept
        self._git_dir_known = False

    def redact(self, record: dict[str, Any]) -> dict[str, Any]:
        """Redact every free-form field; count the redactions in `meta.redactions`. An
        identifier the walk redacted refuses the record: it would become a key or a name."""
        clean, total = _redact_free(self.sanitizer, record)
        if total:
            for key in IDENTIFIERS:
                value = record.get(key)
                if clean.get(key) != value and isinstance(value, str):
                    check_identifier(key, value, self.sanitizer)
        stored = {k: record[k] for k in STRUCTURAL if k in record}  # as they are, in this order
        stored.update(clean)
        return stored

    def _fit(self, record: dict[str, Any]) -> bytes:
        """Encode; when over the line cap, replace the bulky fields with a visible summary."""
        line = encode(record)
        if len(line) <= self.max_line_bytes:
            return line
        for key in ("context", "meta"):
            value = record.get(key)
            if isinstance(value, dict) and value:
                size = len(encode(value))
                record[key] = {
                    "_truncated": f"{key} of {size} bytes dropped: the line cap is "
                    f"{self.max_line_bytes} bytes",
                    "keys": sorted(str(k) for k in value)[:20],
                }
                line = encode(record)
                if len(line) <= self.max_line_bytes:
                    return line
        for key, value in record.items():
            if key not in STRUCTURAL and isinstance(value, str) and len(value) > 200:
                kept = clip(value, 200, "")  # the value is redacted: keep markers whole
                record[key] = kept + f"…[TRUNCATED {len(value) - len(kept)} chars]"
        return encode(record)

    def write(
        self, record: dict[str, Any], *, header: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Redact, encode and append one record (with `header` first if the shard is new)."""
        stored = self.redact(record)
        line = self._fit(stored)
        head = b""
        if header is not None:
            head = self._fit(self.redact(header))
        key = (stored["ts"][:10], stored["session"])
        entry = self._paths.get(key)
        if entry is None:
            if len(self._paths) > 256:
                self._paths.clear()
            today = format_ts(utcnow())[:10]
            entry = self._paths[key] = (shard_path(self.actionlog, *key), key[0] != today)
        path, late = entry
        if not self._git_dir_known:
            self._git_dir = find_git_dir(self.actionlog)
            self._git_dir_known = True
        if self._git_dir is not None and git_operation(self._git_dir) is not None:
            # git owns the tracked shards until the rebase/merge/… ends: `--abort` would
            # reset ours and `--continue` refuse it (see lorebook.store.SIDE)
            if head and os.path.exists(path):
                head = b""  # the session's start event is in its shard already
            path = path[: -len(".jsonl")] + SIDE + ".jsonl"
        append_line(path, line, fsync=self.fsync, header=head)
        if late:  # a record for another day: bump its directory's mtime so that incremental
            try:  # noqa: SIM105 - readers (the action catalog) look at that day again
                os.utime(os.path.dirname(path))
            except OSError:
                pass  # only a hint; the record is stored
        for listener in self.listeners:
            listener(stored)
        return stored
