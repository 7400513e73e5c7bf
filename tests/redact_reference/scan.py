"""Where secrets are in a string: the triage, the scan, and the strings' side of redaction.

``families`` triages a string (which rule families can match at all, with a few C calls and
operators), ``find_spans`` runs only those rules, ``apply_spans`` puts the markers in, and
:class:`Redactor` does all that for one string, or for the strings of a container at once:
joined by "\n", which no rule crosses, they take one triage.  The rules and tables live in
:mod:`lorebook.redact.patterns`; :mod:`lorebook.redact.sanitize` walks the values.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping

from .patterns import (
    AUTH,
    AUTH_SCHEMES,
    DIG,
    FAM,
    HEX_CHARS,
    MARK,
    PASSWORD,
    PROVIDER_PREFIXES,
    PROVIDERS_BY_HEAD,
    PWD,
    RUN_END,
    RUN_MAP,
    RUN_MAP_NO_SLASH,
    RUN_MIN,
    SECRET,
    SESSION,
    R,
    classify_token,
    harmless_value_at,
    inner_provider_key,
    key_words,
    keyword_in_key,
    looks_random,
    name_info,
    path_segments,
    pii_kind,
    plausible_value,
    plausible_value_at,
    prose_hint,
    prose_password,
    unquote,
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

Span = tuple[int, int, int, str]  # (start, priority, end, kind): lower priority wins overlaps
Add = Callable[[Span], None]
Name = Callable[[str], tuple[int, str]]  # key name -> (flags, kind of an in-text assignment)
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


def find_spans(s: str, b: bytes, fams: int, name: Name, extra: Extra, add: Add) -> None:
    """Report (start, priority, end, kind) for every secret of the families `fams` that
    the triage let through; `name` classifies key names, `extra` are the user's rules."""
    if fams & F_PEM:
        for m in R.PEM.finditer(s):
            add((m.start(), 0, m.end(), "private_key"))
    if fams & F_KEYED:
        if "--" in s:
            for m in R.FLAG.finditer(s):  # a literal prefix: re searches it in C
                _flag(m, name, add)
        if "=" in s or ":" in s:
            _assignments(s, name, add)
    if fams & F_AT:
        if "://" in s:
            for m in R.URL_CRED.finditer(s):
                if plausible_value(m.group(1)):
                    add((m.start(1), 1, m.end(1), "url_password"))
        _emails(s, add)
    if fams & F_DIGITS:
        _pii(s, add)
    if fams & F_LONG:
        # every token below has a run of >= 20 token characters (a JWT's payload, a
        # SendGrid key's tail, a webhook's path, a real bearer token)
        _tokens(s, b, add)
        if "eyJ" in s:
            _jwts(s, add)
        if "SG." in s:
            for m in R.SENDGRID.finditer(s):
                add((m.start(), 0, m.end(), "sendgrid_key"))
        if "hooks.slack.com/services/" in s:
            for m in R.SLACK_WEBHOOK.finditer(s):
                add((m.start(1), 0, m.end(1), "slack_webhook"))
        if "earer" in s or "EARER" in s:
            for m in R.BEARER.finditer(s) if "EARER" in s else _bearers(s):
                tok = m.group(1)
                if not (tok.isalpha() and len(tok) < 24):  # "Bearer authentication"
                    add((m.start(1), 1, m.end(1), "bearer_token"))
    if fams & F_PROSE and prose_hint(s):  # (F_ALL sets every family)
        for m in R.PROSE_PASSWORD.finditer(s):
            if prose_password(m.group(1)):
                add((m.start(1), 1, m.end(1), "password"))
    for kind, pattern in extra:
        for m in pattern.finditer(s):
            g = 1 if pattern.groups else 0
            start, end = m.span(g)
            if 0 <= start < end and not s.startswith(MARK, start):
                add((start, 0, end, kind))


def _jwts(s: str, add: Add) -> None:
    """What ``R.JWT.finditer(s)`` finds, in linear time: where a match fails, it fails from
    every "eyJ" inside the same run of header characters too (the possessive run ends at the
    same place, and what follows is the same), so the search resumes after that run instead
    of reading it again from each "eyJ" in it ("eyJeyJeyJ…" would be quadratic)."""
    match = R.JWT.match
    run = R.JWT_RUN.match
    p = s.find("eyJ")
    while p >= 0:
        m = match(s, p)
        if m is not None:
            add((p, 0, m.end(), "jwt"))
            p = s.find("eyJ", m.end())
        else:
            p = s.find("eyJ", run(s, p + 3).end())  # type: ignore[union-attr]


