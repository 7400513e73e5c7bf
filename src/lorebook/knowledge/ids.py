"""Learning ids: `<created>-<slug>-<7 random consonants>`, equal to the file name.

The random suffix (~30 bits) makes ids collision-free without coordination: two branches that
learn the same thing on the same day still create two files, and git merges them cleanly.
Letters only, no vowels: the sanitizer's high-entropy rule leaves word-like segments alone
(a mixed letter/digit suffix got a third of all ids redacted as secrets), and no suffix spells
a word.
"""

from __future__ import annotations

import hashlib
import os
import re
import unicodedata
from datetime import date
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..redact.sanitize import Sanitizer

_ALPHABET = "bcdfghjkmnpqrstvwxz"  # 19 consonants (no l, no y)
_NON_WORD = re.compile(r"[^a-z0-9]+")
SLUG_MAX = 48


def slugify(title: str, limit: int = SLUG_MAX) -> str:
    """Lower-case ASCII words joined by '-', cut at a word boundary ('learning' if empty)."""
    ascii_text = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    slug = _NON_WORD.sub("-", ascii_text.lower()).strip("-")
    if len(slug) > limit:
        cut = slug[: limit + 1]
        slug = cut[: cut.rfind("-")] if "-" in cut else slug[:limit]
    return slug.strip("-") or "learning"


def safe_slug(text: str, sanitizer: Sanitizer | None = None, limit: int = SLUG_MAX) -> str:
    """`slugify(text)` for a name made from free text (a title): the sanitizer redacts it
    first, while its case and punctuation still let the detectors see a secret (a slug
    lower-cases `ghp_AbC…` to `ghp-abc…`, which no pattern matches), and a slug that still
    reads as one (`redact.names`) becomes `redacted`. No secret ever becomes a file name."""
    from ..redact.identifiers import default_sanitizer
    from ..redact.names import name_secret_kind

    sanitizer = sanitizer or default_sanitizer()
    slug = slugify(sanitizer.redact_text(text)[0], limit)
    return "redacted" if name_secret_kind(slug, sanitizer) else slug


def _spell(value: int, length: int) -> str:
    out = []
    for _ in range(length):
        value, digit = divmod(value, len(_ALPHABET))
        out.append(_ALPHABET[digit])
    return "".join(out)


def random_suffix(length: int = 7) -> str:
    return _spell(int.from_bytes(os.urandom(8), "big"), length)


def keyed_suffix(key: str, length: int = 7) -> str:
    """`random_suffix`'s alphabet, but a function of `key`: the same key gives the same id in
    every process and clone (an automatic draft's trigger)."""
    return _spell(int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "big"), length)


def new_learning_id(title: str, created: date, sanitizer: Sanitizer | None = None) -> str:
    """A fresh id for a learning titled `title` created on `created` (`safe_slug`, with the
    store's sanitizer: its extra patterns too; the default rules without one)."""
    return f"{created.isoformat()}-{safe_slug(title, sanitizer)}-{random_suffix()}"
