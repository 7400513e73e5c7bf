"""Where secrets are in a string: the triage (which rule families can match) and the scan.

The rules and tables live in :mod:`lorebook.log.secret_patterns`; :mod:`lorebook.log.sanitize`
calls ``families`` first and ``find_spans`` only for the families that can match.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .secret_patterns import (
    AUTH,
    AUTH_SCHEMES,
    DIG,
    FAM,
    HEX_CHARS,
    PASSWORD,
    PROVIDER_PREFIXES,
    PWD,
    RUN_MAP,
    RUN_MAP_NO_SLASH,
    RUN_MIN,
    SECRET,
    SESSION,
    R,
    classify_token,
    looks_random,
    pii_kind,
)

TYPE_CHECKING = False  # `typing` costs ~5 ms to import: for type checkers only
if TYPE_CHECKING:
    from typing import Any

# detection: which families can match a string (the triage), then where exactly

MARK = "[REDACTED"
PLACEHOLDERS = frozenset({"null", "none", "nil", "true", "false", "undefined", "''", '""'})
# rule families that a string's triage lets through
F_KEYED = 1  # a secret-ish word near "--", "=" or ":": flags, KEY=value, "key": "value"
F_AT = 2  # "@": emails, URL credentials
F_DIGITS = 4  # phone / SSN / card shaped digits
F_LONG = 8  # a run of >= 20 token characters, not just hex: tokens, JWTs, "Bearer x"
F_PEM = 16  # "-----BEGIN"
F_ALL = 31

Span = tuple[int, int, int, str]  # (start, priority, end, kind): lower priority wins overlaps
Add = Callable[[Span], None]
Name = Callable[[str], tuple[int, str]]  # key name -> (flags, kind of an in-text assignment)
Extra = tuple[tuple[str, re.Pattern[str]], ...]  # (kind, pattern) rules of the user


def has_keyword(s: str) -> bool:
    """Whether `s` holds a word that every secret-named key or flag holds."""
    low = s.lower()
    return (
        "pass" in low
        or "token" in low
        or "key" in low
        or "secret" in low
        or "auth" in low
        or "pwd" in low
        or "cred" in low
        or "sess" in low
        or "cookie" in low
        or "dsn" in low
        or "conn" in low
        or "jwt" in low
    )


def families(s: str, b: bytes, keyed: bool) -> int:
    """Second triage (`b` is `s` as UTF-8): which rule families can match at all?  Most
    strings that failed the first triage (a commit message, an ISO timestamp, a commit hash,
    a command line) end here with 0.

    Only operators and a few C calls: here a str method call costs as much as several `in`
    tests.  `keyed`: extra secret key names are configured, so skip the keyword test."""
    # classes: "0" digit, "A" capital, "=" any of "@=:", "~" non-ASCII, tab a separator of
    # digit groups (space, dash, dot, parentheses), " " the rest
    cs = b.translate(FAM).decode()
    fams = 0
    dash = "--" in s
    if dash or "=" in cs:
        if "@" in s:
            fams = F_AT
        if (dash or "=" in cs.replace("0=0", "")) and (keyed or has_keyword(s)):
            fams |= F_KEYED  # ("07:05:00" has no assignment)
        if dash and "-----BEGIN" in s:
            fams |= F_PEM
    if (
        "000\t0000" in cs
        or "000\t00\t0000" in cs
        or "0000000000000" in cs
        or ("+" in s and "+0" in b.translate(DIG).decode())
    ):  # phone, SSN, card shapes
        fams |= F_DIGITS
    upper = "A" in cs
    if (
        len(s) >= 20
        and (upper or "0" in cs)
        and s.strip(HEX_CHARS)
        # without capitals, a run through "/" is a path: generated keys have capitals, and
        # lower-case ones are only looked for between slashes
        and RUN_MIN in b.translate(RUN_MAP if upper else RUN_MAP_NO_SLASH).decode()
    ):
        fams |= F_LONG  # a long run of token characters that is not just a digest
    return fams


def separators(s: str) -> list[int]:
    """Positions of "=" / ":" that may end a key: not a time or port ("07:05", "host:80"),
    not a URL scheme ("https://")."""
    found = []
    last = len(s) - 1
    for sep in "=:":
        p = s.find(sep)
        while p >= 0:
            if 0 < p < last and not (
                (s[p - 1].isdigit() and s[p + 1].isdigit()) or (sep == ":" and s[p + 1] == "/")
            ):
                found.append(p)
            p = s.find(sep, p + 1)
    return found


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
                if _plausible_value(m.group(1)):
                    add((m.start(1), 1, m.end(1), "url_password"))
        _emails(s, add)
    if fams & F_DIGITS:
        _pii(s, add)
    if fams & F_LONG:
        # every token below has a run of >= 20 token characters (a JWT's payload, a
        # SendGrid key's tail, a webhook's path, a real bearer token)
        _tokens(s, b, add)
        if "eyJ" in s:
            for m in R.JWT.finditer(s):
                add((m.start(), 0, m.end(), "jwt"))
        if "SG." in s:
            for m in R.SENDGRID.finditer(s):
                add((m.start(), 0, m.end(), "sendgrid_key"))
        if "hooks.slack.com/services/" in s:
            for m in R.SLACK_WEBHOOK.finditer(s):
                add((m.start(1), 0, m.end(1), "slack_webhook"))
        if "earer" in s or "EARER" in s:
            for m in R.BEARER.finditer(s):
                tok = m.group(1)
                if not (tok.isalpha() and len(tok) < 24):  # "Bearer authentication"
                    add((m.start(1), 1, m.end(1), "bearer_token"))
    for kind, pattern in extra:
        for m in pattern.finditer(s):
            g = 1 if pattern.groups else 0
            start, end = m.span(g)
            if 0 <= start < end and not s.startswith(MARK, start):
                add((start, 0, end, kind))


def _assignments(s: str, name: Name, add: Add) -> None:
    """`KEY=value` / `KEY: value` / `"key": "value"` with a secret-named KEY.

    Keys are read backwards from each separator (an anchored match on the reversed
    string), then classified by the cached name rules."""
    rs = s[::-1]
    last = len(s) - 1
    for sep in separators(s):
        m = R.REV_ASSIGN.match(rs, last - sep)
        if m is None:
            continue
        flags, kind = name(m.group(1)[::-1])
        if not flags & SECRET:
            continue
        v = (R.VALUE_EQ if s[sep] == "=" else R.VALUE_COLON).match(s, sep + 1)
        if v is None:
            continue
        start, end = _unquote(v.group(1), *v.span(1))
        value = s[start:end]
        if flags & AUTH:
            scheme, _, cred = value.partition(" ")
            if scheme.lower() in AUTH_SCHEMES and cred.strip():
                start = end - len(cred.lstrip())
                value = s[start:end]
        if harmless_value(flags, value):
            continue
        if _plausible_value(value, numeric_ok=not flags & PASSWORD):
            add((start, 2, end, kind))


def _flag(m: re.Match[str], name: Name, add: Add) -> None:
    """`--password value` / `--token=value` with a secret-named flag."""
    flags, kind = name(m.group(1))
    if not flags & SECRET or (m.group(2) != "=" and m.group(3).startswith("-")):
        return
    start, end = _unquote(m.group(3), *m.span(3))
    if _plausible_value(m.string[start:end], numeric_ok=not flags & PASSWORD):
        add((start, 2, end, kind))


def harmless_value(flags: int, value: str) -> bool:
    """A value that a secret-looking name holds without it being a secret: PWD's working
    directory, a lorebook session id (a ULID) under "session_id"."""
    if flags & PWD and R.PATHLIKE.match(value):
        return True
    return bool(flags & SESSION and len(value) == 26 and R.ULID.fullmatch(value))


def _unquote(value: str, start: int, end: int) -> tuple[int, int]:
    """The span of a value without its quotes (so the JSON/shell syntax around stays)."""
    if value.startswith('\\"') and len(value) >= 4:
        return start + 2, end - 2
    if value[:1] in ("'", '"') and len(value) >= 2:
        return start + 1, end - 1
    return start, end


def _plausible_value(value: str, numeric_ok: bool = True) -> bool:
    """Whether an assigned value can be a real secret (not a placeholder or a marker)."""
    if not value or value.startswith(MARK) or value[0] in "$<%{":
        return False  # empty, already redacted, $VAR / ${VAR} / <placeholder> / templating
    if value.lower() in PLACEHOLDERS or value.count(value[0]) == len(value):
        return False  # null/true/..., "****", "xxxx"
    return not (numeric_ok and value.replace(".", "", 1).isdigit())


def _email_ok(s: str, start: int) -> bool:
    """Skip the user part of URL authorities (ssh://git@host, creds handled elsewhere)."""
    if s.startswith("git@", start):
        return False
    j = s.rfind("://", max(0, start - 256), start)
    return j < 0 or any(ch in s[j + 3 : start] for ch in "/ \t\n")


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
    rs = s[::-1]
    last = len(s) - 1
    at = s.find("@")
    while at > 0:
        local = R.REV_LOCAL.match(rs, last - at + 1)
        domain = R.DOMAIN.match(s, at + 1)
        if local is not None and domain is not None:
            start = at - local.end() + (last - at + 1)
            if _email_ok(s, start):
                add((start, 4, domain.end(), "email"))
        at = s.find("@", at + 1)


def _tokens(s: str, b: bytes, add: Add) -> None:
    """Provider tokens and high-entropy strings among the runs of >= 20 token characters.

    The runs are found in C on the RUN_MAP image of `s` (same offsets when `s` is ASCII);
    the TOKEN regex then only looks inside them."""
    if len(b) == len(s):
        runs = R.RUN_MAP_RUNS.finditer(b.translate(RUN_MAP).decode())
        spans = [m.span() for m in runs]
    else:
        spans = [(0, len(s))]
    for lo, hi in spans:
        for m in R.TOKEN.finditer(s, lo, hi):
            tok = m.group()
            if tok.startswith(("sha1-", "sha256-", "sha384-", "sha512-")):
                continue  # subresource-integrity digests (package-lock.json)
            if "/" in tok and tok.islower() and not tok.startswith(PROVIDER_PREFIXES):
                continue  # a lower-case path ("src/app/module_12/handler_3"): generated keys
                # have capitals (a 24-char base62 run lacks one once in ~500,000)
            hit = classify_token(tok)
            if hit is None:
                continue
            kind, length = hit
            start = m.start()
            if kind == "high_entropy" and "/" in tok:
                # keep leading path words: "com/services/<random>" -> "com/services/[...]"
                head, _, rest = tok.partition("/")
                while head.isalpha() and head.islower() and looks_random(rest):
                    start += len(head) + 1
                    head, _, rest = rest.partition("/")
            add((start, 3 if kind == "high_entropy" else 0, m.start() + length, kind))


def apply_spans(s: str, found: list[Span]) -> tuple[str, list[str]]:
    """Replace the spans `found` in `s` by markers; overlapping spans become one, named after
    the most specific rule.  Returns the text and the kind of each marker."""
    if len(found) == 1:  # the common case
        start, _, end, kind = found[0]
        return f"{s[:start]}[REDACTED:{kind}]{s[end:]}", [kind]
    found.sort()
    merged: list[list[Any]] = []  # [start, end, kind, priority]
    for start, prio, end, kind in found:
        if merged and start < merged[-1][1]:
            last = merged[-1]
            last[1] = max(last[1], end)
            if prio < last[3]:
                last[2], last[3] = kind, prio
        else:
            merged.append([start, end, kind, prio])
    parts: list[str] = []
    pos = 0
    for start, end, kind, _ in merged:
        parts.append(s[pos:start])
        parts.append(f"[REDACTED:{kind}]")
        pos = end
    parts.append(s[pos:])
    return "".join(parts), [m[2] for m in merged]
