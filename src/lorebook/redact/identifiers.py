"""Identifiers that look like secrets are refused, not redacted.

Session ids, agents, projects, epics, issues, action types and expertise domains become file
names, record keys and catalog rows, where a redaction marker would break them and the value
itself would put a secret on disk (and in every teammate's clone). So each goes through the
sanitizer's detectors first, and one that looks like a secret is refused with a message that
names where it came from but never echoes it. On the append path: stdlib only, and an id seen
before costs one set lookup.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

from ..errors import UsageError
from ..model import ULID_RE
from . import patterns as P
from . import scan as S
from .sanitize import Sanitizer

PII_KINDS = frozenset({"email", "phone", "credit_card", "ssn"})
_MEMO = 4096

_default: Sanitizer | None = None


def default_sanitizer() -> Sanitizer:
    """A sanitizer without the store's extra rules, for callers that have none at hand."""
    global _default
    if _default is None:
        _default = Sanitizer()
    return _default


def id_shaped(token: str) -> bool:
    """Lower-case words, digits and ULIDs joined by '/', '.', '_' or '-': what generated ids
    and paths to them look like (auto ids, ULIDs, UUIDs, digests, `session-<ULID>`), and
    what the high-entropy rule alone does not refuse or redact in ids, file names and
    messages.  Generated keys have capitals outside a ULID's alphabet or shape."""
    return all(part == part.lower() or ULID_RE.match(part) for part in P.R.ID_PARTS.split(token))


def _spans(s: str, sanitizer: Sanitizer) -> list[S.Span]:
    """The secrets and PII the sanitizer's rules find in `s`, but for id-shaped "entropy"."""
    b = s.encode()
    extra = bool(sanitizer._extra)
    # the triage is the cheap pre-filter: most ids and messages stop here
    ascii_only = s.isascii() and not extra
    fams = sanitizer._triage(s) if ascii_only else S.families(s, b, sanitizer._keyed)
    if not fams and not extra:
        return []
    found: list[S.Span] = []
    S.find_spans(s, b, fams, sanitizer._name, sanitizer._extra, found.append, sanitizer._hits)
    return [
        span for span in found if span[3] != "high_entropy" or not id_shaped(s[span[0] : span[2]])
    ]


def _clean(text: str) -> str:
    return P.without_surrogates(text)


def secret_kind(value: str, sanitizer: Sanitizer | None = None) -> str | None:
    """The kind of secret or PII the detectors find in identifier `value`, else None."""
    sanitizer = sanitizer or default_sanitizer()
    known = sanitizer.plain_ids
    if value in known:
        return None
    if P.R.GENERATED_ID.fullmatch(value) is None:
        spans = _spans(_clean(value), sanitizer)
        if spans:
            return min(spans, key=lambda span: span[1])[3]  # the most specific rule
    if len(known) >= _MEMO:  # bounded: forget and relearn
        known.clear()
    known.add(value)
    return None


def _names_a_file(s: str, span: S.Span) -> bool:
    if span[3] != "secret_assignment":
        return False
    head = s[: span[0]].rstrip(" \t:=")
    key = head.rsplit(None, 1)[-1] if head.strip() else ""
    return P.R.FILE_KEY.fullmatch(key) is not None


def redact_message(text: str, sanitizer: Sanitizer | None = None) -> str:
    """An error or warning line with its secrets and PII replaced by markers (ids, paths and
    the other id-shaped values it names are kept: the user needs them)."""
    s = _clean(text)
    spans = [span for span in _spans(s, sanitizer or default_sanitizer())
             if not _names_a_file(s, span)]  # fmt: skip
    return S.apply_spans(s, spans)[0] if spans else s


def check_identifier(label: str, value: str, sanitizer: Sanitizer | None = None) -> str:
    """`value`, unless it looks like a secret: then a one-line UsageError naming `label` (the
    option, variable or field it came from) and the kind of secret, never the value."""
    kind = secret_kind(value, sanitizer)
    if kind is None:
        return value
    what = "personal data" if kind in PII_KINDS else "a secret"
    raise UsageError(
        "{}: the value looks like {} ({}); refusing to use it as an identifier", label, what, kind
    )


def redact_path(rel: str, sanitizer: Sanitizer | None = None) -> tuple[str, str | None]:
    """`rel` with each part whose name looks like a secret (judged as an identifier, without
    its extension) replaced by a marker, and the kind of the first such part (else None)."""
    parts = rel.split("/")
    first = None
    for i, part in enumerate(parts):
        stem, dot, suffix = part.rpartition(".")
        if stem and (kind := secret_kind(stem, sanitizer)):
            parts[i] = f"[REDACTED:{kind}]{dot}{suffix}"
        elif kind := secret_kind(part, sanitizer):
            parts[i] = f"[REDACTED:{kind}]"
        else:
            continue
        first = first or kind
    return ("/".join(parts) if first else rel), first
