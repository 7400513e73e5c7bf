"""Redact secrets and PII from everything an agent logs, before it touches disk.

Every write path runs its values through :class:`Sanitizer`.  It returns a JSON-safe deep copy
in which secret-named keys have their whole value replaced by ``[REDACTED]``, and secrets or PII
inside strings are replaced by ``[REDACTED:<kind>]`` markers, keeping the surrounding text.

The pattern set (in :mod:`lorebook.log.secret_patterns`) follows the gitleaks/detect-secrets
rule families - provider token formats, keyword assignments, URL credentials, private-key
blocks, high-entropy strings - plus PII (emails, phones, Luhn-checked cards, SSNs).  It is
written in-house because the append path must stay stdlib-only: those packages cost 50-90 ms
of imports, this module a few ms (its regexes compile on first use).

It is also on the hot path (>= 20k appends/s), so each string is triaged with a few C calls
(``bytes.translate`` to character classes, then ``in`` checks) and only the rule families that
can possibly match it are run: see ``_mapping`` (first triage, inlined), ``_families`` (second)
and ``_spans`` (a trigger per family).
"""

from __future__ import annotations

import enum
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from . import secret_patterns as P

REDACTED = "[REDACTED]"
CYCLE = "[CYCLE]"
TOO_DEEP = "[TRUNCATED: nested too deep]"
HUGE_INT = "[TRUNCATED: integer too large]"

_MARK = "[REDACTED"
_BIG = 1 << 13000  # ints beyond ~3900 digits cannot be printed under Python's default limit
_NUMBER_TEXTS = frozenset({"NaN", "Infinity", "-Infinity", HUGE_INT})
_PLACEHOLDERS = frozenset({"null", "none", "nil", "true", "false", "undefined", "''", '""'})

# flags of a key / variable name
_SECRET = 1  # names a secret: its whole value is redacted
_PASSWORD = 2  # a number can still be a password
_PWD = 4  # "PWD" is also the working directory: a path value is not a secret
_AUTH = 8  # "Authorization: Bearer x" keeps its scheme word

# rule families that a string's triage lets through
_F_DASH = 1  # "--": command-line flags, PEM blocks
_F_AT = 2  # "@": emails, URL credentials
_F_ASSIGN = 4  # "=" / ":" after a word: KEY=value, "key": "value", Authorization: ...
_F_DIGITS = 8  # phone / SSN / card shaped digits
_F_LONG = 16  # a run of >= 20 token characters, not just hex: tokens, JWTs, "Bearer x"
_F_ALL = 31

# (start, priority, end, kind): a lower priority wins when spans overlap
_Span = tuple[int, int, int, str]
_Add = Callable[[_Span], None]
_KeyInfo = tuple[str, int, tuple[str, ...]]  # clean key, flags, kinds redacted inside the key


def marker(kind: str) -> str:
    """The in-string replacement for one redacted span, e.g. ``[REDACTED:aws_access_key]``."""
    return f"[REDACTED:{kind}]"


@dataclass(frozen=True)
class Finding:
    """One thing sanitize() would redact: where it is and which rule fired (never the value)."""

    path: str  # JSON path like "context.env.API_KEY", "error" or "context.cmd[2]"
    kind: str  # rule name: "github_token", "secret_key_name", "email", "high_entropy", ...


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _float_text(v: float) -> str:
    return "NaN" if v != v else ("Infinity" if v > 0 else "-Infinity")


def _value_is_secret(x: Any, flags: int) -> bool:
    """Whether a value under a secret-named key is replaced whole (numbers never are)."""
    if x is None or isinstance(x, (bool, int, float)):
        return False
    if isinstance(x, str):
        if not x or x.startswith(_MARK) or x in _NUMBER_TEXTS:
            return False  # empty, already redacted, or a number we turned into text
        return not (flags & _PWD and P.PATHLIKE.match(x))
    return not (isinstance(x, (dict, list, tuple, set, frozenset)) and not x)


