"""Splitting a learning into the passages that are embedded.

MiniLM reads at most 256 word pieces (~180 words), so a long learning is cut by section (and long
sections into pieces); every passage starts with the title so it stands on its own. A short
learning is one passage. The title alone is one more passage: a query is usually a short
problem statement, and title-to-title similarity finds the same problem most reliably (measured on
the duplicate-issue benchmark: recall@5 up, no loss elsewhere). The title passage also gives each
learning its hubness (hubness.py). Bump CHUNKER_VERSION whenever the output or what the index
derives from it changes: the index rebuilds.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import re

from .documents import Document

_HEADING_MARK = re.compile(r"^#{1,6} +", re.MULTILINE)

CHUNKER_VERSION = 3  # 3: each learning's hubness is recorded in the manifest
MAX_WORDS = 150


def _pieces(text: str, size: int = MAX_WORDS) -> list[str]:
    tokens = text.split()
    return [" ".join(tokens[i : i + size]) for i in range(0, len(tokens), size)] or [""]


def _plain(text: str) -> str:
    """Markdown heading markers are noise to the model."""
    return _HEADING_MARK.sub("", text).strip()


def passages(doc: Document) -> list[str]:
    """The passages of `doc`: the title, then the title with the body (or its sections)."""
    title = doc.title
    body = _plain(doc.body)
    if not body:
        return [title]
    if len(body.split()) <= MAX_WORDS:
        return [title, f"{title}\n{body}"]
    lead = doc.takeaway or body
    out = [title, f"{title}\n{_pieces(lead)[0]}"]
    for heading, text in doc.sections().items():
        for piece in _pieces(text):
            if piece:
                label = f"{title} — {heading}" if heading else title
                out.append(f"{label}\n{piece}")
    return out
