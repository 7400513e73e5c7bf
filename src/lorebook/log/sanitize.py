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
and operators before any regex runs: ``_mapping``/``_sequence`` inline the first triage
(``bytes.translate`` to character classes: all blank means plain), ``S.families`` is the
second (which rule families can match at all), and ``S.find_spans`` runs only those, each
from positions that C string search found (``re`` walks a character class at ~10 ns/char).
"""

from __future__ import annotations

import enum
import os
import re
from collections.abc import Iterable, Mapping

from . import secret_patterns as P
from . import secret_scan as S

# `dataclasses` (it imports `inspect`) and `typing` cost ~18 ms to import here, more than the
# whole rest of `lore log`; the append path needs neither, so both stay out of it: names for
# type checkers only, and Finding is made on first use (see __getattr__ below).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from dataclasses import dataclass
    from typing import Any

    @dataclass(frozen=True)
    class Finding:
        """One thing sanitize() would redact: where it is and which rule fired (never the
        value)."""

        path: str  # JSON path like "context.env.API_KEY", "error" or "context.cmd[2]"
        kind: str  # rule name: "github_token", "secret_key_name", "email", "high_entropy"


REDACTED = "[REDACTED]"
CYCLE = "[CYCLE]"
TOO_DEEP = "[TRUNCATED: nested too deep]"
HUGE_INT = "[TRUNCATED: integer too large]"

_MARK = "[REDACTED"
_BIG = 1 << 13000  # ints beyond ~3900 digits cannot be printed under Python's default limit
_NUMBER_TEXTS = frozenset({"NaN", "Infinity", "-Infinity", HUGE_INT})
_SECRET = P.SECRET  # the flag of a secret-named key (see P.name_info)
_KeyInfo = tuple[str, int, tuple[str, ...]]  # clean key, flags, kinds redacted inside the key
_Found = list[tuple[str, str]]  # (path, kind) of each redaction, collected by findings()


def marker(kind: str) -> str:
    """The in-string replacement for one redacted span, e.g. ``[REDACTED:aws_access_key]``."""
    return f"[REDACTED:{kind}]"


def _finding_class() -> type[Finding]:
    """The Finding dataclass (as declared above), made and kept on first use."""
    cls = globals().get("Finding")
    if cls is None:
        import dataclasses

        fields = [("path", str), ("kind", str)]
        cls = dataclasses.make_dataclass("Finding", fields, frozen=True)
        cls.__module__ = __name__
        cls.__doc__ = "One thing sanitize() would redact: where it is and which rule fired."
        globals()["Finding"] = cls
    return cls


def __getattr__(name: str) -> Any:
    """PEP 562: `from lorebook.log.sanitize import Finding` makes the class when first asked."""
    if name == "Finding":
        return _finding_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
        return not S.harmless_value(flags, x)
    return not (isinstance(x, (dict, list, tuple, set, frozenset)) and not x)


class Sanitizer:
    """Redacts secrets and PII; construct one per store (its caches are per instance)."""

    def __init__(
        self,
        extra_secret_keys: Iterable[str] = (),
        extra_patterns: Mapping[str, str] = {},
        max_value_chars: int = 1000,
        max_depth: int = 20,
    ) -> None:
        """`extra_secret_keys` name more secrets (a key matches when its normalised words end
        with the extra name's words: "vault_pass" matches "MY_VAULT_PASS"); `extra_patterns`
        maps a kind to a regex whose match (or group 1, when it has groups) is redacted."""
        self._extra_keys = tuple(w for w in (P.key_words(str(k)) for k in extra_secret_keys) if w)
        self._extra = tuple((str(kind), re.compile(rx)) for kind, rx in extra_patterns.items())
        self._maxc = max(int(max_value_chars), 0)
        self._max_depth = max(int(max_depth), 0)
        self._window = 2 * self._maxc + 8192  # longer strings are only scanned this far
        # ASCII strings up to this long are returned as they are (0 when extra patterns exist:
        # those can match anything)
        self._plain_max = 0 if self._extra else self._maxc
        self._short = min(6, self._plain_max + 1)  # < 6 chars: nothing to find
        self._names: dict[str, tuple[int, str]] = {}
        self._plain_keys: dict[str, str] = {}  # ordinary key -> its text (usually itself)
        self._special_keys: dict[str, _KeyInfo] = {}
        # strings (<= 512 chars) that passed the second triage: commands, paths, branch names
        # repeat a lot in a log, and the second triage is the costly part of a harmless one
        self._harmless: set[str] = set()

    # -- public API ------------------------------------------------------------------------
    def sanitize(self, value: Any, path: str = "") -> tuple[Any, int]:
        """Return a JSON-safe deep copy with secrets/PII redacted and long strings truncated,
        plus the number of redactions.  `path` says where the value sits: when its last part
        is a secret-named key, the value is treated as if it sat under that key in a dict."""
        return self._top(value, path, None)

    def findings(self, value: Any, path: str = "") -> list[Finding]:
        """What sanitize() would redact, without the secret values (for `lore check`)."""
        found: _Found = []
        self._top(value, path, found)
        finding = _finding_class()
        return [finding(where, kind) for where, kind in found]

    def redact_text(self, text: str) -> tuple[str, int]:
        """Redact secrets/PII inside free text, keeping the surrounding text (no truncation)."""
        try:
            s = P.R.SURROGATE.sub("\ufffd", text if isinstance(text, str) else str(text))
            out, kinds = self._redact(s, s.encode(), S.F_ALL)
        except Exception:  # never raise on the write path
            return REDACTED, 1
        return out, len(kinds)

    # -- walking ---------------------------------------------------------------------------
    def _top(self, value: Any, path: str, found: _Found | None) -> tuple[Any, int]:
        if len(self._harmless) > 4096:  # bounded: forget and relearn
            self._harmless.clear()
        try:
            path = path if isinstance(path, str) else ""
            last = path.rsplit(".", 1)[-1]
            if last and not last.endswith("]"):
                flags = self._name(last)[0]
                if flags & _SECRET and _value_is_secret(value, flags):
                    if found is not None:
                        found.append((path, "secret_key_name"))
                    return REDACTED, 1
            return self._walk(value, 0, set(), path if found is not None else None, found)
        except RecursionError:
            return TOO_DEEP, 0
        except Exception:  # e.g. a dict mutated by another thread while we iterate it
            return f"[UNSERIALIZABLE {type(value).__name__}]", 0

    def _walk(
        self, v: Any, depth: int, active: set[int], path: str | None, found: _Found | None
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

    # The two loops below inline the scalars and the first triage of a string, because here a
    # Python call costs as much as the whole triage of a plain string.  The triage maps the
    # UTF-8 to classes (P.CLS): all blank (lower-case words, paths, punctuation) is plain, and
    # so is a short string with fewer than 8 digits/capitals and nothing else; "--" needs a
    # look.  What fails goes to S.families, then (rarely) to _scan.
    def _mapping(
        self,
        v: Any,
        d: Mapping[Any, Any],
        depth: int,
        active: set[int],
        path: str | None,
        found: _Found | None,
    ) -> tuple[Any, int]:
        if depth >= self._max_depth:
            return TOO_DEEP, 0
        vid = id(v)
        if vid in active:
            return CYCLE, 0
        active.add(vid)
        out: dict[str, Any] = {}
        n = 0
        plain_keys = self._plain_keys
        harmless = self._harmless
        short = self._short
        plain_max = self._plain_max
        keyed = bool(self._extra_keys)
        cls = P.CLS
        big = _BIG
        for k, x in d.items():
            try:
                ck = plain_keys[k]  # only str keys are cached, and no str equals a non-str
            except KeyError:
                ck, flags, kinds = self._key(k)
                if kinds:
                    n += len(kinds)
                    if found is not None:
                        found.extend((_join(path or "", ck), kind) for kind in kinds)
                if flags & _SECRET and _value_is_secret(x, flags):
                    out[ck] = REDACTED
                    n += 1
                    if found is not None:
                        found.append((_join(path or "", ck), "secret_key_name"))
                    continue
            tx = type(x)
            if tx is str:
                lx = len(x)
                if lx <= plain_max and x.isascii():
                    if lx < short or x in harmless:  # too short, or seen before
                        out[ck] = x
                        continue
                    b = x.encode()
                    c = b.translate(cls)
                    if "--" not in x and (
                        c.isspace()
                        or (lx < 20 and len(r := c.replace(b" ", b"")) < 8 and r.isalnum())
                    ):
                        out[ck] = x
                        continue
                    fams = S.families(x, b, keyed)
                    if not fams:
                        if lx <= 512:
                            harmless.add(x)
                        out[ck] = x
                        continue
                    y, m = self._scan(x, b, fams, None if path is None else _join(path, ck), found)
                    if y is x and lx <= 512:  # nothing found after all: remember that too
                        harmless.add(x)
                else:
                    y, m = self._text(x, None if path is None else _join(path, ck), found)
            elif tx is int:
                out[ck] = x if -big < x < big else HUGE_INT
                continue
            elif x is None or tx is bool or (tx is float and x - x == 0.0):
                out[ck] = x
                continue
            elif tx is dict:
                y, m = self._mapping(
                    x, x, depth + 1, active, None if path is None else _join(path, ck), found
                )
            elif tx is list:
                y, m = self._sequence(
                    x, x, depth + 1, active, None if path is None else _join(path, ck), found
                )
            else:
                y, m = self._walk(
                    x, depth + 1, active, None if path is None else _join(path, ck), found
                )
            out[ck] = y
            n += m
        active.discard(vid)
        return out, n

    def _sequence(
        self,
        v: Any,
        items: Iterable[Any],
        depth: int,
        active: set[int],
        path: str | None,
        found: _Found | None,
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
        harmless = self._harmless
        short = self._short
        plain_max = self._plain_max
        keyed = bool(self._extra_keys)
        cls = P.CLS
        big = _BIG
        for i, x in enumerate(items):
            tx = type(x)
            if tx is str:
                lx = len(x)
                if lx <= plain_max and x.isascii():
                    if lx < short or x in harmless:  # too short, or seen before
                        append(x)
                        continue
                    b = x.encode()
                    c = b.translate(cls)
                    if "--" not in x and (
                        c.isspace()
                        or (lx < 20 and len(r := c.replace(b" ", b"")) < 8 and r.isalnum())
                    ):
                        append(x)
                        continue
                    fams = S.families(x, b, keyed)
                    if not fams:
                        if lx <= 512:
                            harmless.add(x)
                        append(x)
                        continue
                    y, m = self._scan(x, b, fams, None if path is None else f"{path}[{i}]", found)
                    if y is x and lx <= 512:  # nothing found after all: remember that too
                        harmless.add(x)
                else:
                    y, m = self._text(x, None if path is None else f"{path}[{i}]", found)
            elif tx is int:
                append(x if -big < x < big else HUGE_INT)
                continue
            elif x is None or tx is bool or (tx is float and x - x == 0.0):
                append(x)
                continue
            else:
                y, m = self._walk(
                    x, depth + 1, active, None if path is None else f"{path}[{i}]", found
                )
            append(y)
            n += m
        active.discard(vid)
        return out, n

    def _other(
        self, v: Any, depth: int, active: set[int], path: str | None, found: _Found | None
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
        """(clean key, flags, kinds redacted inside the key) for a key not in the plain cache;
        str keys are cached, ordinary ones in the plain cache the loop looks up first."""
        if type(k) is str:
            info = self._special_keys.get(k)
            if info is not None:
                return info
            s = k
        elif isinstance(k, str):
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
        hits: _Found = []
        clean, _ = self._text(s, "", hits)
        kinds = tuple(kind for _, kind in hits)
        flags = self._name(clean)[0]
        if type(k) is str:
            if len(self._plain_keys) + len(self._special_keys) >= 4096:
                self._plain_keys.clear()
                self._special_keys.clear()
            if flags & _SECRET or kinds:
                self._special_keys[k] = (clean, flags, kinds)
            else:
                self._plain_keys[k] = clean
        return clean, flags, kinds

    def _name(self, key: str) -> tuple[int, str]:
        """(flags, kind for an in-text assignment) for a key or variable name; cached."""
        info = self._names.get(key)
        if info is None:
            info = P.name_info(P.R.MARKER.sub(" ", key), self._extra_keys)
            if len(self._names) >= 4096:
                self._names.clear()
            self._names[key] = info
        return info

    # -- strings ---------------------------------------------------------------------------
    def _text(self, s: str, path: str | None, found: _Found | None) -> tuple[str, int]:
        """Redact and fit any string (the loops handle short and plain ASCII ones inline)."""
        if s.isascii():
            if len(s) < self._short:
                return s, 0
        elif P.R.SURROGATE.search(s) is not None:
            s = P.R.SURROGATE.sub("\ufffd", s)
        full = len(s)
        if full > self._window:
            s = s[: self._window]
        tail = ""
        if "…" in s and full == len(s) and s.endswith(" chars]"):
            i = s.rfind("…[TRUNCATED ")
            if 0 <= i <= self._maxc and P.R.TRUNC_TAIL.match(s, i):
                # our own earlier cut: scan the kept text only, so a second pass is a no-op
                s, tail = s[:i], s[i:]
        b = s.encode()
        c = b.translate(P.CLS)
        if c.isspace() and "--" not in s and not self._extra:
            fams = 0
        else:
            fams = S.families(s, b, bool(self._extra_keys))
        if not fams and not self._extra:
            if tail or full <= self._maxc:
                return s + tail, 0
            if full == len(s):  # a prefix of a plain string is plain: no rescan needed
                return f"{s[: self._maxc]}…[TRUNCATED {full - self._maxc} chars]", 0
        return self._scan(s, b, fams, path, found, full - len(s), tail)

    def _scan(
        self,
        s: str,
        b: bytes,
        fams: int,
        path: str | None,
        found: _Found | None,
        dropped: int = 0,
        tail: str = "",
    ) -> tuple[str, int]:
        """Redact the rule `fams` found in `s` (`b` its UTF-8), then fit it; `dropped`
        characters past the scan window were already cut off, `tail` is our own earlier
        truncation marker."""
        out, kinds = self._redact(s, b, fams) if fams or self._extra else (s, [])
        if tail and len(out) <= self._maxc:
            out += tail
        elif len(out) > self._maxc or dropped:
            out = self._fit(out, dropped, kinds)
        if kinds and found is not None:
            found.extend((path or "", kind) for kind in kinds)
        return out, len(kinds)

    def _fit(self, s: str, dropped: int, kinds: list[str]) -> str:
        """Cut to max_value_chars plus a visible marker, never inside a redaction marker.

        The kept text is scanned again: a cut can change what its end looks like
        ("Authorization: Bearer <cut>"), and sanitize() must be idempotent.  What that finds
        is redacted too and appended to `kinds`."""
        keyed = bool(self._extra_keys)
        for _ in range(4):
            cut = min(self._maxc, len(s))
            i = s.rfind("[", max(0, cut - 200), cut)  # markers hold no "[" inside
            if i >= 0 and s.startswith(_MARK, i) and s.find("]", i) >= cut:
                cut = i
            body = s[:cut]
            b = body.encode()
            fams = S.families(body, b, keyed)
            if not (fams or self._extra):
                break
            again, more = self._redact(body, b, fams)
            if not more:
                break
            kinds.extend(more)
            s = again + s[cut:]
        return f"{body}…[TRUNCATED {len(s) - cut + dropped} chars]"

    def _redact(self, s: str, b: bytes, fams: int) -> tuple[str, list[str]]:
        """Replace every secret of the rule families `fams` in `s` (`b` its UTF-8)."""
        found: list[S.Span] = []
        S.find_spans(s, b, fams, self._name, self._extra, found.append)
        return S.apply_spans(s, found) if found else (s, [])