def _families(s: str, b: bytes, c: bytes) -> int:
    """Second triage (`b` is `s` as UTF-8, `c` mapped to classes): which rule families can
    match at all?  Most strings that failed the first triage ("agent-5", a commit message, an
    ISO timestamp, a commit hash) end here with 0.

    Only operators and a few C calls: on this path a str method call costs as much as
    several `in` tests, and ``re`` walks a character class at ~10 ns/char, so the patterns
    run later and only where these checks point."""
    cs = c.decode()  # "0" digit, "A" capital, "=" any of "@=:", "~" non-ASCII, " " the rest
    fams = _F_DASH if "--" in s else 0
    if "=" in cs:
        if "@" in s:
            fams |= _F_AT
        if "=" in cs.replace("0=0", "") and _separators(s):  # "07:05:00" is no assignment
            fams |= _F_ASSIGN
    if ("000 0000" in cs or "000 00 0000" in cs or "0000000000000" in cs
            or ("+" in s and "+0" in b.translate(P.DIG).decode())):  # phone, SSN, card shapes
        fams |= _F_DIGITS
    if (len(s) >= 20 and ("0" in cs or "A" in cs) and s.strip(P.HEX_CHARS)
            and P.RUN_MIN in b.translate(P.RUN_MAP).decode()):
        fams |= _F_LONG  # a long run of token characters that is not just a digest
    return fams


def _separators(s: str) -> list[int]:
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