def _bearers(s: str) -> list[re.Match[str]]:
    """What ``R.BEARER.finditer(s)`` finds when `s` has no "EARER": matches tried only where
    C string search finds "earer" (``re`` would scan for a "B"/"b" at ~10 ns a char)."""
    found = []
    end = 0
    match = R.BEARER.match
    p = s.find("earer", 1)
    while p > 0:
        if p > end:  # not inside the previous match
            m = match(s, p - 1)
            if m is not None:
                found.append(m)
                end = m.end()
        p = s.find("earer", p + 1)
    return found


def _assignments(s: str, name: Name, add: Add) -> None:
    """`KEY=value` / `KEY: value` / `"key": "value"` with a secret-named KEY.

    Keys are read backwards from each "=" / ":" that may end one (not a time or port,
    "07:05" / "host:80", nor a URL scheme, "https://"): an anchored match on the reversed
    string, then classified by the cached name rules."""
    rs = ""  # `s` reversed, made for the first separator that may end a key
    last = len(s) - 1
    rev = R.REV_ASSIGN.match
    memo = [0, 0, 0]  # the last unquoted value (start, end, separator): see _assigned
    for sep in "=:":
        p = s.find(sep)
        while p >= 0:
            if 0 < p < last and not (
                (s[p - 1].isdigit() and s[p + 1].isdigit()) or (sep == ":" and s[p + 1] == "/")
            ):
                rs = rs or s[::-1]
                m = rev(rs, last - p)
                if m is not None:
                    flags, kind = name(m.group(1)[::-1])
                    if flags & SECRET:
                        _assigned(s, p, flags, kind, add, memo)
            p = s.find(sep, p + 1)


def _assigned(s: str, sep: int, flags: int, kind: str, add: Add, memo: list[int]) -> None:
    """The value after a secret-named key and its separator at `sep`, when plausible.

    Linear however many keys a value holds ("password=password=…"): a value that starts
    inside the last unquoted value (`memo`: start, end, separator) ends where that one does
    (its run is maximal), so it is not matched again, and it is judged where it lies in `s`,
    never copied."""
    eq = ord(s[sep])
    start = R.BLANKS.match(s, sep + 1).end()  # type: ignore[union-attr]
    if memo[0] < start < memo[1] and memo[2] == eq and not s.startswith('\\"', start):
        end = memo[1]
    else:
        v = (R.VALUE_EQ if eq == 61 else R.VALUE_COLON).match(s, sep + 1)
        if v is None:
            return
        start, end = v.span(1)  # without its quotes (see unquote), so the syntax around stays
        if s.startswith('\\"', start) and end - start >= 4:
            start += 2
            end -= 2
        elif s[start] in "'\"" and end - start >= 2:
            start += 1
            end -= 1
        elif s[start] not in "'\"\\":
            memo[:] = [start, end, eq]
    if flags & AUTH:
        space = s.find(" ", start, end)
        if 0 <= space - start <= 9 and s[start:space].lower() in AUTH_SCHEMES:
            cred = R.NONBLANK.search(s, space, end)
            if cred is not None:
                start = cred.start()
    if flags & (PWD | SESSION) and harmless_value_at(flags, s, start, end):
        return
    if plausible_value_at(s, start, end, numeric_ok=not flags & PASSWORD):
        add((start, 2, end, kind))


def _flag(m: re.Match[str], name: Name, add: Add) -> None:
    """`--password value` / `--token=value` with a secret-named flag."""
    flags, kind = name(m.group(1))
    if not flags & SECRET or (m.group(2) != "=" and m.group(3).startswith("-")):
        return
    start, end = unquote(m.group(3), *m.span(3))
    if plausible_value(m.string[start:end], numeric_ok=not flags & PASSWORD):
        add((start, 2, end, kind))


