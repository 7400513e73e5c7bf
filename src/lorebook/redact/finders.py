"""Each rule family's search, started where C string search points (see
:mod:`lorebook.redact.scan`, whose ``find_spans`` calls the families its triage lets
through): keyed assignments and flags, digit blobs (PII), emails, token runs (provider keys,
high-entropy strings) and JWTs.  Each reports (start, priority, end, kind) through `add`.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .patterns import (
    AUTH,
    AUTH_SCHEMES,
    DIG,
    KEYWORDS,
    NO_DIGITS,
    PASSWORD,
    PROVIDER_PREFIXES,
    PROVIDERS_BY_HEAD,
    PWD,
    RUN_END,
    RUN_MAP,
    RUN_MAP_NO_EQ,
    SECRET,
    SESSION,
    R,
    classify_token,
    harmless_value_at,
    inner_provider_key,
    looks_random,
    path_segments,
    pii_kind,
    plausible_value,
    plausible_value_at,
    unquote,
)

Span = tuple[int, int, int, str]  # (start, priority, end, kind): lower priority wins overlaps
Add = Callable[[Span], None]
Name = Callable[[str], tuple[int, str]]  # key name -> (flags, kind of an in-text assignment)


def jwts(s: str, add: Add) -> None:
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


def assignments(s: str, name: Name, add: Add, hits: re.Pattern[str] | None = None) -> None:
    """`KEY=value` / `KEY: value` / `"key": "value"` with a secret-named KEY.

    Keys are read backwards from each "=" / ":" that may end one (not a time or port,
    "07:05" / "host:80", nor a URL scheme, "https://"): an anchored match on the reversed
    string, then classified by the cached name rules.  In ASCII text dense with separators
    ("a=:a=:…") but not with keywords, only the separators after a key that holds a word of a
    secret name (`hits`, see ``key_hits``) are looked at: the others name no secret, and would
    cost a Python step each."""
    last = len(s) - 1
    rev = R.REV_ASSIGN.match
    memo = [0, 0, 0]  # the last unquoted value (start, end, separator): see _assigned
    ctx: list[str] = [""]  # `s` reversed, made for the first separator that may end a key
    low = ""  # `s` lower-cased, made for the first dense separator
    for sep in "=:":
        if hits is not None and s.count(sep) * 32 > len(s) and s.isascii():
            low = low or s.lower()
            # (where most keys hold a keyword, "password=password=…", every separator is
            # looked at anyway: the plain loop below costs less per separator; judged on the
            # first 4 KB, as counting through all of it would cost more than it saves)
            head = low[:4096]
            if sum(map(head.count, KEYWORDS)) * 2 < head.count(sep):
                _assignments_at_keys(s, low, sep, hits, name, add, memo, ctx)
                continue
        p = s.find(sep)
        while p >= 0:
            if 0 < p < last and not (
                (s[p - 1].isdigit() and s[p + 1].isdigit()) or (sep == ":" and s[p + 1] == "/")
            ):  # (what _separator does, inline: most text takes this loop)
                rs = ctx[0] = ctx[0] or s[::-1]
                m = rev(rs, last - p)
                if m is not None:
                    flags, kind = name(m.group(1)[::-1])
                    if flags & SECRET:
                        # the separators inside an unquoted value just redacted would give
                        # spans inside it (same priority, later start): no change, skipped
                        covered = _assigned(s, p, flags, kind, add, memo)
                        if covered > p + 2:
                            p = s.find(sep, covered - 1)
                            continue
            p = s.find(sep, p + 1)


def _assignments_at_keys(
    s: str,
    low: str,
    sep: str,
    hits: re.Pattern[str],
    name: Name,
    add: Add,
    memo: list[int],
    ctx: list[str],
) -> None:
    """The separators `sep` of ASCII `s` that ``assignments`` would look at, found from the
    words of secret names (`hits`) instead of from every separator: the key that a separator
    ends is the whole run of key characters before it (REV_ASSIGN), and every secret name
    holds one of those words once its "_", "." and "-" are dropped (``name_info`` joins its
    words).  From a word, the rest of its run, a quote and blanks lead to the one separator
    its key may end; the keys of later separators start after that separator."""
    search = hits.search
    tail = R.KEY_TAIL.match
    last = len(s) - 1
    pos = 0
    while (h := search(low, pos)) is not None:
        t = tail(s, h.end())
        q = t.end() - 1  # type: ignore[union-attr]
        pos = q + 1
        if s[q] != sep:
            continue  # (the run ends without a separator, or with the other one)
        while 0 < q < last:
            covered = _separator(s, q, name, add, memo, ctx)
            if covered <= q + 2:
                break
            # as in assignments: the next separator after the value just redacted
            q = s.find(sep, covered - 1)
            if q < 0:
                return
            pos = q + 1


def _separator(s: str, p: int, name: Name, add: Add, memo: list[int], ctx: list[str]) -> int:
    """Look at the separator at `p` (0 < p < len(s) - 1) for ``assignments``: the end of an
    unquoted value it redacted, else 0."""
    if (s[p - 1].isdigit() and s[p + 1].isdigit()) or (s[p] == ":" and s[p + 1] == "/"):
        return 0
    rs = ctx[0] or s[::-1]
    ctx[0] = rs
    m = R.REV_ASSIGN.match(rs, len(s) - 1 - p)
    if m is None:
        return 0
    flags, kind = name(m.group(1)[::-1])
    if not flags & SECRET:
        return 0
    return _assigned(s, p, flags, kind, add, memo)


def _assigned(s: str, sep: int, flags: int, kind: str, add: Add, memo: list[int]) -> int:
    """The value after a secret-named key and its separator at `sep`, when plausible; returns
    the end of what it redacted when the value was unquoted (then `memo`'s), else 0: no
    separator before that end but the last one can start a value that reaches past it.

    Linear however many keys a value holds ("password=password=…"): a value that starts
    inside the last unquoted value (`memo`: start, end, separator) ends where that one does
    (its run is maximal), so it is not matched again, and it is judged where it lies in `s`,
    never copied."""
    eq = ord(s[sep])
    start = R.BLANKS.match(s, sep + 1).end()  # type: ignore[union-attr]
    unquoted = True
    if memo[0] < start < memo[1] and memo[2] == eq and not s.startswith('\\"', start):
        end = memo[1]
    else:
        v = (R.VALUE_EQ if eq == 61 else R.VALUE_COLON).match(s, sep + 1)
        if v is None:
            return 0
        start, end = v.span(1)  # without its quotes (see unquote), so the syntax around stays
        unquoted = False
        if s.startswith('\\"', start) and end - start >= 4:
            start += 2
            end -= 2
        elif s[start] in "'\"" and end - start >= 2:
            start += 1
            end -= 1
        elif s[start] not in "'\"\\":
            memo[:] = [start, end, eq]
            unquoted = True
    if flags & AUTH:
        space = s.find(" ", start, end)
        if 0 <= space - start <= 9 and s[start:space].lower() in AUTH_SCHEMES:
            cred = R.NONBLANK.search(s, space, end)
            if cred is not None:
                start = cred.start()
    if flags & (PWD | SESSION) and harmless_value_at(flags, s, start, end):
        return 0
    if plausible_value_at(s, start, end, numeric_ok=not flags & PASSWORD):
        add((start, 2, end, kind))
        if unquoted and s.startswith('\\"', end - 1):
            # the key right before the value's last backslash (and blanks) has an escaped
            # JSON value, `\"…\"`, that reaches past this one: its separator is not skipped
            end -= 1
            while s[end - 1] in " \t":
                end -= 1
        return end if unquoted else 0
    return 0


def flag(m: re.Match[str], name: Name, add: Add) -> None:
    """`--password value` / `--token=value` with a secret-named flag."""
    flags, kind = name(m.group(1))
    if not flags & SECRET or (m.group(2) != "=" and m.group(3).startswith("-")):
        return
    start, end = unquote(m.group(3), *m.span(3))
    if plausible_value(m.string[start:end], numeric_ok=not flags & PASSWORD):
        add((start, 2, end, kind))


def pii(s: str, b: bytes, add: Add) -> None:
    """Phones, cards and SSNs: find digit blobs cheaply, then validate the precise patterns
    in the blobs that can hold one.

    In ASCII text, the blobs of ``R.DIGIT_BLOB.finditer(s)`` are searched around the digits
    only: a blob ends with a digit at most 41 characters after its start, so none starts in a
    stretch of 48+ separators without a digit ("((((…") but in its last 41, and none that
    starts before it reaches into it (``re`` would try each of them 40 characters deep)."""
    n = len(s)
    search = R.DIGIT_BLOB.finditer
    if len(b) != n:
        for blob in search(s):
            _pii_in(s, blob.start(), blob.end(), add)
        return
    image = b.translate(DIG).decode()
    pos = 0
    while True:
        gap = image.find(NO_DIGITS, pos)
        for blob in search(s, pos, n if gap < 0 else gap):
            lo, hi = blob.span()
            # every PII pattern holds two adjacent digits or a "+", and starts where the
            # character before is not a digit (its lookbehind, which reads before `lo`)
            t = image[lo:hi]
            if "+" in t or ("00" in t and not (lo and image[lo - 1] == "0" and " " not in t)):
                _pii_in(s, lo, hi, add)
        if gap < 0:
            return
        pos = R.SEPARATOR_RUN.match(image, gap).end() - 41  # type: ignore[union-attr]


def _pii_in(s: str, lo: int, hi: int, add: Add) -> None:
    """The PII that the precise patterns find in the digit blob s[lo:hi]."""
    for m in R.PII.finditer(s, lo, hi):
        start, end = m.span()
        if start and (s[start - 1].isalnum() or s[start - 1] in "_/\\.-@"):
            continue  # part of a path, version, hash or id
        if end < len(s) and (s[end].isalnum() or s[end] == "_"):
            continue
        kind = pii_kind(m)
        if kind is not None:
            add((start, 4, end, kind))


def emails(s: str, add: Add) -> None:
    """Emails, found from each "@": the local part is matched backwards (reversed string)."""
    rs = ""  # `s` reversed, made when a domain follows an "@"
    last = len(s) - 1
    url = "://" in s
    for domain in R.AT_DOMAIN.finditer(s):  # (C finds each "@" a domain follows)
        at = domain.start()
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


def tokens(s: str, b: bytes, add: Add) -> None:
    """Provider tokens and high-entropy strings among the runs of >= 20 token characters.

    The runs are found in C on the RUN_MAP image of `s` (same offsets when `s` is ASCII);
    a run is a token as it is unless it holds an "=" before its end (then the TOKEN regex
    splits it, as it does a non-ASCII string)."""
    found: list[tuple[int, str]] = []  # (start, token)
    if len(b) == len(s):
        image = b.translate(RUN_MAP).decode() + " "
        split = ""  # the same without "=", for runs that hold one (made once)
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
            else:  # what TOKEN matches: the stretches between "="s, of 20 or more
                split = split or b.translate(RUN_MAP_NO_EQ).decode() + " "
                r = split.find(RUN_END, lo, hi + 1)
                while r >= 0:
                    start = split.rfind(" ", lo, r) + 1 or lo
                    end = R.EQUALS.match(s, r + 20, hi).end()  # type: ignore[union-attr]
                    found.append((start, s[start:end]))
                    r = split.find(RUN_END, end, hi + 1)
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
