"""The secret/PII rules behind :mod:`lorebook.redact.sanitize`: pattern table and classifiers.

The rule families follow gitleaks and detect-secrets (provider token formats, keyword
assignments, URL credentials, private-key blocks, high-entropy strings), but are written
in-house: the append path must stay stdlib-only and cheap to import, and those packages cost
50-90 ms of imports.  Everything here is immutable (regexes, byte tables, word sets) or pure,
but for bounded caches of what names hold a keyword.

Speed notes (this runs on the hot append path, on a machine where a str method call costs
~0.1 us and ``re`` walks a character class at ~10 ns/char):
- regexes compile on first use (``R``): compiling the table costs ~10 ms, and most appends
  never need most of it;
- ``scan.families`` decides with operators and a few C calls (``bytes.translate`` to
  character classes, ``in``) which rule families can match a string at all; most strings
  stop there, and the regexes of ``keyword_in_key`` start with a literal, found in C;
- ``find_spans`` then starts each pattern where C string search points (a literal prefix,
  a separator, an "@", a run of token characters) instead of letting ``re`` scan;
- runs use possessive quantifiers, so a failed match never backtracks quadratically.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache
from operator import mul

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
    if c in b" -.()":
        return 0x09  # separators of phone/card/SSN digit groups -> tab (still blank)
    return 0x20  # lower-case letters, whitespace, punctuation: harmless on their own


#: a string's UTF-8 -> character classes: all blank (space, tab) means nothing to look at;
#: the tabs mark the separators of digit groups, for the digit shapes of ``families``
FAM = bytes(_class_of(c) for c in range(256))
#: digits -> "0", phone/card separators -> " ", "+" kept, everything else -> "x"
DIG = bytes(
    0x30 if 48 <= c <= 57 else 0x20 if c in b" -.()" else c if c == 0x2B else 0x78
    for c in range(256)
)
_TOKEN_BYTES = set(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-+/=")
#: token characters -> "a", everything else -> " ": a run of 20 is then found with `in`
RUN_MAP = bytes(0x61 if c in _TOKEN_BYTES else 0x20 for c in range(256))
#: the same without "/": for strings without capitals, where a run through "/" is a path
#: the same without "=": the stretches of a run between its "="s (what TOKEN matches)
RUN_MAP_NO_EQ = bytes(0x61 if c in _TOKEN_BYTES and c != 0x3D else 0x20 for c in range(256))
RUN_MAP_NO_SLASH = bytes(0x61 if c in _TOKEN_BYTES and c != 0x2F else 0x20 for c in range(256))
#: (in the DIG image) a stretch of separators too long for a digit blob to start in
NO_DIGITS = " " * 48
RUN_MIN = "a" * 20
RUN_END = RUN_MIN + " "  # the end of a run (searched for: "a" * 20 alone is slow, see families)
DIGITS = b"0123456789"
HEX_CHARS = "0123456789abcdefABCDEF-"
AUTH_SCHEMES = frozenset({"bearer", "basic", "token", "digest", "negotiate", "ntlm"})

# ---------------------------------------------------------------------------------------------
# regexes, compiled on first use (R): compiling them all would cost ~10 ms of import

#: a quoted value: "..." or '...' with backslash escapes, or \"...\" inside escaped JSON
_QUOTED = r"\\\"(?:[^\\\n]|\\[^\"\n])*\\\"|\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'"
_AWS_PREFIXES = ("AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "AIPA")

_SOURCES: dict[str, str] = {
    # a key read backwards from its separator (matched on the reversed string at the
    # separator); group 1 is the key, reversed.  The key must start at a word boundary, so
    # "--password=x" is left to FLAG.
    "REV_ASSIGN": r"[=:][ \t]*(?:[\"']\\?)?([A-Za-z0-9_.\-]{0,80}[A-Za-z_])(?![A-Za-z0-9_.:\-])",
    # the value after "=": one shell word or a quoted string
    "VALUE_EQ": r"[ \t]*(" + _QUOTED + r"|[^\s\"'`]+)",
    # the value after ":": a quoted string or the rest of the line up to a comma or semicolon
    "VALUE_COLON": r"[ \t]*(" + _QUOTED + r"|[^\s\"'`,;]+(?:[ \t]+[^\s\"'`,;]+)*+)",
    # --name value / --name=value: group 1 the name, 2 the separator, 3 the value
    "FLAG": r"--(?<![A-Za-z0-9_\-]--)([A-Za-z][A-Za-z0-9_\-]{0,60}+)(=|[ \t]++(?!-))("
    + _QUOTED
    + r"|[^\s\"'`]+)",
    "PEM": r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
    r"[\s\S]*?(?:-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|\Z)",
    # a password in prose, "my password is X", "the pwd was 'X'": group 1 is the value (the
    # keyed rules take "password: X" and "passwd=X"); bounded repeats only, no nesting
    "PROSE_PASSWORD": r"(?i:\b(?:password|passwd|pwd|passphrase)[ \t]{1,4}(?:is|was)[ \t]{1,4})"
    r"[\"']?([^\s\"'`]{1,200})",
    # the same on lower-cased ASCII text: "p" first (found by C), then the "\b" before it
    "PROSE_PASSWORD_LOW": r"p(?<!\wp)(?:assword|asswd|wd|assphrase)[ \t]{1,4}(?:is|was)[ \t]{1,4}"
    r"[\"']?([^\s\"'`]{1,200})",
    # scheme://user:password@host: group 1 is the password
    "URL_CRED": r"://[^\s/@:\"'<>]*:([^\s/@\"'<>]{2,})@",  # (one character is no password)
    # an email, found from its "@": the local part read backwards, then the domain
    "REV_LOCAL": r"[A-Za-z0-9._%+\-]{1,64}+",
    "AT_DOMAIN": r"@[A-Za-z0-9](?:[A-Za-z0-9\-]{0,62}\.)+[A-Za-z]{2,24}(?![A-Za-z0-9\-])",
    "BEARER": r"(?:Bearer|bearer|BEARER)[ \t]+([A-Za-z0-9\-._~+/]{8,}+=*)",
    # its "Bearer" and "bearer" matches, from the literal "earer" (see scan.find_spans)
    "BEARER_AFTER": r"earer(?<=[Bb]earer)[ \t]+([A-Za-z0-9\-._~+/]{8,}+=*)",
    "JWT": r"eyJ[A-Za-z0-9_\-]{5,}+\.eyJ[A-Za-z0-9_\-]{5,}+\.[A-Za-z0-9_\-]*+",
    "JWT_RUN": r"[A-Za-z0-9_\-]*+",  # where a JWT's header run ends (see finders.jwts)
    "EQUALS": r"=*+",  # the "="s after a token (see finders.tokens)
    # from a word of a secret name to the separator its key may end (see finders.assignments)
    "KEY_TAIL": r"[A-Za-z0-9_.\-]*+(?:\\?[\"'])?[ \t]*+[=:]?",
    # an assigned value judged where it lies (see finders._assigned)
    "BLANKS": r"[ \t]*+",
    "NONBLANK": r"\S",
    "SAME": r"(?s)(.)\1*+",
    "NUMBER": r"\d*+(?:\.\d*+)?",
    "SENDGRID": r"SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}",
    "SLACK_WEBHOOK": r"hooks\.slack\.com/services/([A-Za-z0-9_/\-]{8,}+)",
    # token candidates: runs of >= 20 token characters, classified in Python
    "TOKEN": r"[A-Za-z0-9_\-+/](?<![A-Za-z0-9_\-+/][A-Za-z0-9_\-+/])[A-Za-z0-9_\-+/]{19,}+=*",
    # PII: a cheap "digit blob" scan first, then the precise patterns inside each blob
    "DIGIT_BLOB": r"[+(0-9][0-9 ().\-]{6,40}[0-9]",
    "SEPARATOR_RUN": r" *+",  # (on the DIG image) a stretch of separators: see finders.pii
    "PII": r"(?P<ssn>(?<![0-9\-])(?!000|666|9[0-9]{2})[0-9]{3}-(?!00)[0-9]{2}-(?!0000)[0-9]{4}"
    r"(?![0-9\-]))"
    r"|(?P<credit_card>(?<![0-9])[2-6][0-9](?:[ \-]?[0-9]){11,17}(?![0-9]))"
    r"|(?P<phone>(?<![0-9+(])(?:\+1[ .\-]?)?(?:\([0-9]{3}\) ?|[0-9]{3}[ .\-])[0-9]{3}[ .\-]"
    r"[0-9]{4}(?![0-9]))"
    r"|(?P<intl_phone>\+(?<![0-9+]\+)[0-9][0-9 ().\-]{5,22}[0-9](?![0-9]))",
    # the names that the keyword test of the triage looks at: a flag name after "--", and a
    # key before "=" / ":" read backwards (on the reversed string: separator, blanks, a
    # quote, a backslash, then the key); each starts with a literal, which re finds fast
    # a flag name, and its "=" when nothing before "--" can be part of a key (else group 3)
    "FLAG_NAMES": r"--(?:(?<![A-Za-z0-9_.\-]--)([A-Za-z0-9_\-]*)(=?)|([A-Za-z0-9_\-]*))",
    "EQ_KEY_NAMES": r"=[ \t]*[\"']?\\?([A-Za-z0-9_.\-]*)",
    "COLON_KEY_NAMES": r":[ \t]*[\"']?\\?([A-Za-z0-9_.\-]*)",
    # helpers of the classifiers below
    "MARKER": r"\[REDACTED(?::[^\]]*)?\]",
    "TRUNC_TAIL": r"…\[TRUNCATED [0-9]+ chars\]\Z",
    "SURROGATE": "[\ud800-\udfff]",
    "PATHLIKE": r"[/~]|[A-Za-z]:[\\/]",
    "HEX": r"[0-9a-fA-F\-]+",
    "ULID": r"[0-9A-HJKMNP-TV-Z]{26}",
    # the ids of Anthropic's API that Claude Code logs: tool-use, server tool-use, message,
    # request, batch, file and environment ids, "01" then 22 base58 characters
    "ANTHROPIC_ID": r"(?:toolu|srvtoolu|msg|msgbatch|req|file|env)_01[1-9A-HJ-NP-Za-km-z]{22}",
    # the tool-call ids of OpenAI's API that Codex CLI logs: "call_" then 24 base62 characters
    "OPENAI_CALL_ID": r"call_[0-9A-Za-z]{24}",
    # a session id under a session-named key: a ULID or a UUID, maybe after a lower-case or
    # date prefix ("session-<ULID>", "2026-01-20-<UUID>")
    "SESSION_ID": r"(?:[0-9a-z][0-9a-z\-]{0,31}[-_])?"
    r"(?:[0-9A-HJKMNP-TV-Z]{26}|[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12})"
    # or source code that names one: `sessionID: state.SessionID`, `sessionID := f(x.Dir)`,
    # `SessionID: entireSessionID` (a web session's id has digits or symbols)
    r"|(?:=[ \t]*)?[A-Za-z_]+(?:\.[A-Za-z_]+)+(?:\([^()\n]{0,200}\))?"
    r"|[A-Za-z_]*[Ss]ession[A-Za-z_]*",
    "SEPARATORS": r"[/_\-+]+",
    # a folder's name: "var", "Library", "node_modules", "lore-replay-gpc2172i" (base64 has
    # no "-" or "_" beside its "/"; base64url has no "/")
    "PATH_WORD": r"[A-Za-z]?[a-z]+(?:[_\-][a-z0-9]+)*",
    # a whole segment (between "/", "_", "-", "+" or the ends) made of a word and a number,
    # or of 1-3 characters
    "WORDISH_SEGMENT": r"(?<![^/_\-+])(?:[a-z]+[0-9]*|[0-9]+[a-z]*|[A-Z][a-z]+[0-9]*|[A-Z]+[0-9]*"
    r"|[^/_\-+\n]{1,3})(?![^/_\-+])",
    "LOWER_WORD": r"[A-Z]?[a-z]{3,}",
    "CAMEL": r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+",
    # provider formats, matched at the start of a token candidate
    # (every repeat is bounded by KEY_MAX, so matching one costs O(KEY_MAX) wherever it
    # starts; a key that runs to the bound is longer than any real one, and is redacted to
    # the end of its token: see provider_key)
    "AWS_ACCESS_KEY": r"(?:" + "|".join(_AWS_PREFIXES) + r")[A-Z0-9]{16}(?![A-Za-z0-9])",
    "GITHUB_TOKEN": r"gh[pousr]_[A-Za-z0-9]{36,255}",
    "GITHUB_PAT": r"github_pat_[A-Za-z0-9_]{22,255}",
    "GITLAB_TOKEN": r"glpat-[A-Za-z0-9_\-]{20,255}",
    "SLACK_TOKEN": r"xox[abposr]-[A-Za-z0-9\-]{10,255}",
    "STRIPE_KEY": r"[sr]k_(?:live|test)_[A-Za-z0-9]{24,255}",
    "ANTHROPIC_KEY": r"sk-ant-[A-Za-z0-9_\-]{20,255}",
    "OPENAI_KEY": r"sk-(?:proj-|svcacct-|admin-)?([A-Za-z0-9_\-]{20,255})",
    "GOOGLE_API_KEY": r"AIza[0-9A-Za-z_\-]{35}",
    "NPM_TOKEN": r"npm_[A-Za-z0-9]{36}",
    "HUGGINGFACE_TOKEN": r"hf_[A-Za-z0-9]{30,255}",
}
#: the bound of every provider key's body (real keys are far shorter)
KEY_MAX = 255

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
# a provider prefix glued inside a token after a separator ("x-AKIA…", "foo-xoxb-…")
_SOURCES["INNER_PROVIDER"] = r"[_\-+/](?=" + "|".join(map(re.escape, PROVIDER_PREFIXES)) + ")"
# ... where a provider's pattern matches (its shortest match: the same places, each tried in
# O(its minimum) in C), all providers or all but OpenAI's: see inner_provider_key
_MINIMAL = {name: re.sub(r"\{(\d+),255\}", r"{\1}", _SOURCES[name]) for _, name, _ in PROVIDERS}
# (the first letters of the prefixes first: most separators fail there, in one test)
_FIRST = "(?=[" + "".join(sorted({p[0] for p in PROVIDER_PREFIXES})) + "])"
_SOURCES["INNER_HIT"] = r"[_\-+/]" + _FIRST + "(?=" + "|".join(_MINIMAL.values()) + ")"
_SOURCES["INNER_HIT_NOT_OPENAI"] = (
    r"[_\-+/]"
    + _FIRST
    + "(?="
    + "|".join(v for k, v in _MINIMAL.items() if k != "OPENAI_KEY")
    + ")"
)
# what lorebook.redact.identifiers passes or reads: the parts of an id; ids lorebook and agents
# generate, which hold no secret (a ULID, an automatic session id or a UUID, maybe after a
# lower-case word: "session-<ULID>"); and how a message names a file (`learnings/passwd.md: …`,
# `secret.yaml:3: …`: a file named like a secret key, then a colon -- not an assignment)
_SOURCES["ID_PARTS"] = r"[/._-]"
_SOURCES["GENERATED_ID"] = (
    r"(?:[a-z][a-z0-9]{0,31}[-_])?"
    r"(?:[0-9A-HJKMNP-TV-Z]{26}|auto-[0-9]{8}-[0-9a-f]{12}|[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12})"
)
_SOURCES["FILE_KEY"] = (
    r"(?:\S*/\S*|\S+\.(?:md|ya?ml|jsonl?|gz|txt|toml|sqlite|csv|py|lock|tmp))(?::\d+)*"
)
#: the PROVIDERS entries (in order) with a prefix that starts with these two characters
PROVIDERS_BY_HEAD: dict[str, list[tuple[tuple[str, ...], str, str]]] = {}
for _entry in PROVIDERS:
    for _head in dict.fromkeys(p[:2] for p in _entry[0]):
        PROVIDERS_BY_HEAD.setdefault(_head, []).append(_entry)
del _entry, _head


#: every secret-named key or flag holds one of these (lower-case) words
KEYWORDS = (
    "pass",
    "token",
    "key",
    "secret",
    "auth",
    "pwd",
    "cred",
    "sess",
    "cookie",
    "dsn",
    "conn",
    "jwt",
)


class _Patterns:
    """`R.PEM` is the compiled PEM pattern: compiled on first access, then a plain attribute
    (no call on the hot path).  A cache of immutable patterns, like re's own."""

    def __getattr__(self, name: str) -> re.Pattern[str]:
        pattern = re.compile(_SOURCES[name])
        setattr(self, name, pattern)
        return pattern