def _pii(s: str, add: Add) -> None:
    """Phones, cards and SSNs: find digit blobs cheaply, then validate the precise patterns."""
    n = len(s)
    for blob in R.DIGIT_BLOB.finditer(s):
        for m in R.PII.finditer(s, blob.start(), blob.end()):
            start, end = m.span()
            if start and (s[start - 1].isalnum() or s[start - 1] in "_/\\.-@"):
                continue  # part of a path, version, hash or id
            if end < n and (s[end].isalnum() or s[end] == "_"):
                continue
            kind = pii_kind(m)
            if kind is not None:
                add((start, 4, end, kind))


def _emails(s: str, add: Add) -> None:
    """Emails, found from each "@": the local part is matched backwards (reversed string)."""
    rs = ""  # `s` reversed, made when a domain follows an "@"
    last = len(s) - 1
    url = "://" in s
    at = s.find("@")
    while at >= 0:
        domain = R.DOMAIN.match(s, at + 1)
        if domain is not None:
            rs = rs or s[::-1]
            local = R.REV_LOCAL.match(rs, last - at + 1)
            if local is not None:
                start = at - local.end() + (last - at + 1)
                if s.startswith("git@", start):
                    pass  # the user of an ssh remote, not a mailbox
                elif url and (j := s.rfind("://", max(0, start - 256), start)) >= 0:
                    # the user part of a URL authority (ssh://git@host; URL_CRED has creds)
                    if any(ch in s[j + 3 : start] for ch in "/ \t\n"):
                        add((start, 4, domain.end(), "email"))
                else:
                    add((start, 4, domain.end(), "email"))
        at = s.find("@", at + 1)


def _tokens(s: str, b: bytes, add: Add) -> None:
    """Provider tokens and high-entropy strings among the runs of >= 20 token characters.

    The runs are found in C on the RUN_MAP image of `s` (same offsets when `s` is ASCII);
    a run is a token as it is unless it holds an "=" before its end (then the TOKEN regex
    splits it, as it does a non-ASCII string)."""
    found: list[tuple[int, str]] = []  # (start, token)
    if len(b) == len(s):
        image = b.translate(RUN_MAP).decode() + " "
        q = image.find(RUN_END)  # the last 20 "a" of a run, then its end
        while q >= 0:
            lo = image.rfind(" ", 0, q) + 1
            hi = q + 20
            q = image.find(RUN_END, hi)
            tok = s[lo:hi]
            core = tok.rstrip("=")
            if "=" not in core:  # what TOKEN would match: the run, if 20 before its "="s
                if len(core) >= 20:
                    found.append((lo, tok))
            else:
                found.extend((m.start(), m.group()) for m in R.TOKEN.finditer(s, lo, hi))
    else:
        found.extend((m.start(), m.group()) for m in R.TOKEN.finditer(s))
    for start, tok in found:
        if tok[0] == "s" and tok.startswith(("sha1-", "sha256-", "sha384-", "sha512-")):
            continue  # subresource-integrity digests (package-lock.json)
        if (
            "/" in tok
            and tok.islower()
            and not (tok[:2] in PROVIDERS_BY_HEAD and tok.startswith(PROVIDER_PREFIXES))
        ):
            _glued_key(start, tok, add)
            continue  # a lower-case path ("src/app/module_12/handler_3"): generated keys
            # have capitals (a 24-char base62 run lacks one once in ~500,000)
        hit = classify_token(tok)
        if hit is None:
            _glued_key(start, tok, add)
            continue
        kind, length = hit
        end = start + length
        if kind == "high_entropy":
            parts = path_segments(tok) if "/" in tok else None
            if parts is not None:  # a path: only its random-looking segments go
                for lo, hi in parts:
                    add((start + lo, 3, start + hi, kind))
                _glued_key(start, tok, add)
                continue
            if "/" in tok:
                # keep leading path words: "com/services/<random>" -> "com/services/[...]"
                head, _, rest = tok.partition("/")
                while head.isalpha() and head.islower() and looks_random(rest):
                    start += len(head) + 1
                    head, _, rest = rest.partition("/")
            add((start, 3, end, kind))
        else:
            add((start, 0, end, kind))


def _glued_key(start: int, tok: str, add: Add) -> None:
    """A provider's key glued after a separator in a token that is harmless as a whole."""
    inner = inner_provider_key(tok)
    if inner is not None:
        add((start + inner[0], 0, start + inner[1], inner[2]))


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
        find_spans(s, s.encode(), fams, self._name, (), spans.append)
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
        find_spans(s, b, fams, self._name, self._extra, found.append)
        return apply_spans(s, found) if found else (s, [])
