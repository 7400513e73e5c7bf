"""Where secrets are in a string: the triage, the scan, and the strings' side of redaction.

``families`` triages a string (which rule families can match at all, with a few C calls and
operators), ``find_spans`` runs only those rules (each family's search is in
:mod:`lorebook.redact.finders`), ``apply_spans`` puts the markers in, and :class:`Redactor`
does all that for one string, or for the strings of a container at once: joined by "\n",
which no rule crosses, they take one triage.  The rules and tables live in
:mod:`lorebook.redact.patterns`; :mod:`lorebook.redact.sanitize` walks the values.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from . import finders
from .finders import Add, Name
from .finders import Span as Span  # (callers name it here)
from .patterns import (
    DIG,
    FAM,
    HEX_CHARS,
    MARK,
    RUN_END,
    RUN_MAP,
    RUN_MAP_NO_SLASH,
    RUN_MIN,
    R,
    key_hits,
    key_words,
    keyword_in_key,
    name_info,
    plausible_value,
    prose_hint,
    prose_password,
    without_surrogates,
)
from .patterns import (
    has_keyword as has_keyword,  # (tests and callers look for it here)
)

# rule families that a string's triage lets through
F_KEYED = 1  # a secret-ish name before "=" / ":" or after "--": KEY=value, --token x
F_AT = 2  # "@": emails, URL credentials
F_DIGITS = 4  # phone / SSN / card shaped digits
F_LONG = 8  # a run of >= 20 token characters, not just hex: tokens, JWTs, "Bearer x"
F_PEM = 16  # "-----BEGIN"
F_PROSE = 32  # "password", "pwd": a password in prose ("my password is X")
F_ALL = 63

Extra = tuple[tuple[str, re.Pattern[str]], ...]  # (kind, pattern) rules of the user
Found = list[tuple[str, str]]  # (path, kind) of each redaction, collected by findings()


def families(s: str, b: bytes, keyed: bool, cs: str | None = None, first: bool = False) -> int:
    """Which rule families can match `s` at all (`b` is its UTF-8, `cs` its FAM image when
    the caller has it)?  Most strings end here: a message, a timestamp, a command line.
    `first`: only whether any can (the cheapest tests come first), for strings joined by
    "\n": no rule crosses one and it maps to a blank, so they get at least the families of
    each.  `keyed`: extra secret names are configured, so any name may be one.  Operators
    and C calls on str (`in` on bytes costs ~10x more: it tries the operand as an int)."""
    # classes: "0" digit, "A" capital, "=" any of "@=:", "~" non-ASCII, tab a separator of
    # digit groups (space, dash, dot, parentheses), " " the rest
    if cs is None:
        cs = b.translate(FAM).decode()
    fams = 0
    dash = s.find("--") if "-" in s else -1
    marks = dash >= 0 or "=" in cs
    if marks and "@" in s:
        fams = F_AT
        if first:
            return fams
    if dash >= 0 and "-----BEGIN" in s:
        fams |= F_PEM
    if (
        ("000\t00" in cs and ("000\t0000" in cs or "000\t00\t0000" in cs))
        or "0000000000000" in cs
        or ("+" in s and "+0" in b.translate(DIG).decode())
    ):  # phone, SSN, card shapes
        fams |= F_DIGITS
    if first and fams:
        return fams
    upper = "A" in cs
    if (
        len(s) >= 20
        and (upper or "0" in cs)
        and s.strip(HEX_CHARS)
        # a run of 20 token characters; without capitals, a run through "/" is a path
        # (generated keys have capitals, and lower-case ones are only looked for between
        # slashes).  Searched with the blank after it: "a" * 20 alone makes the string
        # search retry at every "a" of a shorter run.
        and (
            RUN_END in (image := b.translate(RUN_MAP if upper else RUN_MAP_NO_SLASH).decode())
            or image.endswith(RUN_MIN)
        )
    ):
        fams |= F_LONG  # a long run of token characters that is not just a digest
        if first:
            return fams
    if marks and (
        # keyed: any name may be a secret ("07:05:00" has no assignment)
        (dash >= 0 or "=" in cs.replace("0=0", "")) if keyed else keyword_in_key(s, dash)
    ):
        fams |= F_KEYED  # the costliest test last: `first` seldom gets here
    if prose_hint(s):
        fams |= F_PROSE
    return fams


def find_spans(
    s: str,
    b: bytes,
    fams: int,
    name: Name,
    extra: Extra,
    add: Add,
    hits: re.Pattern[str] | None = None,
) -> None:
    """Report (start, priority, end, kind) for every secret of the families `fams` that
    the triage let through; `name` classifies key names, `extra` are the user's rules,
    `hits` finds the words that every secret name holds (``key_hits``; None: look at every
    separator)."""
    if fams & F_PEM:
        for m in R.PEM.finditer(s):
            add((m.start(), 0, m.end(), "private_key"))
    if fams & F_KEYED:
        if "--" in s:
            for m in R.FLAG.finditer(s):  # a literal prefix: re searches it in C
                finders.flag(m, name, add)
        if "=" in s or ":" in s:
            finders.assignments(s, name, add, hits)
    if fams & F_AT:
        if "://" in s:
            for m in R.URL_CRED.finditer(s):
                if plausible_value(m.group(1)):
                    add((m.start(1), 1, m.end(1), "url_password"))
        finders.emails(s, add)
    if fams & F_DIGITS:
        finders.pii(s, b, add)
    if fams & F_LONG:
        # every token below has a run of >= 20 token characters (a JWT's payload, a
        # SendGrid key's tail, a webhook's path, a real bearer token)
        finders.tokens(s, b, add)
        if "eyJ" in s:
            finders.jwts(s, add)
        if "SG." in s:
            for m in R.SENDGRID.finditer(s):
                add((m.start(), 0, m.end(), "sendgrid_key"))
        if "hooks.slack.com/services/" in s:
            for m in R.SLACK_WEBHOOK.finditer(s):
                add((m.start(1), 0, m.end(1), "slack_webhook"))
        if "earer" in s or "EARER" in s:
            # (without "EARER": from each "earer", which C finds; re would scan for a "B"/"b"
            # at ~10 ns a char)
            for m in (R.BEARER if "EARER" in s else R.BEARER_AFTER).finditer(s):
                tok = m.group(1)
                if not (tok.isalpha() and len(tok) < 24):  # "Bearer authentication"
                    add((m.start(1), 1, m.end(1), "bearer_token"))
    if fams & F_PROSE and prose_hint(s):  # (F_ALL sets every family)
        # (ASCII: on the lower-cased text, with a literal first letter that C finds)
        ascii_text = len(b) == len(s)
        for m in (R.PROSE_PASSWORD_LOW if ascii_text else R.PROSE_PASSWORD).finditer(
            s.lower() if ascii_text else s
        ):
            start, end = m.span(1)
            if prose_password(s[start:end]):
                add((start, 1, end, "password"))
    for kind, pattern in extra:
        for m in pattern.finditer(s):
            g = 1 if pattern.groups else 0
            start, end = m.span(g)
            if 0 <= start < end and not s.startswith(MARK, start):
                add((start, 0, end, kind))


def apply_spans(s: str, found: list[Span]) -> tuple[str, list[str]]:
    """Replace the spans `found` in `s` by markers; overlapping spans become one, named after
    the most specific rule.  Returns the text and the kind of each marker."""
    if len(found) == 1:  # the common case
        start, _, end, kind = found[0]
        return f"{s[:start]}[REDACTED:{kind}]{s[end:]}", [kind]
    found.sort()
    parts: list[str] = []
    kinds: list[str] = []
    pos = 0
    first, prio, last, kind = found[0]  # the span being merged
    for start, p, end, k in found[1:]:
        if start < last:  # overlaps: one marker, named after the lowest priority
            if end > last:
                last = end
            if p < prio:
                kind, prio = k, p
        else:
            parts.append(s[pos:first])
            parts.append(f"[REDACTED:{kind}]")
            kinds.append(kind)
            pos = last
            first, prio, last, kind = start, p, end, k
    parts.append(s[pos:first])
    parts.append(f"[REDACTED:{kind}]")
    kinds.append(kind)
    parts.append(s[last:])
    return "".join(parts), kinds


def clip_point(s: str, limit: int) -> int:
    """Where to cut `s` to at most `limit` characters without splitting a redaction marker
    (markers hold no "[" inside): a marker that would be cut is dropped whole."""
    cut = min(max(limit, 0), len(s))
    i = s.rfind("[", max(0, cut - 200), cut)
    if i >= 0 and s.startswith(MARK, i) and s.find("]", i) >= cut:
        cut = i
    return cut


class Redactor:
    """Redacts secrets and PII inside strings: the triage, the scan, the cut to length.
    :class:`lorebook.redact.sanitize.Sanitizer` walks values with it."""

    def __init__(
        self,
        extra_secret_keys: Iterable[str] = (),
        extra_patterns: Mapping[str, str] = {},
        max_value_chars: int = 1000,
    ) -> None:
        self._extra_keys = tuple(w for w in (key_words(str(k)) for k in extra_secret_keys) if w)
        self._keyed = bool(self._extra_keys)  # any word may name a secret: no keyword triage
        self._hits = key_hits(self._extra_keys)  # the words that every secret name holds
        self._extra = tuple((str(kind), re.compile(rx)) for kind, rx in extra_patterns.items())
        self._maxc = max(int(max_value_chars), 0)
        self._window = 2 * self._maxc + 8192  # longer strings are only scanned this far
        # ASCII strings up to this long are kept whole (0 when extra patterns exist: those can
        # match anything, so every string takes the long way, _text)
        self._plain_max = 0 if self._extra else self._maxc
        self._short = min(6, self._plain_max + 1)  # < 6 chars: nothing to find
        self._names: dict[str, tuple[int, str]] = {}
        # strings (<= 512 chars) found harmless by the costly part of the triage or by a scan:
        # commands, paths, branch names repeat a lot in a log (bounded by Sanitizer.sanitize)
        self._harmless: set[str] = set()

    def _name(self, key: str) -> tuple[int, str]:
        """(flags, kind for an in-text assignment) for a key or variable name; cached."""
        info = self._names.get(key)
        if info is None:
            # (MARKER begins with MARK: a key without it has nothing to replace)
            info = name_info(R.MARKER.sub(" ", key) if MARK in key else key, self._extra_keys)
            if len(self._names) >= 4096:
                self._names.clear()
            self._names[key] = info
        return info

    def _triage(self, s: str, first: bool = False) -> int:
        """The rule families that can match ASCII text `s` (0: none), such as the strings of
        a container that the loops keep whole, joined by "\n" (see ``families``);
        `first`: only whether any can."""
        if len(s) < 13 and s.isalnum():  # an id, a short hash, a word: nothing to match
            return 0
        b = s.encode()
        c = b.translate(FAM)
        if (
            c.isspace()  # lower-case words, paths, punctuation
            # fewer than 20 characters, with fewer than 8 digits or capitals and nothing else
            or (len(s) < 20 and len(r := c.translate(None, b" \t")) < 8 and r.isalnum())
        ) and not ("--" in s or prose_hint(s)):
            return 0
        return families(s, b, self._keyed, c.decode(), first)

    def _ascii(
        self, s: str, path: str | None, found: Found | None, fams: int = 0
    ) -> tuple[str, int]:
        """Redact an ASCII string that the loops keep whole: `_triage` (unless `fams` says
        what it found), then the scan of what it lets through.  Strings shorter than `_short`
        hold nothing to find; harmless ones are remembered (up to 512 characters)."""
        if len(s) < self._short or s in self._harmless:
            return s, 0
        if not fams:
            fams = self._triage(s)
            if not fams:
                if len(s) >= 20 and len(s) <= 512:  # the costly triage: remember it
                    self._harmless.add(s)
                return s, 0
        spans: list[Span] = []
        find_spans(s, s.encode(), fams, self._name, (), spans.append, self._hits)
        if not spans:
            if len(s) <= 512:  # nothing found after all: remember that
                self._harmless.add(s)
            return s, 0
        out, kinds = apply_spans(s, spans)
        if len(out) > self._maxc:  # (markers can be longer than what they replace)
            out = self._fit(out, 0, kinds)
        if found is not None:
            for kind in kinds:
                found.append((path or "", kind))
        return out, len(kinds)

    def _text(self, s: str, path: str | None, found: Found | None) -> tuple[str, int]:
        """Redact and fit any string (the loops handle short and plain ASCII ones inline)."""
        if s.isascii():
            if len(s) < self._short:
                return s, 0
        else:
            s = without_surrogates(s)
        full = len(s)
        if full > self._window:
            s = s[: self._window]
        tail = ""
        if "…" in s and full == len(s) and s.endswith(" chars]"):
            i = s.rfind("…[TRUNCATED ")
            if 0 <= i <= self._maxc and R.TRUNC_TAIL.match(s, i):
                # our own earlier cut: scan the kept text only, so a second pass is a no-op
                s, tail = s[:i], s[i:]
        b = s.encode()
        c = b.translate(FAM)
        if c.isspace() and not ("--" in s or self._extra or prose_hint(s)):
            fams = 0
        else:
            fams = families(s, b, self._keyed, c.decode())
        if not fams and not self._extra:
            if tail or full <= self._maxc:
                return s + tail, 0
            if full == len(s):  # a prefix of a plain string is plain: no rescan needed
                return f"{s[: self._maxc]}…[TRUNCATED {full - self._maxc} chars]", 0
        out, kinds = self._redact(s, b, fams) if fams or self._extra else (s, [])
        if tail and len(out) <= self._maxc:
            out += tail
        elif len(out) > self._maxc or full > len(s):  # (`full - len(s)` cut off above)
            out = self._fit(out, full - len(s), kinds)
        if kinds and found is not None:
            for kind in kinds:
                found.append((path or "", kind))
        return out, len(kinds)

    def _fit(self, s: str, dropped: int, kinds: list[str]) -> str:
        """Cut to max_value_chars plus a visible marker, never inside a redaction marker."""
        body, rest = self._cut(s, self._maxc, kinds)
        return f"{body}…[TRUNCATED {rest + dropped} chars]"

    def _cut(self, s: str, limit: int, kinds: list[str]) -> tuple[str, int]:
        """(the first `limit` characters of redacted `s`, how many were dropped), never cut
        inside a redaction marker.

        The kept text is scanned again: a cut can change what its end looks like
        ("Authorization: Bearer <cut>"), and sanitize() must be idempotent.  What that finds
        is redacted too and appended to `kinds`."""
        keyed = self._keyed
        for _ in range(4):
            cut = clip_point(s, limit)
            body = s[:cut]
            b = body.encode()
            fams = families(body, b, keyed)
            if not (fams or self._extra):
                break
            again, more = self._redact(body, b, fams)
            if not more:
                break
            kinds.extend(more)
            s = again + s[cut:]
        return body, len(s) - cut

    def _redact(self, s: str, b: bytes, fams: int) -> tuple[str, list[str]]:
        """Replace every secret of the rule families `fams` in `s` (`b` its UTF-8)."""
        found: list[Span] = []
        find_spans(s, b, fams, self._name, self._extra, found.append, self._hits)
        return apply_spans(s, found) if found else (s, [])