R = _Patterns()


def without_surrogates(text: str) -> str:
    """`text` with every lone surrogate (which UTF-8 cannot encode) replaced by U+FFFD.

    UTF-8 fails on surrogates and on nothing else, so a text that encodes has none: the
    character-class regex (~0.6 ms to compile, on every cold read that redacts text) is built
    only for a text that holds one.
    """
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return R.SURROGATE.sub("\ufffd", text)
    return text


# ---------------------------------------------------------------------------------------------
# token classification


def provider_key(tok: str, pos: int = 0) -> tuple[str, int] | None:
    """(kind, end) of a provider's key that starts at `pos` in token candidate `tok`, or None.

    Matched in place (no slice of the rest of `tok`) with bounded patterns: O(KEY_MAX)
    wherever it starts, so trying every inner position of a long token stays linear.  A key
    that long (KEY_MAX) is past any real key's length: it is redacted to the end of `tok`
    (more than the key, never less)."""
    providers = PROVIDERS_BY_HEAD.get(tok[pos : pos + 2])
    if providers is None:
        return None
    for prefixes, name, kind in providers:
        if not tok.startswith(prefixes, pos):
            continue
        m = getattr(R, name).match(tok, pos)
        if m is None:
            continue
        if kind == "openai_key":
            body = m.group(1)
            # "sk-learn-compatible-v2" is a name; real keys are one random run
            if "-" in body and (body.islower() or body.isupper() or body.isalpha()):
                continue
        end = m.end()
        return kind, len(tok) if end - pos >= KEY_MAX else end
    return None


