"""The secret/PII pattern table used by :mod:`lorebook.log.sanitize`.

The rule families follow gitleaks and detect-secrets (provider token formats, keyword
assignments, URL credentials, private-key blocks, high-entropy strings), but are written
in-house: the append path must stay stdlib-only and cheap to import, and those packages cost
50-90 ms of imports.  Everything here is immutable: regexes, byte tables, word sets.

Speed notes (every pattern may run on the hot append path):
- regexes compile on first use (module ``__getattr__``): compiling the table costs ~10 ms,
  and most appends never need most of it;
- every pattern starts with a literal or a character class, so ``re`` skips ahead in C;
  word-boundary look-behinds sit *after* the first character for the same reason;
- runs use possessive quantifiers, so a failed match never backtracks quadratically;
- the byte tables let the sanitizer decide with a few C calls (``bytes.translate`` + ``in``)
  which rule families can possibly match a string.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from functools import lru_cache

# ---------------------------------------------------------------------------------------------
# byte tables for the triage


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


#: maps a string's UTF-8 to its character classes; all blanks means nothing to look at
CLS = bytes(_class_of(c) for c in range(256))
#: digits -> "0", phone/card separators -> " ", "+" kept, everything else -> "x"
DIG = bytes(
    0x30 if 48 <= c <= 57 else 0x20 if c in b" -.()" else c if c == 0x2B else 0x78
    for c in range(256)
)
_TOKEN_BYTES = set(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-+/=")
#: token characters -> "a", everything else -> " ": a run of 20 is then found with `in`
RUN_MAP = bytes(0x61 if c in _TOKEN_BYTES else 0x20 for c in range(256))
RUN_MIN = "a" * 20
DIGITS = b"0123456789"
HEX_CHARS = "0123456789abcdefABCDEF-"
AUTH_SCHEMES = frozenset("bearer basic token digest negotiate ntlm aws4-hmac-sha256".split())

# ---------------------------------------------------------------------------------------------
# regexes, compiled on first access (see __getattr__ at the end); annotated here for mypy

#: a quoted value: "..." or '...' with backslash escapes, or \"...\" inside escaped JSON
_QUOTED = r"\\\"(?:[^\\\n]|\\[^\"\n])*\\\"|\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'"
_AWS_PREFIXES = ("AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "AIPA")

_SOURCES: dict[str, str] = {
    # a key read backwards from its separator (matched on the reversed string at the
    # separator); group 1 is the key, reversed.  The key must start at a word boundary, so
    # "--password=x" is left to FLAG.
    "REV_ASSIGN": r"[=:][ \t]*(?:[\"']\\?)?([A-Za-z0-9_.\-]{0,80}[A-Za-z_])(?![A-Za-z0-9_.\-])",
    # the value after "=": one shell word or a quoted string
    "VALUE_EQ": r"[ \t]*(" + _QUOTED + r"|[^\s\"'`]+)",
    # the value after ":": a quoted string or the rest of the line up to a comma or semicolon
    "VALUE_COLON": r"[ \t]*(" + _QUOTED + r"|[^\s\"'`,;]+(?:[ \t]+[^\s\"'`,;]+)*+)",
    # --name value / --name=value: group 1 the name, 2 the separator, 3 the value
    "FLAG": r"--(?<![A-Za-z0-9_\-]--)([A-Za-z][A-Za-z0-9_\-]{0,60}+)(=|[ \t]+)("
    + _QUOTED
    + r"|[^\s\"'`]+)",
    "PEM": r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
    r"[\s\S]*?(?:-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|\Z)",
    # scheme://user:password@host: group 1 is the password
    "URL_CRED": r"://[^\s/@:\"'<>]*:([^\s/@\"'<>]+)@",
    # an email, found from its "@": the local part read backwards, then the domain
    "REV_LOCAL": r"[A-Za-z0-9._%+\-]{1,64}+",
    "DOMAIN": r"[A-Za-z0-9](?:[A-Za-z0-9\-]{0,62}\.)+[A-Za-z]{2,24}(?![A-Za-z0-9\-])",
    "BEARER": r"(?:Bearer|bearer|BEARER)[ \t]+([A-Za-z0-9\-._~+/]{8,}+=*)",
    "JWT": r"eyJ[A-Za-z0-9_\-]{5,}+\.eyJ[A-Za-z0-9_\-]{5,}+\.[A-Za-z0-9_\-]*+",
    "SENDGRID": r"SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}",
    "SLACK_WEBHOOK": r"hooks\.slack\.com/services/([A-Za-z0-9_/\-]{8,}+)",
    # token candidates: runs of >= 20 token characters, classified in Python
    "TOKEN": r"[A-Za-z0-9_\-+/](?<![A-Za-z0-9_\-+/][A-Za-z0-9_\-+/])[A-Za-z0-9_\-+/]{19,}+=*",
    # runs in the RUN_MAP image: a literal prefix, so re finds them with a fast C loop
    "RUN_MAP_RUNS": "a" * 20 + "a*",
    # PII: a cheap "digit blob" scan first, then the precise patterns inside each blob
    "DIGIT_BLOB": r"[+(0-9][0-9 ().\-]{6,40}[0-9]",
    "PII": r"(?P<ssn>(?<![0-9\-])(?!000|666|9[0-9]{2})[0-9]{3}-(?!00)[0-9]{2}-(?!0000)[0-9]{4}"
    r"(?![0-9\-]))"
    r"|(?P<credit_card>(?<![0-9])[2-6][0-9](?:[ \-]?[0-9]){11,17}(?![0-9]))"
    r"|(?P<phone>(?<![0-9+(])(?:\+1[ .\-]?)?(?:\([0-9]{3}\) ?|[0-9]{3}[ .\-])[0-9]{3}[ .\-]"
    r"[0-9]{4}(?![0-9]))"
    r"|(?P<intl_phone>\+(?<![0-9+]\+)[0-9][0-9 ().\-]{5,22}[0-9](?![0-9]))",
    # helpers of the classifiers below
    "MARKER": r"\[REDACTED(?::[^\]]*)?\]",
    "TRUNC_TAIL": r"…\[TRUNCATED [0-9]+ chars\]\Z",
    "SURROGATE": "[\ud800-\udfff]",
    "PATHLIKE": r"[/~]|[A-Za-z]:[\\/]",
    "HEX": r"[0-9a-fA-F\-]+",
    "ULID": r"[0-9A-HJKMNP-TV-Z]{26}",
    "SEPARATORS": r"[/_\-+]+",
    "WORDISH": r"[a-z]+[0-9]*|[0-9]+[a-z]*|[A-Z][a-z]+[0-9]*|[A-Z]+[0-9]*|.{1,3}",
    "LOWER_WORD": r"[A-Z]?[a-z]{3,}",
    "CAMEL": r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+",
    # provider formats, matched at the start of a token candidate
    "AWS_ACCESS_KEY": r"(?:" + "|".join(_AWS_PREFIXES) + r")[A-Z0-9]{16}(?![A-Za-z0-9])",
    "GITHUB_TOKEN": r"gh[pousr]_[A-Za-z0-9]{36,255}",
    "GITHUB_PAT": r"github_pat_[A-Za-z0-9_]{22,255}",
    "GITLAB_TOKEN": r"glpat-[A-Za-z0-9_\-]{20,}",
    "SLACK_TOKEN": r"xox[abposr]-[A-Za-z0-9\-]{10,}",
    "STRIPE_KEY": r"[sr]k_(?:live|test)_[A-Za-z0-9]{24,}",
    "ANTHROPIC_KEY": r"sk-ant-[A-Za-z0-9_\-]{20,}",
    "OPENAI_KEY": r"sk-(?:proj-|svcacct-|admin-)?([A-Za-z0-9_\-]{20,})",
    "GOOGLE_API_KEY": r"AIza[0-9A-Za-z_\-]{35}",
    "NPM_TOKEN": r"npm_[A-Za-z0-9]{36}",
    "HUGGINGFACE_TOKEN": r"hf_[A-Za-z0-9]{30,}",
}
REV_ASSIGN: re.Pattern[str]
VALUE_EQ: re.Pattern[str]
VALUE_COLON: re.Pattern[str]
FLAG: re.Pattern[str]
PEM: re.Pattern[str]
URL_CRED: re.Pattern[str]
REV_LOCAL: re.Pattern[str]
DOMAIN: re.Pattern[str]
RUN_MAP_RUNS: re.Pattern[str]
BEARER: re.Pattern[str]
JWT: re.Pattern[str]
SENDGRID: re.Pattern[str]
SLACK_WEBHOOK: re.Pattern[str]
TOKEN: re.Pattern[str]
DIGIT_BLOB: re.Pattern[str]
PII: re.Pattern[str]
MARKER: re.Pattern[str]
TRUNC_TAIL: re.Pattern[str]
SURROGATE: re.Pattern[str]
PATHLIKE: re.Pattern[str]

#: (prefixes, pattern name, kind); the first entry whose pattern matches wins
PROVIDERS: tuple[tuple[tuple[str, ...], str, str], ...] = (
    (_AWS_PREFIXES, "AWS_ACCESS_KEY", "aws_access_key"),
    (("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), "GITHUB_TOKEN", "github_token"),
    (("github_pat_",), "GITHUB_PAT", "github_token"),
    (("glpat-",), "GITLAB_TOKEN", "gitlab_token"),
    (("xox",), "SLACK_TOKEN", "slack_token"),
    (("sk_live_", "rk_live_", "sk_test_", "rk_test_"), "STRIPE_KEY", "stripe_key"),
    (("sk-ant-",), "ANTHROPIC_KEY", "anthropic_key"),
    (("sk-",), "OPENAI_KEY", "openai_key"),
    (("AIza",), "GOOGLE_API_KEY", "google_api_key"),
    (("npm_",), "NPM_TOKEN", "npm_token"),
    (("hf_",), "HUGGINGFACE_TOKEN", "huggingface_token"),
)
PROVIDER_PREFIXES = tuple(p for prefixes, _, _ in PROVIDERS for p in prefixes)


def rx(name: str) -> re.Pattern[str]:
    """The compiled pattern `name` (compiled once, then a plain module attribute)."""
    pattern = globals().get(name)
    if pattern is None:
        pattern = globals()[name] = re.compile(_SOURCES[name])
    return pattern  # type: ignore[no-any-return]


def __getattr__(name: str) -> re.Pattern[str]:
    """PEP 562: `secret_patterns.PEM` compiles PEM on first access."""
    if name in _SOURCES:
        return rx(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ---------------------------------------------------------------------------------------------
# token classification


def classify_token(tok: str) -> tuple[str, int] | None:
    """(kind, length of the secret prefix) for a token candidate, or None when harmless."""
    if tok.startswith(PROVIDER_PREFIXES):
        for prefixes, name, kind in PROVIDERS:
            if not tok.startswith(prefixes):
                continue
            m = rx(name).match(tok)
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
    if rx("HEX").fullmatch(core) or (n == 26 and rx("ULID").fullmatch(core)):
        return False  # digests, UUIDs, ULIDs
    segments = [s for s in rx("SEPARATORS").split(core) if s]
    if len(segments) > 1:
        wordish = sum(len(s) for s in segments if rx("WORDISH").fullmatch(s))
        if wordish >= 0.75 * sum(map(len, segments)):
            return False  # a path, branch or identifier made of words and numbers
    threshold = 3.8 if n < 32 else 4.1 if n < 48 else 4.3
    if entropy(core) < threshold:
        return False
    if digits / n < 0.2:
        covered = sum(len(w) for w in rx("LOWER_WORD").findall(core))
        if covered >= 0.6 * n:
            return False  # CamelCaseIdentifierWithAFewDigits2
    return True


# ---------------------------------------------------------------------------------------------
# PII validation


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

#: a key containing one of these words (after normalisation) names a secret
SECRET_WORDS = frozenset(
    """token secret secrets password passwords passwd pwd passphrase credential credentials
    creds apikey apikeys cookie cookies authorization sessionid sessid dsn privatekey secretkey
    accesskey authtoken accesstoken refreshtoken idtoken jwt connstr privkey""".split()
)
#: single words ending like this are compounds such as "githubtoken" or "dbpassword"
SECRET_SUFFIXES = tuple(
    "token secret password passwd apikey privatekey secretkey credential credentials".split()
)
#: "<qualifier> key" names a secret ("api key"); a bare "key" does not ("sort key")
KEY_QUALIFIERS = frozenset(
    """api private secret access signing encryption decryption master auth session hmac ssh
    gpg pgp deploy client""".split()
)
#: whole normalised names (words joined) that are secrets
SECRET_NAMES = frozenset(
    """sessionid connectionstring setcookie xapikey awssecretaccesskey dsn proxyauthorization
    xauthtoken""".split()
)
#: a trailing word that makes the name describe a secret rather than hold it
META_WORDS = frozenset(
    """id ids name names type types kind count counts length len size limit limits max min url
    uri urls endpoint path paths file files dir env var vars ref refs arn hint policy expiry
    expires expiration expired ttl index usage used budget remaining total num stdin required
    enabled present provided source format prefix label version field fields header""".split()
)
#: words that make a "token" key an LLM usage counter (max_tokens, token_limit, ...)
USAGE_WORDS = frozenset(
    """max min num number total count counts limit limits used usage budget remaining prompt
    completion input output cached cache reasoning per estimate estimated tokens""".split()
)


def key_words(key: str) -> tuple[str, ...]:
    """Normalise a key: split on separators and camelCase, lower-case ("X-Api-Key" -> x api key)."""
    return tuple(w.lower() for w in rx("CAMEL").findall(key))


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