class Sanitizer:
    """Redacts secrets and PII; construct one per store (its caches are per instance)."""

    def __init__(
        self,
        extra_secret_keys: Iterable[str] = (),
        extra_patterns: Mapping[str, str] = {},  # noqa: B006 - read-only, never mutated
        max_value_chars: int = 1000,
        max_depth: int = 20,
    ) -> None:
        """`extra_secret_keys` name more secrets (a key matches when its normalised words end
        with the extra name's words: "vault_pass" matches "MY_VAULT_PASS"); `extra_patterns`
        maps a kind to a regex whose match (or group 1, when it has groups) is redacted."""
        self._extra_keys = tuple(w for w in (P.key_words(str(k)) for k in extra_secret_keys) if w)
        self._extra = tuple((str(kind), re.compile(rx)) for kind, rx in extra_patterns.items())
        self._plain_ok = not self._extra  # a plain string needs no scan at all
        self._maxc = max(int(max_value_chars), 0)
        self._short_ok = self._plain_ok and self._maxc >= 5  # < 6 chars: nothing to find
        self._max_depth = max(int(max_depth), 0)
        self._window = 2 * self._maxc + 8192  # longer strings are only scanned this far
        self._names: dict[str, tuple[int, str]] = {}
        self._keys: dict[str, str | _KeyInfo] = {}

    # -- public API ------------------------------------------------------------------------
    def sanitize(self, value: Any, path: str = "") -> tuple[Any, int]:
        """Return a JSON-safe deep copy with secrets/PII redacted and long strings truncated,
        plus the number of redactions.  `path` says where the value sits: when its last part
        is a secret-named key, the value is treated as if it sat under that key in a dict."""
        return self._top(value, path, None)

    def findings(self, value: Any, path: str = "") -> list[Finding]:
        """What sanitize() would redact, without the secret values (for `lore check`)."""
        found: list[Finding] = []
        self._top(value, path, found)
        return found

    def redact_text(self, text: str) -> tuple[str, int]:
        """Redact secrets/PII inside free text, keeping the surrounding text (no truncation)."""
        try:
            s = P.SURROGATE.sub("\ufffd", text if isinstance(text, str) else str(text))
            out, kinds = self._redact(s, s.encode(), _F_ALL)
        except Exception:  # never raise on the write path
            return REDACTED, 1
        return out, len(kinds)

    # -- walking ---------------------------------------------------------------------------
    def _top(self, value: Any, path: str, found: list[Finding] | None) -> tuple[Any, int]:
        try:
            last = path.rsplit(".", 1)[-1] if isinstance(path, str) else ""
            if last and not last.endswith("]"):
                flags = self._name(last)[0]
                if flags & _SECRET and _value_is_secret(value, flags):
                    if found is not None:
                        found.append(Finding(path, "secret_key_name"))
                    return REDACTED, 1
            return self._walk(value, 0, set(), path if found is not None else None, found)
        except RecursionError:
            return TOO_DEEP, 0
        except Exception:  # e.g. a dict mutated by another thread while we iterate it
            return f"[UNSERIALIZABLE {type(value).__name__}]", 0

    def _walk(
        self, v: Any, depth: int, active: set[int], path: str | None, found: list[Finding] | None
    ) -> tuple[Any, int]:
        t = type(v)
        if t is str:
            return self._text(v, path, found)
        if v is None or t is bool:
            return v, 0
        if t is int:
            return (v, 0) if -_BIG < v < _BIG else (HUGE_INT, 0)
        if t is float:
            return (v, 0) if v - v == 0.0 else (_float_text(v), 0)
        if t is dict:
            return self._mapping(v, v, depth, active, path, found)
        if t is list or t is tuple:
            return self._sequence(v, v, depth, active, path, found)
        return self._other(v, depth, active, path, found)

    # The two loops below inline the first triage of a string and the scalars: a Python call
    # costs as much as the whole triage of a plain string.  The triage: map the UTF-8 to
    # classes (P.CLS); all blanks (lower-case words, paths, punctuation) is plain, and so is a
    # short string with fewer than 8 digits/capitals and nothing else; "--" needs a look.
    def _mapping(
        self, v: Any, d: Mapping[Any, Any], depth: int, active: set[int], path: str | None,
        found: list[Finding] | None,
    ) -> tuple[Any, int]:
        if depth >= self._max_depth:
            return TOO_DEEP, 0
        vid = id(v)
        if vid in active:
            return CYCLE, 0
        active.add(vid)
        out: dict[str, Any] = {}
        n = 0
        keys = self._keys
        short_ok = self._short_ok
        plain_ok = self._plain_ok
        maxc = self._maxc
        cls = P.CLS
        big = _BIG
        for k, x in d.items():
            ck = keys.get(k)  # only str keys are cached, and no str equals a non-str
            if type(ck) is not str:
                ck, flags, kinds = self._key(k) if ck is None else ck
                if kinds:
                    n += len(kinds)
                    if found is not None:
                        found.extend(Finding(_join(path, ck), kind) for kind in kinds)
                if flags & _SECRET and _value_is_secret(x, flags):
                    out[ck] = REDACTED
                    n += 1
                    if found is not None:
                        found.append(Finding(_join(path, ck), "secret_key_name"))
                    continue
            tx = type(x)
            if tx is str:
                lx = len(x)
                if lx < 6 and short_ok and x.isascii():
                    out[ck] = x
                    continue
                if plain_ok and lx <= maxc and x.isascii():
                    c = x.encode().translate(cls)
                    if (c.isspace() or (lx < 20 and (r := c.replace(b" ", b"")).isalnum()
                                        and len(r) < 8)) and "--" not in x:
                        out[ck] = x
                        continue
                    y, m = self._scan(x, c, None if path is None else _join(path, ck), found)
                else:
                    y, m = self._text(x, None if path is None else _join(path, ck), found)
            elif tx is int:
                out[ck] = x if -big < x < big else HUGE_INT
                continue
            elif x is None or tx is bool or (tx is float and x - x == 0.0):
                out[ck] = x
                continue
            elif tx is dict:
                y, m = self._mapping(x, x, depth + 1, active,
                                     None if path is None else _join(path, ck), found)
            elif tx is list:
                y, m = self._sequence(x, x, depth + 1, active,
                                      None if path is None else _join(path, ck), found)
            else:
                y, m = self._walk(x, depth + 1, active,
                                  None if path is None else _join(path, ck), found)
            out[ck] = y
            n += m
        active.discard(vid)
        return out, n

    def _sequence(
        self, v: Any, items: Iterable[Any], depth: int, active: set[int], path: str | None,
        found: list[Finding] | None,
    ) -> tuple[Any, int]:
        if depth >= self._max_depth:
            return TOO_DEEP, 0
        vid = id(v)
        if vid in active:
            return CYCLE, 0
        active.add(vid)
        out: list[Any] = []
        append = out.append
        n = 0
        short_ok = self._short_ok
        plain_ok = self._plain_ok
        maxc = self._maxc
        cls = P.CLS
        big = _BIG
        for i, x in enumerate(items):
            tx = type(x)
            if tx is str:
                lx = len(x)
                if lx < 6 and short_ok and x.isascii():
                    append(x)
                    continue
                if plain_ok and lx <= maxc and x.isascii():
                    c = x.encode().translate(cls)
                    if (c.isspace() or (lx < 20 and (r := c.replace(b" ", b"")).isalnum()
                                        and len(r) < 8)) and "--" not in x:
                        append(x)
                        continue
                    y, m = self._scan(x, c, None if path is None else f"{path}[{i}]", found)
                else:
                    y, m = self._text(x, None if path is None else f"{path}[{i}]", found)
            elif tx is int:
                append(x if -big < x < big else HUGE_INT)
                continue
            elif x is None or tx is bool or (tx is float and x - x == 0.0):
                append(x)
                continue
            else:
                y, m = self._walk(x, depth + 1, active, None if path is None else f"{path}[{i}]",
                                  found)
            append(y)
            n += m
        active.discard(vid)
        return out, n

    def _other(
        self, v: Any, depth: int, active: set[int], path: str | None, found: list[Finding] | None
    ) -> tuple[Any, int]:
        """Everything that is not plain JSON: convert it to the nearest JSON value."""
        try:
            if isinstance(v, str):
                return self._text(str.__str__(v), path, found)
            if isinstance(v, enum.Enum):
                return self._walk(v.value, depth + 1, active, path, found)
            if isinstance(v, int):
                return self._walk(int(v), depth, active, path, found)
            if isinstance(v, float):
                return self._walk(float(v), depth, active, path, found)
            if isinstance(v, (bytes, bytearray, memoryview)):
                return self._text(bytes(v).decode("utf-8", "replace"), path, found)
            if isinstance(v, Mapping):
                return self._mapping(v, v, depth, active, path, found)
            if isinstance(v, (list, tuple)):
                return self._sequence(v, v, depth, active, path, found)
            if isinstance(v, (set, frozenset)):
                try:
                    items = sorted(v, key=repr)
                except Exception:
                    items = list(v)
                return self._sequence(v, items, depth, active, path, found)
            if isinstance(v, os.PathLike):
                p = os.fspath(v)
                text = p if isinstance(p, str) else p.decode("utf-8", "replace")
                return self._text(text, path, found)
            iso = getattr(v, "isoformat", None)  # datetime, date, time (and look-alikes)
            if callable(iso):
                text = iso()
                if isinstance(text, str):
                    return self._text(text, path, found)
            return self._text(str(v), path, found)
        except RecursionError:
            raise
        except Exception:
            return f"[UNSERIALIZABLE {type(v).__name__}]", 0

    # -- keys ------------------------------------------------------------------------------
    def _key(self, k: Any) -> _KeyInfo:
        """(clean key, flags, kinds redacted inside the key); cached for str keys, as just the
        clean key when it is an ordinary one (the common case the loop checks first)."""
        if isinstance(k, str):
            s = str.__str__(k)
        elif k is None or isinstance(k, bool):
            s = "null" if k is None else ("true" if k else "false")
        elif isinstance(k, float):
            s = repr(float(k)) if k - k == 0.0 else _float_text(k)
        else:
            try:
                s = str(k) if not isinstance(k, int) or -_BIG < k < _BIG else HUGE_INT
            except Exception:
                s = f"[UNSERIALIZABLE {type(k).__name__}]"
        hits: list[Finding] = []
        clean, _ = self._text(s, "", hits)
        kinds = tuple(f.kind for f in hits)
        flags = self._name(clean)[0]
        if type(k) is str:
            if len(self._keys) >= 4096:
                self._keys.clear()
            self._keys[k] = clean if not (flags & _SECRET or kinds) else (clean, flags, kinds)
        return clean, flags, kinds

    def _name(self, key: str) -> tuple[int, str]:
        """(flags, kind for an in-text assignment) for a key or variable name; cached."""
        info = self._names.get(key)
        if info is None:
            words = P.key_words(P.MARKER.sub(" ", key))
            flags = 0
            if P.builtin_secret_name(words) or any(
                words[-len(extra):] == extra for extra in self._extra_keys
            ):
                flags |= _SECRET
            if {"password", "passwd", "pwd", "passphrase", "passwords"}.intersection(words):
                flags |= _PASSWORD
            if words == ("pwd",):
                flags |= _PWD
            joined = "".join(words)
            kind = "secret_assignment"
            if joined.endswith("authorization"):
                flags |= _AUTH
                kind = "authorization"
            elif joined == "awssecretaccesskey":
                kind = "aws_secret_key"
            info = (flags, kind)
            if len(self._names) >= 4096:
                self._names.clear()
            self._names[key] = info
        return info

    # -- strings ---------------------------------------------------------------------------
    def _text(self, s: str, path: str | None, found: list[Finding] | None) -> tuple[str, int]:
        """Redact and fit any string (the loops handle plain ASCII ones themselves)."""
        if s.isascii():
            if len(s) < 6 and len(s) <= self._maxc:
                return s, 0
        elif P.SURROGATE.search(s) is not None:
            s = P.SURROGATE.sub("\ufffd", s)
        full = len(s)
        if full > self._window:
            s = s[: self._window]
        c = s.encode().translate(P.CLS)
        if c.isspace() and "--" not in s and self._plain_ok:
            if full > self._maxc:  # a prefix of a plain string is plain: no rescan needed
                return f"{s[: self._maxc]}…[TRUNCATED {full - self._maxc} chars]", 0
            return s, 0
        return self._scan(s, c, path, found, full - len(s))

    def _scan(
        self, s: str, c: bytes, path: str | None, found: list[Finding] | None, dropped: int = 0
    ) -> tuple[str, int]:
        """Redact a string that failed the first triage (`c` its classes), then fit it;
        `dropped` characters past the scan window were already cut off."""
        tail = ""
        if "…" in s and not dropped and s.endswith(" chars]"):
            i = s.rfind("…[TRUNCATED ")
            if 0 <= i <= self._maxc and P.TRUNC_TAIL.match(s, i):
                # our own earlier cut: scan the kept text only, so a second pass is a no-op
                s, tail = s[:i], s[i:]
                c = s.encode().translate(P.CLS)
        b = s.encode()
        fams = _families(s, b, c)
        if fams or self._extra:
            out, kinds = self._redact(s, b, fams)
        else:
            out, kinds = s, []
        if tail and len(out) <= self._maxc:
            out += tail
        elif len(out) > self._maxc or dropped:
            out = self._fit(out, dropped, kinds)
        if kinds and found is not None:
            found.extend(Finding(path or "", kind) for kind in kinds)
        return out, len(kinds)

    def _fit(self, s: str, dropped: int, kinds: list[str]) -> str:
        """Cut to max_value_chars plus a visible marker, never inside a redaction marker.

        The kept text is scanned again: a cut can change what its end looks like
        ("Authorization: Bearer <cut>"), and sanitize() must be idempotent.  What that finds
        is redacted too and appended to `kinds`."""
        for _ in range(4):
            cut = min(self._maxc, len(s))
            i = s.rfind("[", max(0, cut - 200), cut)  # markers hold no "[" inside
            if i >= 0 and s.startswith(_MARK, i) and s.find("]", i) >= cut:
                cut = i
            body = s[:cut]
            b = body.encode()
            fams = _families(body, b, b.translate(P.CLS))
            if not (fams or self._extra):
                break
            again, more = self._redact(body, b, fams)
            if not more:
                break
            kinds.extend(more)
            s = again + s[cut:]
        return f"{body}…[TRUNCATED {len(s) - cut + dropped} chars]"

    def _redact(self, s: str, b: bytes, fams: int) -> tuple[str, list[str]]:
        """Replace every detected span of `s` (`b` its UTF-8) by its marker."""
        found: list[_Span] = []
        self._spans(s, b, fams, found.append)
        if not found:
            return s, []
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

    def _spans(self, s: str, b: bytes, fams: int, add: _Add) -> None:
        """Run the rule families that the triage let through."""
        if fams & _F_DASH:
            if "-----BEGIN" in s:
                for m in P.PEM.finditer(s):
                    add((m.start(), 0, m.end(), "private_key"))
            for m in P.FLAG.finditer(s):  # a literal prefix: re searches it in C
                self._flag(m, add)
        if fams & _F_AT:
            if "://" in s:
                for m in P.URL_CRED.finditer(s):
                    if _plausible_value(m.group(1)):
                        add((m.start(1), 1, m.end(1), "url_password"))
            _emails(s, add)
        if fams & _F_ASSIGN:
            self._assignments(s, add)
        if fams & _F_DIGITS:
            _pii(s, add)
        if fams & _F_LONG:
            # every token below has a run of >= 20 token characters (a JWT's payload, a
            # SendGrid key's tail, a webhook's path, a real bearer token)
            _tokens(s, b, add)
            if "eyJ" in s:
                for m in P.JWT.finditer(s):
                    add((m.start(), 0, m.end(), "jwt"))
            if "SG." in s:
                for m in P.SENDGRID.finditer(s):
                    add((m.start(), 0, m.end(), "sendgrid_key"))
            if "hooks.slack.com/services/" in s:
                for m in P.SLACK_WEBHOOK.finditer(s):
                    add((m.start(1), 0, m.end(1), "slack_webhook"))
            if "earer" in s or "EARER" in s:
                for m in P.BEARER.finditer(s):
                    tok = m.group(1)
                    if not (tok.isalpha() and len(tok) < 24):  # "Bearer authentication"
                        add((m.start(1), 1, m.end(1), "bearer_token"))
        for kind, rx in self._extra:
            for m in rx.finditer(s):
                g = 1 if rx.groups else 0
                start, end = m.span(g)
                if 0 <= start < end and not s.startswith(_MARK, start):
                    add((start, 0, end, kind))

    def _assignments(self, s: str, add: _Add) -> None:
        """`KEY=value` / `KEY: value` / `"key": "value"` with a secret-named KEY.

        Keys are read backwards from each separator (an anchored match on the reversed
        string), then classified by the cached name rules."""
        rs = s[::-1]
        last = len(s) - 1
        for sep in _separators(s):
            m = P.REV_ASSIGN.match(rs, last - sep)
            if m is None:
                continue
            flags, kind = self._name(m.group(1)[::-1])
            if not flags & _SECRET:
                continue
            v = (P.VALUE_EQ if s[sep] == "=" else P.VALUE_COLON).match(s, sep + 1)
            if v is None:
                continue
            start, end = _unquote(v.group(1), *v.span(1))
            value = s[start:end]
            if flags & _AUTH:
                scheme, _, cred = value.partition(" ")
                if scheme.lower() in P.AUTH_SCHEMES and cred.strip():
                    start = end - len(cred.lstrip())
                    value = s[start:end]
            if flags & _PWD and P.PATHLIKE.match(value):
                continue
            if _plausible_value(value, numeric_ok=not flags & _PASSWORD):
                add((start, 2, end, kind))

    def _flag(self, m: re.Match[str], add: _Add) -> None:
        """`--password value` / `--token=value` with a secret-named flag."""
        flags, kind = self._name(m.group(1))
        if not flags & _SECRET or (m.group(2) != "=" and m.group(3).startswith("-")):
            return
        start, end = _unquote(m.group(3), *m.span(3))
        if _plausible_value(m.string[start:end], numeric_ok=not flags & _PASSWORD):
            add((start, 2, end, kind))


