"""The secret/PII pattern table used by :mod:`lorebook.log.sanitize`.

The rule families follow gitleaks and detect-secrets (provider token formats, keyword
assignments, URL credentials, private-key blocks, high-entropy strings), but are written
in-house: the append path must stay stdlib-only and cheap to import, and those packages cost
50-90 ms of imports.  Everything here is immutable: compiled regexes, byte tables, word sets.

Speed notes (every pattern is run on the hot append path):
- every pattern starts with a literal or a character class, so ``re`` can skip ahead in C;
  word-boundary look-behinds sit *after* the first character for the same reason;
- runs use possessive quantifiers so that a failed match never backtracks quadratically;
- the byte tables let :class:`~lorebook.log.sanitize.Sanitizer` decide with a couple of C
  calls (``bytes.translate`` + ``in``) which families can possibly match a string.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from functools import lru_cache


class Lazy:
    """A regex compiled on first use: compiling the whole table up front would cost ~10 ms of
    import time on every `lore log`, and most appends never need most patterns."""

    __slots__ = ("_rx", "_src")

    def __init__(self, src: str) -> None:
        self._src = src
        self._rx: re.Pattern[str] | None = None

    def __call__(self) -> re.Pattern[str]:
        rx = self._rx
        if rx is None:
            rx = self._rx = re.compile(self._src)
        return rx


# ---------------------------------------------------------------------------------------------
# byte tables for the prefilter (bytes.translate runs at ~1 ns/char; str `in` is a few ns)


def _class_of(c: int) -> int:
    if 65 <= c <= 90:
        return 0x41  # upper-case letters -> "A"
    if 48 <= c <= 57:
        return 0x30  # digits -> "0"
    if c in b"@=:":
        return 0x3D  # "@", "=", ":" -> "=": emails, URL credentials, assignments
    if c >= 128:
        return 0x7E  # non-ASCII -> "~"
    return 0x20  # lower-case letters, whitespace, punctuation: harmless on their own


#: maps a string's UTF-8 to its character classes; all-space means nothing to look at
CLS = bytes(_class_of(c) for c in range(256))
#: digits -> "0", phone/card separators -> " ", "+" kept, everything else -> "x"
DIG = bytes(
    0x30 if 48 <= c <= 57 else 0x20 if c in b" -.()" else c if c == 0x2B else 0x78
    for c in range(256)
)
_TOKEN_BYTES = set(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-+/=")
#: maps token characters to "a" and everything else to " ", so long runs are found with `in`
RUN_MAP = bytes(0x61 if c in _TOKEN_BYTES else 0x20 for c in range(256))
RUN_MIN = "a" * 20
DIGITS = b"0123456789"
HEX_CHARS = "0123456789abcdefABCDEF-"
#: on the reversed, lower-cased string: a separator whose key contains a secret-ish word
#: (the scan skips ahead to "=" / ":" in C, so strings without assignments cost nothing)
REV_HINT = Lazy(
    r"[=:][ \t]*(?:[\"']\\?)?[a-z0-9_.\-]{0,60}?"
    r"(?:nekot|terces|ssap|dwp|yek|htua|derc|eikooc|sses|nsd|nnoc|twj)"
)


# ---------------------------------------------------------------------------------------------
# structural patterns (their own trigger each)

PEM = Lazy(
    r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
    r"[\s\S]*?(?:-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|\Z)"
)
#: ``scheme://user:password@host`` - group 1 is the password
URL_CRED = Lazy(r"://[^\s/@:\"'<>]*:([^\s/@\"'<>]+)@")
EMAIL = Lazy(
    r"[A-Za-z0-9._%+\-](?<![A-Za-z0-9._%+\-][A-Za-z0-9._%+\-])[A-Za-z0-9._%+\-]{0,63}+"
    r"@[A-Za-z0-9](?:[A-Za-z0-9\-]{0,62}\.)+[A-Za-z]{2,24}(?![A-Za-z0-9\-])"
)
#: a quoted value: "..." or '...' with backslash escapes, or \"...\" inside escaped JSON
_QUOTED = r"\\\"(?:[^\\\n]|\\[^\"\n])*\\\"|\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'"
#: assignments are found from their separator, scanning the *reversed* string (so the scan
#: skips ahead to "=" / ":" in C): group 1 is the key, reversed.  The key must start at a
#: word boundary, so "--password=x" is left to FLAG.
REV_ASSIGN = Lazy(r"[=:][ \t]*(?:[\"']\\?)?([A-Za-z0-9_.\-]{0,80}[A-Za-z_])(?![A-Za-z0-9_.\-])")
#: the value after "=": one shell word or a quoted string
VALUE_EQ = Lazy(r"[ \t]*(" + _QUOTED + r"|[^\s\"'`]+)")
#: the value after ":": a quoted string or the rest of the line up to a comma or semicolon
VALUE_COLON = Lazy(r"[ \t]*(" + _QUOTED + r"|[^\s\"'`,;]+(?:[ \t]+[^\s\"'`,;]+)*+)")
#: ``--name value`` / ``--name=value`` - group 1 the name, group 2 the value
FLAG = Lazy(
    r"--(?<![A-Za-z0-9_\-]--)([A-Za-z][A-Za-z0-9_\-]{0,60}+)(=|[ \t]+)(" + _QUOTED + r"|[^\s\"'`]+)"
)
BEARER = Lazy(r"(?:Bearer|bearer|BEARER)[ \t]+([A-Za-z0-9\-._~+/]{8,}+=*)")
AUTH_SCHEMES = frozenset(
    {"bearer", "basic", "token", "digest", "negotiate", "ntlm", "aws4-hmac-sha256"}
)
JWT = Lazy(r"eyJ[A-Za-z0-9_\-]{5,}+\.eyJ[A-Za-z0-9_\-]{5,}+\.[A-Za-z0-9_\-]*+")
SENDGRID = Lazy(r"SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}")
SLACK_WEBHOOK = Lazy(r"hooks\.slack\.com/services/([A-Za-z0-9_/\-]{8,}+)")

# ---------------------------------------------------------------------------------------------
# token candidates: a run of >= 20 token characters, classified in Python

TOKEN = Lazy(r"[A-Za-z0-9_\-+/](?<![A-Za-z0-9_\-+/][A-Za-z0-9_\-+/])[A-Za-z0-9_\-+/]{19,}+=*")
_AWS_PREFIXES = ("AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "AIPA")
#: (prefixes, anchored regex, kind); the first matching entry wins, so order matters
PROVIDERS: tuple[tuple[tuple[str, ...], Lazy, str], ...] = (
    (
        _AWS_PREFIXES,
        Lazy(r"(?:" + "|".join(_AWS_PREFIXES) + r")[A-Z0-9]{16}(?![A-Za-z0-9])"),
        "aws_access_key",
    ),
    (
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
        Lazy(r"gh[pousr]_[A-Za-z0-9]{36,255}"),
        "github_token",
    ),
    (("github_pat_",), Lazy(r"github_pat_[A-Za-z0-9_]{22,255}"), "github_token"),
    (("glpat-",), Lazy(r"glpat-[A-Za-z0-9_\-]{20,}"), "gitlab_token"),
    (("xox",), Lazy(r"xox[abposr]-[A-Za-z0-9\-]{10,}"), "slack_token"),
    (
        ("sk_live_", "rk_live_", "sk_test_", "rk_test_"),
        Lazy(r"[sr]k_(?:live|test)_[A-Za-z0-9]{24,}"),
        "stripe_key",
    ),
    (("sk-ant-",), Lazy(r"sk-ant-[A-Za-z0-9_\-]{20,}"), "anthropic_key"),
    (("sk-",), Lazy(r"sk-(?:proj-|svcacct-|admin-)?([A-Za-z0-9_\-]{20,})"), "openai_key"),
    (("AIza",), Lazy(r"AIza[0-9A-Za-z_\-]{35}"), "google_api_key"),
    (("npm_",), Lazy(r"npm_[A-Za-z0-9]{36}"), "npm_token"),
    (("hf_",), Lazy(r"hf_[A-Za-z0-9]{30,}"), "huggingface_token"),
)
PROVIDER_PREFIXES = tuple(p for prefixes, _, _ in PROVIDERS for p in prefixes)

_HEX = Lazy(r"[0-9a-fA-F\-]+")
_ULID = Lazy(r"[0-9A-HJKMNP-TV-Z]{26}")
_SEPARATORS = Lazy(r"[/_\-+]+")
_WORDISH = Lazy(r"[a-z]+[0-9]*|[0-9]+[a-z]*|[A-Z][a-z]+[0-9]*|[A-Z]+[0-9]*|.{1,3}")
_LOWER_WORD = Lazy(r"[A-Z]?[a-z]{3,}")


def classify_token(tok: str) -> tuple[str, int] | None:
    """(kind, length of the secret prefix) for a token candidate, or None when harmless."""
    if tok.startswith(PROVIDER_PREFIXES):
        for prefixes, rx, kind in PROVIDERS:
            if tok.startswith(prefixes):
                m = rx().match(tok)
                if m is None:
                    continue
                if kind == "openai_key":
                    body = m.group(1)
                    # "sk-learn-compatible-v2" is a name; real keys are one random run
                    if "-" in body and (body.islower() or body.isupper() or body.isalpha()):
                        continue
                return kind, m.end()
    return ("high_entropy", len(tok)) if looks_random(tok) else None


def entropy(s: str) -> float:
    """Shannon entropy in bits per character."""
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values())


def looks_random(tok: str) -> bool:
    """A long token that looks generated (key, password, base64 blob), not a name or digest.

    Tuned on random base62/base64 strings (>= 97 % caught from 24 chars, ~100 % from 40)
    against paths, identifiers, versions, branch names, hex digests, UUIDs and ULIDs.
    """
    core = tok.rstrip("=")
    n = len(core)
    if n < 24 or core.isalpha() or core.isdigit():
        return False
    b = core.encode()
    digits = n - len(b.translate(None, DIGITS))
    if digits == 0 or not b.translate(None, DIGITS + b"_-+/"):
        return False  # needs both letters and digits
    if _HEX().fullmatch(core) or (n == 26 and _ULID().fullmatch(core)):
        return False  # digests, UUIDs, ULIDs
    segments = [s for s in _SEPARATORS().split(core) if s]
    if len(segments) > 1:
        wordish = sum(len(s) for s in segments if _WORDISH().fullmatch(s))
        if wordish >= 0.75 * sum(map(len, segments)):
            return False  # a path, branch or identifier made of words and numbers
    threshold = 3.8 if n < 32 else 4.1 if n < 48 else 4.3
    if entropy(core) < threshold:
        return False
    if digits / n < 0.2:
        covered = sum(len(w) for w in _LOWER_WORD().findall(core))
        if covered >= 0.6 * n:
            return False  # CamelCaseIdentifierWithAFewDigits2
    return True


# ---------------------------------------------------------------------------------------------
# PII: a cheap "digit blob" scan first, then the precise patterns inside each blob

DIGIT_BLOB = Lazy(r"[+(0-9][0-9 ().\-]{6,40}[0-9]")
PII = Lazy(
    r"(?P<ssn>(?<![0-9\-])(?!000|666|9[0-9]{2})[0-9]{3}-(?!00)[0-9]{2}-(?!0000)[0-9]{4}"
    r"(?![0-9\-]))"
    r"|(?P<credit_card>(?<![0-9])[2-6][0-9](?:[ \-]?[0-9]){11,17}(?![0-9]))"
    r"|(?P<phone>(?<![0-9+(])(?:\+1[ .\-]?)?(?:\([0-9]{3}\) ?|[0-9]{3}[ .\-])[0-9]{3}[ .\-]"
    r"[0-9]{4}(?![0-9]))"
    r"|(?P<intl_phone>\+(?<![0-9+]\+)[0-9][0-9 ().\-]{5,22}[0-9](?![0-9]))"
)


def luhn_ok(digits: str) -> bool:
    """The Luhn checksum that every payment card number satisfies."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i & 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def pii_kind(m: re.Match[str]) -> str | None:
    """Validate a PII match (checksums, digit counts); return its kind or None."""
    kind = m.lastgroup
    text = m.group()
    if kind == "credit_card":
        digits = text.replace(" ", "").replace("-", "")
        return kind if 13 <= len(digits) <= 19 and luhn_ok(digits) else None
    if kind == "intl_phone":
        digits = sum(ch.isdigit() for ch in text)
        if 8 <= digits <= 15 and "  " not in text and "--" not in text and ".." not in text:
            return "phone"
        return None
    return kind


