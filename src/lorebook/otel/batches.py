"""Which sessions go in which request, and the requests run on every core.

A batch is whole sessions, grouped until their shards hold `BATCH_BYTES` (about 5,000
records); each is read, mapped, built, encoded and posted by one worker (`send_batch`), so the
work spreads over the machine's cores: the SDK's encoder builds each span's protobuf message
in Python, two thirds of an export. The caller records a batch in the watermark when its worker says
the receiver accepted it, in whatever order they finish.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..collector import collector_paused
from . import spans

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any

    Shard = tuple[str, Path, int]  # relative path, path, size when listed
    Batch = list[list[Shard]]  # the shards of each of its sessions

BATCH_BYTES = 2_000_000  # shard bytes per request: ~5,000 records, ~1-2 MB of protobuf


def plan(found: dict[str, list[Shard]], accepted: dict[str, int] | None) -> tuple[list[Batch], int]:
    """(the batches to send, how many sessions are left out as unchanged): with `accepted`
    (`--since-last`), a session whose shards all have the size the receiver accepted stays
    out."""
    batches: list[Batch] = []
    current: Batch = []
    size = unchanged = 0
    for _, shards in sorted(found.items()):
        if accepted is not None and all(accepted.get(rel) == n for rel, _, n in shards):
            unchanged += 1
            continue
        current.append(shards)
        size += sum(n for _, _, n in shards)
        if size >= BATCH_BYTES:
            batches.append(current)
            current, size = [], 0
    if current:
        batches.append(current)
    return batches, unchanged


def map_batch(
    batch: Batch, repo: spans.Repository, redact: Callable[[str], str] | None
) -> tuple[list[spans.SpanData], int, int]:
    """(the spans of the batch's sessions, how many sessions, invalid lines skipped)."""
    from ..log.reader import read_shard

    skipped = 0

    def problem(_: object) -> None:
        nonlocal skipped
        skipped += 1

    out: list[spans.SpanData] = []
    sessions = 0
    for shards in batch:
        by_session: dict[str, list[dict[str, Any]]] = {}
        seen: set[str] = set()
        for rel, path, _ in shards:
            for _, record in read_shard(path, rel, problem, dedupe=False):
                if record["id"] not in seen:
                    seen.add(record["id"])
                    by_session.setdefault(str(record.get("session")), []).append(record)
        for session, records in sorted(by_session.items()):
            out.extend(spans.session_spans(session, records, repo, redact))
            sessions += 1
    return out, sessions, skipped


# one worker's sender and mapping settings, set by `start` (in each pool process, or here)
_WORKER: dict[str, Any] = {}


def start(url: str, shown: str, clean: Callable[[str], str], redacted: bool,
          repo: spans.Repository) -> None:  # fmt: skip
    from .send import Sender

    _WORKER.update(sender=Sender(url, shown, clean), clean=clean, redacted=redacted, repo=repo)


def send_batch(batch: Batch) -> tuple[int, int, int, str | None]:
    """(spans, sessions, skipped lines, why the receiver refused it or None) for one batch,
    in the worker `start` prepared."""
    redact = _WORKER["clean"] if _WORKER["redacted"] else None
    with collector_paused():  # its records, spans and messages hold no cycles
        made, sessions, skipped = map_batch(batch, _WORKER["repo"], redact)
        return len(made), sessions, skipped, _WORKER["sender"].post(made)


def stop() -> None:
    sender = _WORKER.pop("sender", None)
    if sender is not None:
        sender.close()
