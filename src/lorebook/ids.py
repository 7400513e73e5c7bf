"""ULIDs: sortable by time, collision-free without coordination.

Written here (a few lines of the spec) because python-ulid imports importlib.metadata, which costs
~90 ms on the append path; ids generated in one process are strictly monotonic.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import _thread
import os
import time
from collections.abc import Iterable

_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_lock = _thread.allocate_lock()  # the threading module costs ~1 ms to import
_last = [0, 0]  # last (ms, random) pair, for monotonic ids within a millisecond


def _forget_last() -> None:
    # A forked child must not continue its parent's sequence: both would mint the same ids.
    _last[0] = _last[1] = 0


os.register_at_fork(after_in_child=_forget_last)


_PAIRS = [a + b for a in _ALPHABET for b in _ALPHABET]  # 10 bits -> 2 characters
_SHIFTS = range(120, -1, -10)


_RAND_SHIFTS = range(70, -1, -10)  # the last 8 pairs: bits 79..0, the random part only
# the last millisecond and its first 10 characters (bits 129..80: the time part only), one
# tuple swapped whole so threads never see one's millisecond with another's characters
_head = [(-1, "")]


def _encode(ms: int, rand: int) -> str:
    """48-bit time + 80-bit randomness as 26 Crockford base32 characters (13 table lookups;
    the 5 of the time part are kept for the millisecond, which many ids share when logging
    fast)."""
    head = _head[0]
    if head[0] != ms:
        value = ms << 80
        head = (ms, "".join([_PAIRS[(value >> shift) & 1023] for shift in _SHIFTS[:5]]))
        _head[0] = head
    return head[1] + "".join([_PAIRS[(rand >> shift) & 1023] for shift in _RAND_SHIFTS])


# the milliseconds an id may be minted for: from 1970 up to the end of year 9999 (the last the
# log's timestamps can spell); a clock outside reads wrong, and its ids would not decode
MAX_MINT_MS = 253402300799999
MAX_ULID_MS = (1 << 48) - 1  # what the 10 time characters can hold


def new_ulid(now_ms: int | None = None) -> str:
    """Return a 26-character ULID for `now_ms` (default: now).

    Ids made in one process within the same millisecond increase strictly; the time part is
    never later than `now_ms`, so an id's time can be trusted as a lower bound for its record.
    A clock before 1970 or past year 9999 is a LoreError: its id would be garbage.
    """
    ms = int(time.time() * 1000) if now_ms is None else now_ms
    if not 0 <= ms <= MAX_MINT_MS:
        _impossible_clock(ms)
    with _lock:
        if ms == _last[0] and _last[1] + 1 < 1 << 80:
            rand = _last[1] + 1
        else:
            rand = int.from_bytes(os.urandom(10), "big") >> 1  # top bit clear: room to increment
        _last[0], _last[1] = ms, rand
    return _encode(ms, rand)


def ulid_ms(ulid: str) -> int | None:
    """Milliseconds since the epoch encoded in a ULID, or None if it is not one."""
    if len(ulid) != 26:
        return None
    value = 0
    for ch in ulid[:10].upper():
        idx = _ALPHABET.find(ch)
        if idx < 0:
            return None
        value = value * 32 + idx
    return value


def _impossible_clock(ms: int) -> None:
    from .errors import LoreError
    from .timeutil import UTC, datetime, format_ts, timedelta

    try:
        when = format_ts(datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=ms))
    except OverflowError:
        when = f"{ms} ms from 1970"
    side = "before 1970" if ms < 0 else "after year 9999"
    raise LoreError(
        "this machine's clock reads {}, {}: refusing to mint an id from it (set the system clock)",
        when,
        side,
    )


def ulid_problem(ulid: str, latest_ms: int) -> str | None:
    """Why `ulid` (which matched ULID_RE) is an id no sane clock mints, or None: its time part
    overflows 48 bits (as a clock before 1970 encoded) or is later than `latest_ms`."""
    ms = ulid_ms(ulid)
    if ms is None or ms > MAX_ULID_MS:
        return "its time part overflows (a clock before 1970, or not a ULID)"
    if ms > latest_ms:
        return "its time is ahead of this machine's clock"
    return None


PREFIX_SHOWN = 5  # candidates an ambiguous prefix lists


def resolve_prefix(given: str, candidates: Iterable[str], what: str) -> str | None:
    """The id `given` names among `candidates`: itself when it is one, else the one candidate
    it is a prefix of (as git takes a hash prefix); None when none is. Several: a UsageError
    listing the first few, so the user can type one more character."""
    matches = set()
    for candidate in candidates:
        if candidate == given:
            return candidate
        if candidate.startswith(given):
            matches.add(candidate)
    if len(matches) == 1:
        return matches.pop()
    if not matches:
        return None
    from .errors import UsageError

    ordered = sorted(matches)
    listed = ", ".join(ordered[:PREFIX_SHOWN])
    more = f" and {len(ordered) - PREFIX_SHOWN} more" if len(ordered) > PREFIX_SHOWN else ""
    raise UsageError(
        "{} {!r} is ambiguous: it starts {} ids ({}{}); type more of it",
        what,
        given,
        len(ordered),
        listed,
        more,
    )