def classify_token(tok: str) -> tuple[str, int] | None:
    """(kind, length of the secret prefix) for a token candidate, or None when harmless."""
    hit = provider_key(tok)
    if hit is not None:
        return hit
    return ("high_entropy", len(tok)) if looks_random(tok) else None


def inner_provider_key(tok: str) -> tuple[int, int, str] | None:
    """(start, end, kind) of a provider's key glued after a separator inside a harmless-looking
    token: "x-AKIAIOSFODNN7EXAMPLE", "foo-xoxb-…" (the key alone would be caught)."""
    # Only where a provider's pattern matches (found in C); where an OpenAI-shaped key is
    # refused for its one-case body, the candidates after it whose whole bodies lie in the
    # same stretch are refused too and skipped in one step ("sk-sk-sk-…" is all candidates)
    search = R.INNER_HIT.search
    pos = 0
    images: list[str] = []  # tok's images for _openai_refused_until, made once
    while (m := search(tok, pos)) is not None:
        start = m.end()
        hit = provider_key(tok, start)
        if hit is not None:
            return start, hit[1], hit[0]
        pos = start
        if tok.startswith("sk-", start):
            skip = _openai_refused_until(tok, start + 3, images)
            if skip > start:
                # (a candidate before `skip` reads < 64 characters on: endpos loses nothing)
                other = R.INNER_HIT_NOT_OPENAI.search(tok, start, skip + 64)
                pos = skip - 1 if other is None or other.end() >= skip else other.start()
    return None


