"""`lore mirror postgres`: the store into a PostgreSQL database shared by many repositories."""

from __future__ import annotations

from typing import Any

from ... import Lorebook
from ...cmdline.spec import JSON, Arg, Command, Group, Opt
from ...render.mirror import mirror_text
from ..output import to_json, warn

MIRROR = Group(
    "mirror",
    (
        Command(
            "postgres",
            "commands.mirror_cmd:postgres",
            summary="Mirror actions, sessions, learnings and applications into PostgreSQL.",
            args=(Arg("dsn", "libpq DSN or URL (else LORE_PG_DSN, mirror.postgres_dsn).", "?"),),
            options=(
                Opt(
                    "--dry-run", "dry_run", "Count what would be sent; write nothing.", kind="flag"
                ),
                Opt(
                    "--batch",
                    "batch",
                    "Log lines per transaction (default 50000).",
                    kind="int",
                    metavar="N",
                ),
                JSON,
            ),
            help="""Mirror this repository's actions, sessions, learnings and applications into
PostgreSQL: seed 000's tables plus a `repository` column, so many repositories share one
database (docs/org-scale.md). Incremental: only the log lines past the watermark kept in the
database (per shard), so any clone can run it; idempotent: a rerun, a crash half-way or two
clones at once store no row twice and lose none. The password is never printed.

Examples:
  lore mirror postgres --dry-run
  LORE_PG_DSN=postgresql://lore@db.internal/lore lore mirror postgres --json
""",
        ),
    ),
    help="Mirror the store into systems an organisation runs (never from a hook).",
)


def postgres(book: Lorebook, values: dict[str, Any]) -> str:
    result = book.mirror_postgres(
        values["dsn"],
        dry_run=values["dry_run"],
        batch_lines=values["batch"],
        on_warning=lambda notice: warn(notice, None, book.sanitizer),
    )
    return to_json(result) if values["as_json"] else mirror_text(dict(result))
