"""Splitting a learning into the passages that are embedded.

MiniLM reads at most 256 word pieces (~180 words), so a long learning is cut by section (and long
sections into pieces); every passage starts with the title so it stands on its own. A short
learning is one passage. Bump CHUNKER_VERSION whenever the output changes: the index rebuilds.
"""

from __future__ import annotations

from .documents import Document

CHUNKER_VERSION = 1
MAX_WORDS = 150


def _pieces(text: str, size: int = MAX_WORDS) -> list[str]:
    tokens = text.split()
    return [" ".join(tokens[i : i + size]) for i in range(0, len(tokens), size)] or [""]


def passages(doc: Document) -> list[str]:
    """The passages of `doc`, first the title with its key takeaway (or its opening)."""
    title = doc.title
    body_words = len(doc.body.split())
    if body_words <= MAX_WORDS:
        return [f"{title}\n{doc.body}".strip()]
    lead = doc.takeaway or doc.body
    out = [f"{title}\n{_pieces(lead)[0]}"]
    for heading, text in doc.sections().items():
        for piece in _pieces(text):
            if piece:
                label = f"{title} — {heading}" if heading else title
                out.append(f"{label}\n{piece}")
    return out
