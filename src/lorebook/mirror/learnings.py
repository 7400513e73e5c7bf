"""The learnings' side of `lore mirror postgres`: all of them replaced in one transaction, and
only when they changed.

Learnings are few and mutable, so a mirror sends the whole set, not an increment. Most runs
find them as they were, and reading them costs more than the day's new actions' fixed part
(the model and pydantic load, every file is parsed and redacted, every row rewritten). So the
repository's row in `lorebook_repositories` keeps a digest of what decides them -- the bytes
of every learning and draft file and where it sits, the redaction settings, and the source of
the code that turns a file into a row -- and the count of rows sent. A run whose digest and
count match sends nothing (the files are only listed and hashed); any other run replaces
them. The digest covers code by its content, not its mtime, so every clone of a repository
and every fresh CI checkout computes the same one.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from hashlib import blake2b
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..knowledge.listing import learning_paths
from ..problems import ignore
from .schema import LATEST

if TYPE_CHECKING:
    import psycopg

    from ..knowledge.model import Learning
    from ..paths import Layout
    from ..redact.sanitize import Sanitizer

# The modules whose code turns a learning file into its row (parse, validate, redact, build
# the row); a change to any of them changes the digest, so the rows are sent again.
_CODE = (
    "knowledge/fileformat.py",
    "knowledge/model.py",
    "knowledge/store.py",
    "knowledge/cache.py",
    "mirror/learnings.py",
)
_FORMAT = b"lorebook mirror learnings 1"


def digest(layout: Layout, sanitizer: Sanitizer) -> str:
    """What decides the learnings' rows, hashed: each learning and draft file (its path in the
    repository and its bytes), the redaction settings and rules' code, the code of `_CODE`
    and the schema version. Listing and hashing only: nothing is parsed."""
    package = Path(__file__).resolve().parent.parent
    h = blake2b(_FORMAT, digest_size=16)
    h.update(f"\0{LATEST}\0{sanitizer.settings()!r}".encode())
    redact = package / "redact"
    code = [redact / n for n in sorted(os.listdir(redact)) if n.endswith(".py")]
    for source in [*code, *(package / rel for rel in _CODE)]:
        _part(h, source.relative_to(package).as_posix(), source)
    for path in learning_paths(layout, (layout.learnings, layout.drafts), ignore):
        _part(h, layout.rel(path), path)
    return h.hexdigest()


def _part(h: Any, name: str, path: Path) -> None:
    try:
        data = path.read_bytes()
    except OSError:  # removed while listed: hashed as missing, so the set reads as changed
        data = b"\0missing"
    h.update(f"\0{name}\0{len(data)}\0".encode())
    h.update(data)


def store(
    conn: psycopg.Connection[Any],
    repository: str,
    name: str,
    learnings: Callable[[], Iterable[Learning]],
    digest_of: Callable[[], str] | None,
) -> int:
    """Record the repository and, when they changed (or `digest_of` is None), replace its
    learnings in one transaction; the number of learnings the database now holds for it.
    `learnings` gives them redacted (LearningStore.sanitized), with what they say (body,
    anchors, prevention, solutions). The caller holds the repository's lock: no other mirror
    of it writes between the digest read and the write."""
    key = digest_of() if digest_of is not None else None
    with conn.transaction(), conn.cursor() as cur:
        cur.execute(
            "INSERT INTO lorebook_repositories (repository, name) VALUES (%s, %s)"
            " ON CONFLICT (repository) DO UPDATE SET name = excluded.name, last_mirror = now()"
            " RETURNING learnings_digest, learnings_count",
            (repository, name),
        )
        found = cur.fetchone()
        if key is not None and found is not None and found[0] == key:
            held = cur.execute(
                "SELECT count(*) FROM lorebook_learnings WHERE repository = %s", (repository,)
            ).fetchone()
            if held is not None and held[0] == found[1]:  # (rows deleted by hand: sent again)
                return int(found[1])
        rows = [_row(repository, item) for item in learnings()]
        cur.execute(
            "DELETE FROM lorebook_learnings WHERE repository = %s AND NOT (id = ANY(%s))",
            (repository, [r[1] for r in rows]),
        )
        if rows:
            cur.executemany(
                "INSERT INTO lorebook_learnings (repository, id, title, kind, category,"
                " severity, status, tags, created, body, anchors, prevention, solutions)"
                " VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s::jsonb)"
                " ON CONFLICT (repository, id) DO UPDATE SET title = excluded.title,"
                " kind = excluded.kind, category = excluded.category,"
                " severity = excluded.severity, status = excluded.status,"
                " tags = excluded.tags, created = excluded.created, body = excluded.body,"
                " anchors = excluded.anchors, prevention = excluded.prevention,"
                " solutions = excluded.solutions",
                rows,
            )
        cur.execute(
            "UPDATE lorebook_repositories SET learnings_digest = %s, learnings_count = %s"
            " WHERE repository = %s",
            (key, len(rows), repository),
        )
    return len(rows)


def _row(repository: str, item: Learning) -> tuple[Any, ...]:
    solutions = [x.model_dump(mode="json") for x in item.solutions]
    return (repository, item.id, item.title, item.kind, item.category, item.severity,
            item.status, list(item.tags), item.created, item.body, list(item.anchors),
            list(item.prevention), json.dumps(solutions, ensure_ascii=False))  # fmt: skip
