"""The database side of `lore mirror postgres`: connecting (the password never shown), the
schema version a database holds, and this lorebook's migrations applied under a global lock.

The migrations are versioned SQL files in `migrations/` (`0001_seed_schema.sql` is seed 000's
schema fixed for PostgreSQL 15, plus `repository`); a database migrated by a newer lorebook is
refused before anything is written.
"""

from __future__ import annotations

from importlib import resources
from typing import TYPE_CHECKING, Any

from ..errors import LoreError
from .dsn import mask_dsn, scrub

if TYPE_CHECKING:
    import psycopg

INSTALL = "pip install 'lorebook[postgres]'"
_MIGRATION_LOCK = 0x6C6F7265_00000001  # "lore" + 1: one migration at a time, any repository


def migrations() -> list[tuple[int, str]]:
    """(version, SQL) of this lorebook's migrations, in order."""
    folder = resources.files(__package__).joinpath("migrations")
    found = []
    for entry in folder.iterdir():
        name = entry.name
        if name.endswith(".sql") and name[:4].isdigit():
            found.append((int(name[:4]), entry.read_text(encoding="utf-8")))
    return sorted(found)


LATEST = max(v for v, _ in migrations())


def driver() -> Any:
    """The psycopg module, or a one-line LoreError saying how to install it."""
    try:
        import psycopg
    except ImportError:
        raise LoreError("the PostgreSQL driver is not installed: " + INSTALL) from None
    return psycopg


def connect(dsn: str) -> psycopg.Connection[Any]:
    """A connection (autocommit: transactions are explicit), or a one-line LoreError that
    names the masked DSN and never the password."""
    module = driver()
    try:
        conn: psycopg.Connection[Any] = module.connect(dsn, autocommit=True, connect_timeout=10)
    except (module.Error, ValueError) as exc:
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise LoreError(
            "cannot connect to PostgreSQL {}: {}", mask_dsn(dsn), scrub(reason, dsn)
        ) from None
    return conn


def schema_version(conn: psycopg.Connection[Any]) -> int:
    """The database's lorebook schema version (0: none yet)."""
    row = conn.execute("SELECT to_regclass('lorebook_schema') IS NOT NULL").fetchone()
    if not row or not row[0]:
        return 0
    found = conn.execute("SELECT coalesce(max(version), 0) FROM lorebook_schema").fetchone()
    return int(found[0]) if found else 0


def refuse_newer(version: int, dsn: str) -> None:
    """Stop before anything is written to a database a newer lorebook migrated."""
    if version > LATEST:
        raise LoreError(
            "the database at {} has lorebook schema version {}, newer than this lorebook knows"
            " ({}): upgrade lorebook; nothing was written",
            mask_dsn(dsn), version, LATEST,
        )  # fmt: skip


def migrate(conn: psycopg.Connection[Any], dsn: str) -> int:
    """Apply the missing migrations (one transaction, one migrator at a time)."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        conn.execute(
            "CREATE TABLE IF NOT EXISTS lorebook_schema (version INTEGER PRIMARY KEY,"
            " applied_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now())"
        )
        version = schema_version(conn)
        refuse_newer(version, dsn)
        for number, sql in migrations():
            if number > version:
                conn.execute(sql.encode())
                conn.execute("INSERT INTO lorebook_schema(version) VALUES (%s)", (number,))
        return max(version, LATEST)