#: (token characters) key characters -> themselves in three classes, "-" kept, the rest " "
_KEY_CLASSES = bytes(
    0x2D if c == 0x2D else 0x6C if 97 <= c <= 122 else 0x55 if 65 <= c <= 90
    else 0x6F if 48 <= c <= 57 or c == 0x5F else 0x20
    for c in range(256)
)  # fmt: skip
#: "-" -> "-", the rest "x"; lower-case letters -> "l", the rest "x"
_DASHES = bytes(0x2D if c == 0x2D else 0x78 for c in range(256))
_LOWERS = bytes(0x6C if 97 <= c <= 122 else 0x78 for c in range(256))
_NO_DASH_RUN = "-" + "x" * KEY_MAX  # a run of KEY_MAX without "-", from its start
_NO_LOWER_RUN = "l" + "x" * KEY_MAX  # the same without a lower-case letter


def _openai_refused_until(tok: str, a: int, images: list[str]) -> int:
    """A position Q such that an OpenAI-shaped key ("sk-", maybe "proj-" and the like) that
    starts at any q with a - 3 <= q < Q is refused by provider_key: its body (KEY_MAX
    characters) then lies in a stretch from `a` without capitals, where every KEY_MAX
    characters hold a "-" and a lower-case letter, so it is one-case with a "-".  0 when the
    stretch is too short.  Searched with C string search on images of `tok` (`images`, made
    on the first call for this token), at most 16 * KEY_MAX characters ahead, so a refusal
    costs what matching one body did, and a skip passes over hundreds of candidates."""
    if not images:
        b = tok.encode()
        if len(b) != len(tok):  # (token candidates are ASCII)
            return 0
        images += [b.translate(t).decode() for t in (_KEY_CLASSES, _DASHES, _LOWERS)]
    classes, dashes, lowers = images
    stop = classes.find(" ", a, a + 16 * KEY_MAX)  # the key characters' run
    if stop < 0:
        stop = min(len(tok), a + 16 * KEY_MAX)
    upper = classes.find("U", a, stop)
    if upper >= 0:
        stop = upper
    if a + KEY_MAX - 1 <= len(tok) and lowers.find("l", a, a + KEY_MAX - 1) < 0:
        return 0  # (a run without a lower-case letter that starts before `a`)
    # a run of KEY_MAX without a "-", or without a lower-case one (from its start; the
    # character before `a` is the "-" of "sk-")
    dash = dashes.find(_NO_DASH_RUN, a - 1, stop)
    lower = lowers.find(_NO_LOWER_RUN, a - 1, stop)
    if dash >= 0 or lower >= 0:
        stop = (lower if dash < 0 else dash if lower < 0 else min(dash, lower)) + 1
    return stop - KEY_MAX - len("sk-svcacct-") if stop - a >= 4 * KEY_MAX else 0