def _unquote(value: str, start: int, end: int) -> tuple[int, int]:
    """The span of a value without its quotes (so the JSON/shell syntax around stays)."""
    if value.startswith('\\"') and len(value) >= 4:
        return start + 2, end - 2
    if value[:1] in ("'", '"') and len(value) >= 2:
        return start + 1, end - 1
    return start, end


def _plausible_value(value: str, numeric_ok: bool = True) -> bool:
    """Whether an assigned value can be a real secret (not a placeholder or a marker)."""
    if not value or value.startswith(_MARK) or value[0] in "$<%{":
        return False  # empty, already redacted, $VAR / ${VAR} / <placeholder> / templating
    if value.lower() in _PLACEHOLDERS or value.count(value[0]) == len(value):
        return False  # null/true/..., "****", "xxxx"
    return not (numeric_ok and value.replace(".", "", 1).isdigit())


def _email_ok(s: str, start: int) -> bool:
    """Skip the user part of URL authorities (ssh://git@host, creds handled elsewhere)."""
    if s.startswith("git@", start):
        return False
    j = s.rfind("://", max(0, start - 256), start)
    return j < 0 or any(ch in s[j + 3 : start] for ch in "/ \t\n")


def _pii(s: str, add: _Add) -> None:
    """Phones, cards and SSNs: find digit blobs cheaply, then validate the precise patterns."""
    n = len(s)
    for blob in P.DIGIT_BLOB.finditer(s):
        for m in P.PII.finditer(s, blob.start(), blob.end()):
            start, end = m.span()
            if start and (s[start - 1].isalnum() or s[start - 1] in "_/\\.-@"):
                continue  # part of a path, version, hash or id
            if end < n and (s[end].isalnum() or s[end] == "_"):
                continue
            kind = P.pii_kind(m)
            if kind is not None:
                add((start, 4, end, kind))


