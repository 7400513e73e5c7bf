"""The keyword index saved next to the manifest it was built from (`keyword.json`).

Tokenizing every learning again in each process was most of a cold keyword search (~1 s at
2,000 learnings on a loaded machine); reading the saved postings costs a few milliseconds. The
file is keyed by the digest of the manifest's bytes, so any change to the indexed documents (a
file re-indexed, a rebuild, another redaction) makes it stale, and it is rebuilt on the next
search. It holds only terms of the manifest's documents, which the indexer redacted before
storing them: no text that the manifest does not already hold.
"""

from __future__ import annotations

import json
from contextlib import suppress
from pathlib import Path
from typing import Any

from ..errors import LoreError
from ..store import atomic_write
from .keyword import KeywordIndex
from .synonyms import SynonymTable

FILE = "keyword.json"
FORMAT = 1  # bump when the terms (synonyms.terms, document_terms) or the state change


def load_keyword_index(folder: Path, key: str, synonyms: SynonymTable) -> KeywordIndex | None:
    """The saved index for the manifest whose digest is `key`; None when missing or stale
    (or unreadable: it is only a cache, rebuilt and saved again by the caller)."""
    try:
        data = json.loads((folder / FILE).read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("key") != key:
        return None
    try:
        return KeywordIndex.restore(data, synonyms)
    except ValueError:
        return None


def save_keyword_index(folder: Path, key: str, index: KeywordIndex) -> None:
    """Save `index` as the keyword index of the manifest whose digest is `key`; a cache that
    cannot be written (a read-only store) only costs the next search the tokenizing again."""
    state: dict[str, Any] = {"format": FORMAT, "key": key, **index.state()}
    data = json.dumps(state, ensure_ascii=False, separators=(",", ":")).encode()
    with suppress(LoreError):
        atomic_write(folder / FILE, data)