_CLOG2 = [0.0, *(c * math.log2(c) for c in range(1, 257))]  # c * log2(c), exact same floats


def entropy(s: str) -> float:
    """Shannon entropy in bits per character: log2(n) - sum(c * log2(c)) / n.

    Counted with str.count per distinct character: Counter() costs ~10 us here.  The terms
    come from a table for strings up to 256 characters (half the cost of a token's triage);
    fsum is exact whatever the order, so the result is the same float either way."""
    n = len(s)
    if n <= 256:
        return math.log2(n) - math.fsum(map(_CLOG2.__getitem__, map(s.count, set(s)))) / n
    counts = list(map(s.count, set(s)))
    return math.log2(n) - math.fsum(map(mul, counts, map(math.log2, counts))) / n


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
    if R.HEX.fullmatch(core) or (n == 26 and R.ULID.fullmatch(core)):
        return False  # digests, UUIDs, ULIDs
    if "_01" in core and R.ANTHROPIC_ID.fullmatch(core):
        return False  # toolu_01…, msg_01…, req_01…: ids the API hands out, not keys
    if core.startswith("call_") and R.OPENAI_CALL_ID.fullmatch(core):
        return False  # call_…: a tool call's id in OpenAI's API, not a key
    threshold = 3.8 if n < 32 else 4.1 if n < 48 else 4.3
    if n > 256 and entropy(core) < threshold:
        return False  # (first when long: "aZ9+" * 60000 has 60000 segments below)
    if R.SEPARATORS.search(core.strip("/_-+")):  # more than one segment
        # the segments that are words and numbers, found in C: each a whole segment
        wordish = len("".join(R.WORDISH_SEGMENT.findall(core)))
        if wordish >= 0.75 * (n - sum(map(core.count, "/_-+"))):
            return False  # a path, branch or identifier made of words and numbers
    if n <= 256 and entropy(core) < threshold:
        return False
    if digits / n < 0.2:
        covered = sum(len(w) for w in R.LOWER_WORD.findall(core))
        if covered >= 0.6 * n:
            return False  # CamelCaseIdentifierWithAFewDigits2
    return True


