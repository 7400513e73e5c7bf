"""Secrets in file names, including those a slug has disguised.

A learning's file name is a slug: lower case, words joined by '-'. Slugging an unredacted
title turns `ghp_AbC…` into `ghp-abc…` and `4111 1111 1111 1111` into `4111-1111-1111-1111`,
shapes the detectors (written for text) no longer see. So a name is judged as written and as
the text it may have come from (`_unslugged`). An email
slugged to `alice-example-com` cannot be told from words: names are redacted before they are
made (`knowledge.ids.safe_slug`), and this is the check behind that.
"""

from __future__ import annotations

from .identifiers import secret_kind
from .sanitize import Sanitizer

_MAX_WORDS = 40  # a file name is short; past this, only the name as written is judged


def _unslugged(name: str) -> list[str]:
    """The texts a slug may have come from, each judged on its own: runs of two to four
    adjacent words joined by '_' (`ghp_…`, `github_pat_…_…`), and runs of 4-6 digit groups
    (a card number `4111-1111-1111-1111`). Never the whole name re-spaced: a date and a time
    stamp side by side (`9-20261127-002800`) would pass a card number's checksum."""
    words = [w for w in name.split("-") if w]
    if len(words) > _MAX_WORDS:
        return []
    found = [
        "_".join(words[i : i + span])
        for i in range(len(words))
        for span in (2, 3, 4)
        if i + span <= len(words)
    ]
    for i in range(len(words)):
        for span in (2, 3, 4, 5):
            run = words[i : i + span]
            if len(run) == span and all(w.isdigit() and 4 <= len(w) <= 6 for w in run):
                found.append(" ".join(run))
    return found


def name_secret_kind(name: str, sanitizer: Sanitizer | None = None) -> str | None:
    """The kind of secret or PII in file name (or id) `name`, as written or as a slug of
    text holding one; None when it looks clean."""
    kind = secret_kind(name, sanitizer)
    if kind is not None:
        return kind
    for text in _unslugged(name):
        kind = secret_kind(text, sanitizer)
        if kind is not None:
            return kind
    return None
