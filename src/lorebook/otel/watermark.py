"""What one receiver already holds: per endpoint, the size of each shard when its session
was last accepted there.

Shards are append-only JSONL, one per session per day, so a shard's size says how much of it
was sent. A session is sent again (whole, with the same ids: the receiver sees the same
spans) when one of its shards grew or appeared -- a session still open is sent as it stands
and again when it grows, a resumed session likewise. The sizes are taken before the shard is
read, so a line appended during an export is sent next time, never skipped. The file
(`.lore/cache/otel/<hash of the endpoint>.json`) is written atomically, never through a
symlink, and only after the receiver accepted a batch, with the sessions of that batch.
"""

from __future__ import annotations

import json
from hashlib import blake2b
from typing import TYPE_CHECKING

from ..errors import LoreError
from ..store import atomic_write

if TYPE_CHECKING:
    from pathlib import Path


def path_for(cache: Path, endpoint: str) -> Path:
    """The watermark of `endpoint` (a hash: the URL may carry a token and never reaches disk)."""
    name = blake2b(endpoint.encode(), digest_size=12).hexdigest()
    return cache / "otel" / f"{name}.json"


def load(path: Path) -> dict[str, int]:
    """shard (relative path) -> size accepted; empty when there is none yet. A damaged file
    is one line: deleting it means everything is sent again (same ids, so no duplicates)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise LoreError("{}: cannot be read: {}", path, exc.strerror or exc) from None
    try:
        data = json.loads(text)
        shards = data["shards"]
        if not all(isinstance(k, str) and type(v) is int for k, v in shards.items()):
            raise ValueError
    except (ValueError, KeyError, TypeError, AttributeError):
        raise LoreError("{}: not an otel export watermark; delete it to send everything "
                        "again", path) from None  # fmt: skip
    return dict(shards)


def save(path: Path, shards: dict[str, int]) -> None:
    data = {"v": 1, "shards": dict(sorted(shards.items()))}
    atomic_write(path, (json.dumps(data, separators=(",", ":")) + "\n").encode())