# ---------------------------------------------------------------------------------------------
# secret-named keys

_CAMEL = Lazy(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")

#: a key containing one of these words (after normalisation) names a secret
SECRET_WORDS = frozenset(
    {
        "token",
        "secret",
        "secrets",
        "password",
        "passwords",
        "passwd",
        "pwd",
        "passphrase",
        "credential",
        "credentials",
        "creds",
        "apikey",
        "apikeys",
        "cookie",
        "cookies",
        "authorization",
        "sessionid",
        "sessid",
        "dsn",
        "privatekey",
        "secretkey",
        "accesskey",
        "authtoken",
        "accesstoken",
        "refreshtoken",
        "idtoken",
        "jwt",
        "connstr",
        "privkey",
    }
)
#: single words ending like this are compounds such as "githubtoken" or "dbpassword"
SECRET_SUFFIXES = (
    "token",
    "secret",
    "password",
    "passwd",
    "apikey",
    "privatekey",
    "secretkey",
    "credential",
    "credentials",
)
#: "<qualifier> key" names a secret ("api key"); a bare "key" does not ("sort key")
KEY_QUALIFIERS = frozenset(
    {
        "api",
        "private",
        "secret",
        "access",
        "signing",
        "encryption",
        "decryption",
        "master",
        "auth",
        "session",
        "hmac",
        "ssh",
        "gpg",
        "pgp",
        "deploy",
        "client",
    }
)
#: whole normalised names (words joined) that are secrets
SECRET_NAMES = frozenset(
    {
        "sessionid",
        "connectionstring",
        "setcookie",
        "xapikey",
        "awssecretaccesskey",
        "dsn",
        "proxyauthorization",
        "xauthtoken",
    }
)
#: a trailing word that makes the name describe a secret rather than hold it
META_WORDS = frozenset(
    {
        "id",
        "ids",
        "name",
        "names",
        "type",
        "types",
        "kind",
        "count",
        "counts",
        "length",
        "len",
        "size",
        "limit",
        "limits",
        "max",
        "min",
        "url",
        "uri",
        "urls",
        "endpoint",
        "path",
        "paths",
        "file",
        "files",
        "dir",
        "env",
        "var",
        "vars",
        "ref",
        "refs",
        "arn",
        "hint",
        "policy",
        "expiry",
        "expires",
        "expiration",
        "expired",
        "ttl",
        "index",
        "usage",
        "used",
        "budget",
        "remaining",
        "total",
        "num",
        "stdin",
        "required",
        "enabled",
        "present",
        "provided",
        "source",
        "format",
        "prefix",
        "label",
        "version",
        "field",
        "fields",
        "header",
    }
)
#: words that make a "token" key an LLM usage counter (max_tokens, prompt_tokens, ...)
USAGE_WORDS = META_WORDS | frozenset(
    {
        "prompt",
        "completion",
        "input",
        "output",
        "cached",
        "cache",
        "reasoning",
        "per",
        "estimate",
        "estimated",
        "number",
        "indices",
        "tokens",
    }
)


def key_words(key: str) -> tuple[str, ...]:
    """Normalise a key: split on separators and camelCase, lower-case ("X-Api-Key" -> x api key)."""
    return tuple(w.lower() for w in _CAMEL().findall(key))


@lru_cache(maxsize=4096)
def builtin_secret_name(words: tuple[str, ...]) -> bool:
    """Whether normalised key words name a secret under the built-in rules."""
    if not words:
        return False
    if "".join(words) in SECRET_NAMES:
        return True
    hit = -1
    for i, w in enumerate(words):
        if w in SECRET_WORDS or w.endswith(SECRET_SUFFIXES):
            hit = i
        elif w in ("key", "keys") and i and words[i - 1] in KEY_QUALIFIERS:
            hit = i
    if hit < 0:
        return False
    if words[hit] == "token" and any(w in USAGE_WORDS for w in words):
        return False  # max_token, token_count, token_limit
    return not (hit < len(words) - 1 and words[-1] in META_WORDS)  # password_file, secret_name
