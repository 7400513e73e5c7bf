"""Redact secrets and PII from everything an agent logs, before it touches disk.

Every write path runs its values through :class:`Sanitizer`.  It returns a JSON-safe deep copy
in which secret-named keys have their whole value replaced by ``[REDACTED]``, and secrets or PII
inside strings are replaced by ``[REDACTED:<kind>]`` markers, keeping the surrounding text.

The pattern set (in :mod:`lorebook.redact.patterns`) follows the gitleaks/detect-secrets
rule families - provider token formats, keyword assignments, URL credentials, private-key
blocks, high-entropy strings - plus PII (emails, phones, Luhn-checked cards, SSNs).  It is
written in-house because the append path must stay stdlib-only: those packages cost 50-90 ms
of imports, this module a few ms (its regexes compile on first use).

It is also on the hot path (>= 20k appends/s, with a Python call costing as much as the
triage of a whole string), so sanitize() walks dicts and lists with lean loops that copy
ASCII strings as they are and triage all the strings of a container at once, joined by a
newline that no rule crosses (:meth:`S.Redactor._triage`: ``bytes.translate`` to character
classes, then ``S.families``, which rule families can match at all).  Only when that finds
something does each string get its own triage, and ``S.find_spans`` runs only the rules it
lets through, each from positions that C string search found (``re`` walks a character
class at ~10 ns/char).  findings() and unusual values (cycles, deep nesting, sets, objects)
take the full walk, one string at a time.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Iterable, Mapping, Sequence

from . import patterns as P
from . import scan as S

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
_NEG_BIG = -_BIG  # (a constant: `-_BIG` would build a 13000-bit int at every comparison)
_NUMBER_TEXTS = frozenset({"NaN", "Infinity", "-Infinity", HUGE_INT})
_SECRET = P.SECRET  # the flag of a secret-named key (see P.name_info)
_KeyInfo = tuple[str, int, tuple[str, ...]]  # clean key, flags, kinds redacted inside the key
_Found = list[tuple[str, str]]  # (path, kind) of each redaction, collected by findings()


class _Again(Exception):
    """sanitize()'s lean walk met what only the full walk handles (see Sanitizer._dict)."""


def marker(kind: str) -> str:
    """The in-string replacement for one redacted span, e.g. ``[REDACTED:aws_access_key]``."""
    return f"[REDACTED:{kind}]"


def clip(text: str, limit: int, ellipsis: str = "…") -> str:
    """Redacted `text` cut to `limit` characters (the ellipsis included), never inside a
    redaction marker: the log writer's cut.  Redact first, then clip - a prefix cut from a
    secret is half a secret that no rule recognises any more."""
    if len(text) <= limit:
        return text
    return text[: S.clip_point(text, limit - len(ellipsis))] + ellipsis


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
    """PEP 562: `from lorebook.redact.sanitize import Finding` makes the class when first asked."""
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
        return not P.harmless_value(flags, x)
    return not (isinstance(x, (dict, list, tuple, set, frozenset)) and not x)


