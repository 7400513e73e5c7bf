"""The summaries of sessions a mirror batch read in full, folded from its own records.

`lore sessions` folds a session from all its live records (the catalog's `refresh_sessions`):
in (ts, id) order, each id once, a tracked action's outcome not counted again. Asking the
catalog means syncing it, which parses a new day's lines a second time and folds every
session: most of an incremental mirror of a dense day. A session whose every live record is
in one batch needs neither: this folds it the same way from the records already read. Any
doubt (a shard of the session not read whole in the batch, a record in another session's
shard, an id read twice with other content, a summary already in the database) leaves the
session to the catalog.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ..log.sessions import SessionInfo, observe
from ..model import ULID_RE
from ..store import SIDE
from .source import Chunk


def shard_session(rel: str) -> str | None:
    """The session a live shard belongs to by its name (`<session>.jsonl`, or the side shard
    `<session>~during-git.jsonl`); None for anything else (an archive)."""
    name = rel.rsplit("/", 1)[-1]
    if not name.endswith(".jsonl"):
        return None
    return name[: -len(".jsonl")].removesuffix(SIDE)


def whole_in_batch(chunks: Iterable[Chunk], fresh: set[str]) -> set[str]:
    """The live shards this batch holds from their first line (`fresh`: read from the start in
    this run and first seen in this batch) to their last."""
    return {c.rel for c in chunks if c.last and c.rel in fresh}


def foldable(
    chunks: list[Chunk],
    live: Mapping[str, str],
    shards_of: Mapping[str, list[str]],
    whole: set[str],
) -> dict[str, list[dict[str, Any]]]:
    """The live records of each session this batch can fold alone: every live shard named for
    it is in `whole`, and no record of it sits in a shard named for another session (`live`:
    rel -> the session its name gives, `shards_of`: session -> its live shards' rels)."""
    found: dict[str, list[dict[str, Any]]] = {}
    doubt: set[str] = set()
    for chunk in chunks:
        name = live.get(chunk.rel)
        if name is None:
            continue  # an archive: no summary folds it (`lore sessions` reads live records)
        named = {record["session"] for record in chunk.records}
        named.discard(name)
        doubt |= named  # records in another session's shard
        if chunk.rel in whole:
            mine = found.setdefault(name, [])
            if named:
                mine.extend(r for r in chunk.records if r["session"] == name)
            else:
                mine.extend(chunk.records)
    for session in list(found):
        if (
            session in doubt
            or not found[session]
            or any(rel not in whole for rel in shards_of.get(session, ()))
        ):
            del found[session]
    return found


def fold(session: str, records: list[dict[str, Any]]) -> SessionInfo | None:
    """The summary the catalog folds from these records (all of the session's live ones), or
    None when an id comes twice with different content (which one the catalog kept depends on
    the order it read them)."""
    unique = {record["id"]: record for record in records}
    if len(unique) < len(records):  # a line repeated (a union merge): each id once
        unique = {}
        for record in records:
            seen = unique.setdefault(record["id"], record)
            if seen is not record and seen != record:
                return None
    ordered = sorted(unique.values(), key=lambda r: (r["ts"], r["id"]))
    info = SessionInfo(id=session)
    for record in ordered:
        outcome = record.get("outcome")
        closes = False
        parent = record.get("parent")
        if (
            outcome is not None
            and outcome != "in_progress"
            and isinstance(parent, str)
            and ULID_RE.match(parent)
        ):
            start = unique.get(parent)
            closes = (
                start is not None
                and start.get("kind") == "action"
                and start.get("outcome") == "in_progress"
                and start.get("type") is not None
                and start.get("type") == record.get("type")
                and start["ts"] <= record["ts"]
            )
        observe(
            info,
            {
                "session": session, "ts": record["ts"], "kind": record["kind"],
                "event": record.get("event"), "agent": record.get("agent"),
                "project": record.get("project"), "session_type": record.get("session_type"),
                "reason": record.get("reason"), "closes": closes,
            },
        )  # fmt: skip
    return info


def fold_all(
    candidates: Mapping[str, list[dict[str, Any]]], clean: Callable[[list[Any]], list[Any]]
) -> dict[str, SessionInfo]:
    """The summaries of the `candidates` (see `foldable`), folded, their free text redacted as
    the catalog stores it (`clean`: one sanitize walk over a list of values). The caller keeps
    those the database holds no summary of (one there means records mirrored before)."""
    infos = [info for sid, rows in candidates.items() if (info := fold(sid, rows)) is not None]
    texts = [[i.agent, i.project, i.session_type, i.end_reason] for i in infos]
    for info, (agent, project, kind, reason) in zip(infos, clean(texts), strict=True):
        info.agent, info.project, info.session_type, info.end_reason = agent, project, kind, reason
    return {info.id: info for info in infos}