def path_segments(tok: str) -> list[tuple[int, int]] | None:
    """The (start, end) of each random-looking segment of token `tok` when it is a path
    ("/var/folders/gz/<hash>/T/tmp", "node_modules/.cache/x/<digest>"), else None.

    A path has at least two segments that are words ("var", "Library", "node_modules"; a
    base64 blob with a "/" in it seldom has one: "wJalrXUtnFEMI/K7MDENG/bPx…" is judged
    whole), and they are at least half of its segments.  In a path, each segment is judged
    alone: lower-case ones are kept (as a lower-case path is, see finders.tokens), the others
    by ``looks_random``."""
    segments = tok.split("/")
    named = [s for s in segments if s]
    plain = sum(1 for s in named if R.PATH_WORD.fullmatch(s))
    if plain < 2 or 2 * plain < len(named):
        return None
    found = []
    pos = 0
    for seg in segments:
        if seg and not seg.islower() and looks_random(seg):
            found.append((pos, pos + len(seg)))
        pos += len(seg) + 1
    return found


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
        count = sum(ch.isdigit() for ch in text)
        if 8 <= count <= 15 and "  " not in text and "--" not in text and ".." not in text:
            return "phone"
        return None
    return kind


# ---------------------------------------------------------------------------------------------
# secret-named keys


def words(text: str) -> frozenset[str]:
    """A word set written as one string (keeps the tables below readable)."""
    return frozenset(text.split())


#: a key containing one of these words (after normalisation) names a secret
SECRET_WORDS = words(
    """token secret secrets password passwords passwd pwd passphrase credential credentials
    creds apikey apikeys cookie cookies authorization sessionid sessid dsn privatekey secretkey
    accesskey authtoken accesstoken refreshtoken idtoken jwt connstr privkey"""
)
#: single words ending like this are compounds such as "githubtoken" or "dbpassword"
SECRET_SUFFIXES = tuple(
    words("token secret password passwd apikey privatekey secretkey credential credentials")
)
#: "<qualifier> key" names a secret ("api key"); a bare "key" does not ("sort key")
KEY_QUALIFIERS = words(
    """api private secret access signing encryption decryption master auth session hmac ssh
    gpg pgp deploy client"""
)
#: whole normalised names (words joined) that are secrets
SECRET_NAMES = words(
    """sessionid connectionstring setcookie xapikey awssecretaccesskey dsn proxyauthorization
    xauthtoken"""
)
#: a trailing word that makes the name describe a secret rather than hold it
META_WORDS = words(
    """id ids name names type types kind count counts length len size limit limits max min url
    uri urls endpoint path paths file files dir env var vars ref refs arn hint policy expiry
    expires expiration expired ttl index usage used budget remaining total num stdin required
    enabled present provided source format prefix label version field fields header"""
)
#: words that make a "token" key an LLM usage counter (max_tokens, token_limit, ...)
USAGE_WORDS = words(
    """max min num number total count counts limit limits used usage budget remaining prompt
    completion input output cached cache reasoning per estimate estimated tokens"""
)