class Sanitizer(S.Redactor):
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
        super().__init__(extra_secret_keys, extra_patterns, max_value_chars)
        self._max_depth = max(int(max_depth), 0)
        self._paths: dict[str, int] = {}  # sanitize()'s path -> flags of its last part
        self._plain_keys: dict[str, str] = {}  # ordinary key -> its text (usually itself)
        self._special_keys: dict[str, _KeyInfo] = {}
        self.plain_ids: set[str] = set()  # ids found harmless (lorebook.redact.identifiers)

    # -- public API ------------------------------------------------------------------------
    def sanitize(self, value: Any, path: str = "") -> tuple[Any, int]:
        """Return a JSON-safe deep copy with secrets/PII redacted and long strings truncated,
        plus the number of redactions.  `path` says where the value sits: when its last part
        is a secret-named key, the value is treated as if it sat under that key in a dict."""
        if type(path) is str and self._paths.get(path) == 0:  # the usual call, made short
            if len(self._harmless) > 4096:  # bounded: forget and relearn
                self._harmless.clear()
            t = type(value)
            try:
                if t is dict:
                    return self._dict(value, 0)
                if t is list or t is tuple:
                    return self._list(value, 0)
            except (_Again, RecursionError):
                pass  # a cycle, deep nesting or an unusual container: the full walk below
            except Exception:
                pass  # e.g. a dict mutated by another thread: the full walk says what to do
        return self._top(value, path, None)

    def findings(self, value: Any, path: str = "") -> list[Finding]:
        """What sanitize() would redact, without the secret values (for `lore check`)."""
        found: _Found = []
        self._top(value, path, found)
        finding = _finding_class()
        return [finding(where, kind) for where, kind in found]

    def settings(self) -> tuple[Any, ...]:
        """What this instance was configured with (keys, patterns, limits): with the rules'
        code, what decides its output, so a cache of "nothing to redact" is keyed by it."""
        patterns = tuple((kind, rx.pattern, rx.flags) for kind, rx in self._extra)
        return (self._extra_keys, patterns, self._maxc, self._max_depth)

    def redact_text(self, text: str) -> tuple[str, int]:
        """Redact secrets/PII inside free text, keeping the surrounding text (no truncation)."""
        try:
            s = P.without_surrogates(text if isinstance(text, str) else str(text))
            out, kinds = self._redact(s, s.encode(), S.F_ALL)
        except Exception:  # never raise on the write path
            return REDACTED, 1
        return out, len(kinds)

    # -- walking ---------------------------------------------------------------------------
    def _top(self, value: Any, path: str, found: _Found | None) -> tuple[Any, int]:
        if len(self._harmless) > 4096:  # bounded: forget and relearn
            self._harmless.clear()
        try:
            if type(path) is not str:
                path = str.__str__(path) if isinstance(path, str) else ""
            flags = self._paths.get(path)
            if flags is None:
                last = path.rsplit(".", 1)[-1]
                flags = self._name(last)[0] if last and not last.endswith("]") else 0
                if len(self._paths) >= 1024:
                    self._paths.clear()
                self._paths[path] = flags
            if flags & _SECRET and _value_is_secret(value, flags):
                if found is not None:
                    found.append((path, "secret_key_name"))
                return REDACTED, 1
            return self._walk(value, 0, set(), path if found is not None else None, found)
        except RecursionError:
            return self._too_deep(path, found)
        except Exception:  # e.g. a dict mutated by another thread while we iterate it
            return f"[UNSERIALIZABLE {type(value).__name__}]", 0

    @staticmethod
    def _too_deep(path: str | None, found: _Found | None) -> tuple[str, int]:
        """A subtree nested past `max_depth` is withheld and counted as a redaction: it was not
        looked into, so it may hold a secret (a reader that keeps a record with nothing
        redacted as it is would otherwise pass it on whole)."""
        if found is not None:
            found.append((path or "", "nested_too_deep"))
        return TOO_DEEP, 1

    def _walk(
        self, v: Any, depth: int, active: set[int], path: str | None, found: _Found | None
    ) -> tuple[Any, int]:
        t = type(v)
        if t is str:
            if len(v) <= self._plain_max and v.isascii():
                return self._ascii(v, path, found)
            return self._text(v, path, found)
        if v is None or t is bool:
            return v, 0
        if t is int:
            return (v, 0) if _NEG_BIG < v < _BIG else (HUGE_INT, 0)
        if t is float:
            return (v, 0) if v - v == 0.0 else (_float_text(v), 0)
        if t is dict:
            return self._mapping(v, v, depth, active, path, found)
        if t is list or t is tuple:
            return self._sequence(v, v, depth, active, path, found)
        return self._other(v, depth, active, path, found)

    # sanitize() walks dicts, lists and tuples with the two lean loops below: no paths, no
    # findings, no cycle tracking (a cycle, or nesting past max_depth, raises _Again and
    # sanitize() redoes the walk with the full loops further down, as findings() does).  They
    # inline the scalars, because here a Python call costs as much as the triage of a whole
    # container, and do not triage ASCII strings one by one: the loop copies them and notes
    # them, and after it `_left` triages them all at once (joined by "\n", which no rule
    # crosses); a list of such strings needs no loop (`_strings`).  Only when that finds
    # something that may be a secret does `_ascii` triage (and maybe scan) each of them.
    def _dict(self, d: dict[Any, Any], depth: int) -> tuple[dict[str, Any], int]:
        if depth >= self._max_depth:
            raise _Again
        out: dict[str, Any] = {}
        n = 0
        plain_keys = self._plain_keys
        plain_max = self._plain_max
        keys: list[str] = []  # the keys of the strings left to `_left`
        texts: list[str] = []  # those strings
        y: Any
        for k, x in d.items():
            try:
                ck = plain_keys[k]  # only str keys are cached, and no str equals a non-str
            except KeyError:
                ck, flags, kinds = self._key(k)
                n += len(kinds)
                if flags & _SECRET and _value_is_secret(x, flags):
                    out[ck] = REDACTED
                    n += 1
                    continue
            tx = type(x)
            if tx is str:
                if len(x) <= plain_max and x.isascii():
                    keys.append(ck)
                    texts.append(x)
                    out[ck] = x
                    continue
                y, m = self._text(x, None, None)
            elif tx is int:
                out[ck] = x if _NEG_BIG < x < _BIG else HUGE_INT
                continue
            elif x is None or tx is bool or (tx is float and x - x == 0.0):
                out[ck] = x
                continue
            elif tx is dict:
                y, m = self._dict(x, depth + 1)
            elif tx is list or tx is tuple:
                y, m = self._list(x, depth + 1)
            else:
                y, m = self._leaf(x)
            out[ck] = y
            n += m
        if texts and (fams := self._left(texts)) >= 0:
            for ck, x in zip(keys, texts, strict=True):
                y, m = self._ascii(x, None, None, fams)
                if y is not x:
                    n += m
                    if out[ck] is x:  # (else a later key with the same text replaced it)
                        out[ck] = y
        return out, n

    def _list(self, items: list[Any] | tuple[Any, ...], depth: int) -> tuple[list[Any], int]:
        if depth >= self._max_depth:
            raise _Again
        each = False  # the strings were triaged together and may hold a secret
        if items and type(items[0]) is str:
            fams = self._strings(items)
            if not fams:
                return list(items), 0
            each = fams > 0
        out: list[Any] = []
        append = out.append
        n = 0
        plain_max = self._plain_max
        texts: list[str] = []  # the strings left to `_left`
        y: Any
        for x in items:
            tx = type(x)
            if tx is str:
                if len(x) <= plain_max and x.isascii():
                    if each:
                        x, m = self._ascii(x, None, None)
                        n += m
                    else:
                        texts.append(x)
                    append(x)
                    continue
                y, m = self._text(x, None, None)
            elif tx is int:
                append(x if _NEG_BIG < x < _BIG else HUGE_INT)
                continue
            elif x is None or tx is bool or (tx is float and x - x == 0.0):
                append(x)
                continue
            elif tx is dict:
                y, m = self._dict(x, depth + 1)
            elif tx is list or tx is tuple:
                y, m = self._list(x, depth + 1)
            else:
                y, m = self._leaf(x)
            append(y)
            n += m
        if texts and (fams := self._left(texts)) >= 0:
            # the strings left are those ASCII strings of `items` kept as they are in `out`
            for i, x in enumerate(items):
                if out[i] is x and type(x) is str and len(x) <= plain_max and x.isascii():
                    y, m = self._ascii(x, None, None, fams)
                    if y is not x:
                        out[i] = y
                        n += m
        return out, n

    def _left(self, texts: list[str]) -> int:
        """The triage of the strings a loop left: -1 when no rule can match any of them,
        else the families to scan the only one for, or 0 when there are several (then each
        gets its own triage)."""
        if len(texts) == 1:
            return self._triage(texts[0]) or -1
        return 0 if self._triage("\n".join(texts), True) else -1

    def _strings(self, items: Sequence[Any]) -> int:
        """For a list or tuple of ASCII strs that fit (file lists, arguments, labels): 0 when
        no rule can match them, > 0 when one may; -1 when they are not all such strs."""
        try:
            s = "\n".join(items)
        except TypeError:
            return -1
        if not s.isascii():
            return -1
        plain_max = self._plain_max
        if len(s) <= plain_max:  # then so is each
            for x in items:  # exact strs only: a subclass is converted by the loop
                if type(x) is not str:
                    return -1
        else:
            for x in items:
                if type(x) is not str or len(x) > plain_max:
                    return -1
        return self._triage(s, True)

    def _leaf(self, x: Any) -> tuple[Any, int]:
        """An unusual value in a lean loop: converted when it holds no container (a date, a
        path, bytes, a non-finite float...), else the full walk must do it (cycles)."""
        if isinstance(x, (Mapping, list, tuple, set, frozenset, enum.Enum)):
            raise _Again
        return self._other(x, 0, set(), None, None)

    # The full loops: findings() and unusual values.  Strings one by one, in order.
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
            return self._too_deep(path, found)
        vid = id(v)
        if vid in active:
            return CYCLE, 0
        active.add(vid)
        out: dict[str, Any] = {}
        n = 0
        plain_keys = self._plain_keys
        for k, x in d.items():
            ck = plain_keys.get(k)  # only str keys are cached, and no str equals a non-str
            if ck is None:
                ck, flags, kinds = self._key(k)
            else:
                flags, kinds = 0, ()
            if kinds:
                n += len(kinds)
                if found is not None:
                    for kind in kinds:  # (a generator here would make `ck` a cell)
                        found.append((_join(path or "", ck), kind))
            where = None if path is None else _join(path, ck)
            if flags & _SECRET and _value_is_secret(x, flags):
                out[ck] = REDACTED
                n += 1
                if found is not None:
                    found.append((where or "", "secret_key_name"))
                continue
            out[ck], m = self._walk(x, depth + 1, active, where, found)
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
            return self._too_deep(path, found)
        vid = id(v)
        if vid in active:
            return CYCLE, 0
        active.add(vid)
        out: list[Any] = []
        n = 0
        for i, x in enumerate(items):
            y, m = self._walk(x, depth + 1, active, None if path is None else f"{path}[{i}]", found)
            out.append(y)
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
                s = str(k) if not isinstance(k, int) or _NEG_BIG < k < _BIG else HUGE_INT
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