def _emails(s: str, add: _Add) -> None:
    """Emails, found from each "@": the local part is matched backwards (reversed string)."""
    rs = s[::-1]
    last = len(s) - 1
    at = s.find("@")
    while at > 0:
        local = P.REV_LOCAL.match(rs, last - at + 1)
        domain = P.DOMAIN.match(s, at + 1)
        if local is not None and domain is not None:
            start = at - local.end() + (last - at + 1)
            if _email_ok(s, start):
                add((start, 4, domain.end(), "email"))
        at = s.find("@", at + 1)


def _tokens(s: str, b: bytes, add: _Add) -> None:
    """Provider tokens and high-entropy strings among the runs of >= 20 token characters.

    The runs are found in C on the RUN_MAP image of `s` (same offsets when `s` is ASCII);
    the TOKEN regex then only looks inside them."""
    if len(b) == len(s):
        runs = P.RUN_MAP_RUNS.finditer(b.translate(P.RUN_MAP).decode())
        spans = [m.span() for m in runs]
    else:
        spans = [(0, len(s))]
    for lo, hi in spans:
        for m in P.TOKEN.finditer(s, lo, hi):
            tok = m.group()
            if tok.startswith(("sha1-", "sha256-", "sha384-", "sha512-")):
                continue  # subresource-integrity digests (package-lock.json)
            hit = P.classify_token(tok)
            if hit is None:
                continue
            kind, length = hit
            start = m.start()
            if kind == "high_entropy" and "/" in tok:
                # keep leading path words: "com/services/<random>" -> "com/services/[...]"
                head, _, rest = tok.partition("/")
                while head.isalpha() and head.islower() and P.looks_random(rest):
                    start += len(head) + 1
                    head, _, rest = rest.partition("/")
            add((start, 3 if kind == "high_entropy" else 0, m.start() + length, kind))