def key_words(key: str) -> tuple[str, ...]:
    """Normalise a key: split on separators and camelCase, lower-case ("X-Api-Key" -> x api key)."""
    return tuple(w.lower() for w in R.CAMEL.findall(key))


@lru_cache(maxsize=4096)
def builtin_secret_name(parts: tuple[str, ...]) -> bool:
    """Whether normalised key parts name a secret under the built-in rules."""
    if not parts:
        return False
    if "".join(parts) in SECRET_NAMES:
        return True
    hit = -1
    for i, w in enumerate(parts):
        if (
            w in SECRET_WORDS
            or w.endswith(SECRET_SUFFIXES)
            or (w in ("key", "keys") and i and parts[i - 1] in KEY_QUALIFIERS)
        ):
            hit = i
    if hit < 0:
        return False
    if parts[hit] == "token" and any(w in USAGE_WORDS for w in parts):
        return False  # max_token, token_count, token_limit
    return not (hit < len(parts) - 1 and parts[-1] in META_WORDS)  # password_file, secret_name


# flags of a key / variable name (name_info)
SECRET = 1  # names a secret: its whole value is redacted
PASSWORD = 2  # a number can still be a password
PWD = 4  # "PWD" is also the working directory: a path value is not a secret
AUTH = 8  # "Authorization: Bearer x" keeps its scheme word
SESSION = 16  # "session_id": lorebook's own session ids (ULIDs) are not web session secrets


def name_info(key: str, extra: tuple[tuple[str, ...], ...] = ()) -> tuple[int, str]:
    """(flags, kind of an in-text assignment) of a key or variable name; `extra` are the
    user's secret names as word tuples (a name matches when its words end with one)."""
    parts = key_words(key)
    flags = 0
    if builtin_secret_name(parts) or any(parts[-len(e) :] == e for e in extra):
        flags |= SECRET
    if {"password", "passwd", "pwd", "passphrase", "passwords"}.intersection(parts):
        flags |= PASSWORD
    joined = "".join(parts)
    if joined == "pwd":
        flags |= PWD
    elif joined in ("sessionid", "sessid"):
        flags |= SESSION
    if joined.endswith("authorization"):
        return flags | AUTH, "authorization"
    return flags, "aws_secret_key" if joined == "awssecretaccesskey" else "secret_assignment"


# ---------------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------------
# values and keys in text

MARK = "[REDACTED"
PLACEHOLDERS = frozenset({"null", "none", "nil", "true", "false", "undefined", "''", '""'})


def harmless_value(flags: int, value: str) -> bool:
    """A value that a secret-looking name holds without it being a secret: PWD's working
    directory, a lorebook session id (a ULID) under "session_id"."""
    if flags & PWD and R.PATHLIKE.match(value):
        return True
    return bool(flags & SESSION and R.SESSION_ID.fullmatch(value))


def harmless_value_at(flags: int, s: str, start: int, end: int) -> bool:
    """``harmless_value(flags, s[start:end])`` without copying the value."""
    if flags & PWD and R.PATHLIKE.match(s, start, end):
        return True
    return bool(flags & SESSION and R.SESSION_ID.fullmatch(s, start, end))


def plausible_value_at(s: str, start: int, end: int, numeric_ok: bool = True) -> bool:
    """``plausible_value(s[start:end], numeric_ok)`` without copying the value: each test
    reads only as far as it must, so judging many values that share a long tail is linear."""
    if start >= end:
        return False
    first = s[start]
    if first in "$<%{" or (first == "[" and s.startswith(MARK, start)):
        return False
    if end - start <= 9:
        return plausible_value(s[start:end], numeric_ok)
    if R.SAME.match(s, start, end).end() == end:  # type: ignore[union-attr]
        return False  # "**********"
    if numeric_ok and (first.isdigit() or first == "."):
        number = R.NUMBER.match(s, start, end).end()  # type: ignore[union-attr]
        if number == end:
            return False  # (10+ characters: at least one digit)
        if s[number].isdigit():  # a digit that is not a decimal one ("²"): the slow way
            return plausible_value(s[start:end], numeric_ok)
    return True


def unquote(value: str, start: int, end: int) -> tuple[int, int]:
    """The span of a value without its quotes (so the JSON/shell syntax around stays)."""
    if value.startswith('\\"') and len(value) >= 4:
        return start + 2, end - 2
    if value[:1] in ("'", '"') and len(value) >= 2:
        return start + 1, end - 1
    return start, end


