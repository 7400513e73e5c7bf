"""Where the mirror goes: the DSN from the argument, `LORE_PG_DSN` or `mirror.postgres_dsn`,
and the same DSN with its password masked -- the only form that is ever printed."""

from __future__ import annotations

import re
from collections.abc import Mapping

from ..errors import UsageError
from ..notices import Notice

MASK = "***"
ENV = "LORE_PG_DSN"
_URL_PASSWORD = re.compile(r"^(\w+(?:\+\w+)?://[^:/@?#]*:)([^@/?#]*)(@)")
_KV_PASSWORD = re.compile(r"(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", re.IGNORECASE)
_QUERY_PASSWORD = re.compile(r"([?&]password=)([^&#]*)", re.IGNORECASE)


def resolve_dsn(given: str | None, environ: Mapping[str, str], configured: str | None) -> str:
    """The DSN to use: the argument, else LORE_PG_DSN, else `mirror.postgres_dsn`."""
    dsn = given or environ.get(ENV) or configured
    if not dsn or not dsn.strip():
        raise UsageError(
            "no PostgreSQL DSN: pass one, set {} or mirror.postgres_dsn in .lore/config.yaml", ENV
        )
    return dsn.strip()


def committed_password(configured: str | None, config_file: str) -> list[Notice]:
    """A warning when `mirror.postgres_dsn` holds a password: the config is committed with the
    repository, so everyone who can read it (and every clone, fork and CI log of it) can."""
    if not configured or not passwords(configured):
        return []
    return [
        Notice(
            "{} holds a PostgreSQL password in mirror.postgres_dsn, and the file is committed"
            " with the repository: remove it and set it in LORE_PG_DSN, ~/.pgpass or"
            " PGPASSWORD instead (docs/org-scale.md)",
            config_file,
        )
    ]


def passwords(dsn: str) -> list[str]:
    """The password(s) a DSN carries, to be masked wherever they might be echoed."""
    found = [m.group(2) for m in (_URL_PASSWORD.search(dsn),) if m and m.group(2)]
    found += [m.group(2).strip("'") for m in _KV_PASSWORD.finditer(dsn)]
    found += [m.group(2) for m in _QUERY_PASSWORD.finditer(dsn)]
    return [p for p in found if p]


def mask_dsn(dsn: str) -> str:
    """`dsn` with any password replaced by ***: URL (`postgresql://u:pw@h/db`, `?password=`)
    and key=value (`host=h password=pw`) forms."""
    out = _URL_PASSWORD.sub(lambda m: m.group(1) + MASK + m.group(3), dsn)
    out = _KV_PASSWORD.sub(lambda m: m.group(1) + MASK, out)
    return _QUERY_PASSWORD.sub(lambda m: m.group(1) + MASK, out)


def scrub(text: str, dsn: str) -> str:
    """`text` (a driver's message) with the DSN's password(s) masked wherever they appear."""
    for secret in sorted(passwords(dsn), key=len, reverse=True):
        text = text.replace(secret, MASK)
    return text