def plausible_value(value: str, numeric_ok: bool = True) -> bool:
    """Whether an assigned value can be a real secret (not a placeholder or a marker)."""
    if not value:
        return False
    first = value[0]
    if first in "$<%{" or (first == "[" and value.startswith(MARK)):
        return False  # $VAR / ${VAR} / <placeholder> / templating, already redacted
    if (len(value) <= 9 and value.lower() in PLACEHOLDERS) or not value.strip(first):
        return False  # null/true/..., "****", "xxxx"
    return not (
        numeric_ok and (first.isdigit() or first == ".") and value.replace(".", "", 1).isdigit()
    )


def prose_hint(s: str) -> bool:
    """Whether `s` names a password in a way PROSE_PASSWORD looks for (C string searches)."""
    return "ssw" in s or "pwd" in s or "SSW" in s or "PWD" in s or "Pwd" in s or "ssphrase" in s


def prose_password(value: str) -> bool:
    """Whether the word after "password is" can be one: not a placeholder, and not a plain
    lower-case word ("the password is required", "... is stored hashed")."""
    word = value.rstrip(".,;:!?)")
    return plausible_value(word) and not (word.isalpha() and word.islower())


@lru_cache(maxsize=64)
def key_hits(extra: tuple[tuple[str, ...], ...] = ()) -> re.Pattern[str]:
    """A pattern that finds, in lower-cased text, a word that every secret name holds: a
    keyword (KEYWORDS) or the user's secret name (`extra`, as word tuples), each maybe split
    by "_", "." or "-" ("d_s_n" joins to the secret name "dsn" in ``name_info``)."""
    found = dict.fromkeys([*KEYWORDS, *("".join(e) for e in extra)])
    return re.compile("|".join(r"[_.\-]*".join(map(re.escape, w)) for w in found if w))


def has_keyword(s: str) -> bool:
    """Whether `s` holds a word that every secret-named key or flag holds."""
    low = s.lower()
    return any(kw in low for kw in KEYWORDS)


#: flag and key names seen by `keyword_in_key` (reversed, for keys) -> whether they hold a
#: keyword: names repeat a lot in a log ("--maxfail", "PATH="), and a lookup costs less than
#: the 12 `in` tests (bounded: cleared when full)
_FLAG_NAMES: dict[str, bool] = {}
_KEY_NAMES: dict[str, bool] = {}
_REVERSED_KEYWORDS = tuple(kw[::-1] for kw in KEYWORDS)


def _holds_keyword(names: dict[str, bool], name: str, keywords: tuple[str, ...]) -> bool:
    low = name.lower()
    hit = any(kw in low for kw in keywords)
    if len(names) >= 4096:
        names.clear()
    names[name] = hit
    return hit


def keyword_in_key(s: str, dash: int) -> bool:
    """Whether a keyword of a secret name (KEYWORDS) sits where the keyed rules look for a
    name: in a `--flag` name (`dash`: where the first "--" is, or -1), or in the key right
    before "=" / ":" (the key, a backslash, a quote, blanks, the separator).  "token" in a
    commit message or "auth" in "tests/test_auth.py" is not.

    A superset of what ``find_spans`` can find for F_KEYED: its flag names and keys are runs
    of [A-Za-z0-9_.-] that ``name_info`` splits into words, one of which holds a keyword.
    The names are found with regexes that start with a literal, which ``re`` finds fast (a
    character class it scans at ~10 ns a char); keys are read backwards, on the reversed
    text.  Neither crosses a newline.  An "=" right after a flag name ("--maxfail=1") ends a
    key that is that name (when what comes before "--" cannot be part of a key): when every
    "=" is one of those, the keys before "=" need no second look."""
    flag_eqs = 0  # how many "=" end a key that is a flag name looked at
    if dash >= 0:
        for name, eq, other in R.FLAG_NAMES.findall(s, dash):
            name = name or other
            hit = _FLAG_NAMES.get(name)
            if hit is None:
                hit = _holds_keyword(_FLAG_NAMES, name, KEYWORDS)
            if hit:
                return True
            if eq:
                flag_eqs += 1
    eq = "=" in s and (not flag_eqs or s.count("=") > flag_eqs)
    colon = ":" in s
    if not (eq or colon):
        return False
    rs = s[::-1]
    names = R.EQ_KEY_NAMES.findall(rs) if eq else []
    if colon:
        names += R.COLON_KEY_NAMES.findall(rs)
    for name in names:
        hit = _KEY_NAMES.get(name)
        if hit is None:
            hit = _holds_keyword(_KEY_NAMES, name, _REVERSED_KEYWORDS)
        if hit:
            return True
    return False
