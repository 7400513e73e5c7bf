"""Timestamps: one canonical UTC format for the log, and the relative forms people type.

Every age or window a command accepts (`--since 7d`, `--days 30`, `--older-than 90d`, the
`*_days` settings) goes through the bounded parsers here, so an absurd value is one usage error
instead of an OverflowError from date arithmetic.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import re

from .errors import UsageError

TYPE_CHECKING = False  # mypy sees the public module; at run time its C core is enough
if TYPE_CHECKING:  # (re-exported: the append path takes its date types from here)
    from datetime import UTC as UTC
    from datetime import date as date
    from datetime import datetime as datetime
    from datetime import timedelta as timedelta
else:
    # `datetime` first runs its whole pure-Python twin, then replaces it with the C module's
    # classes (~2 ms of a ~60 ms `lore log`); the C module has the same classes (their
    # `__module__` is "datetime": equal, picklable) and the same `timezone.utc` object.
    try:
        from _datetime import date, datetime, timedelta, timezone
    except ImportError:  # an interpreter without the C module
        from datetime import date, datetime, timedelta, timezone
    UTC = timezone.utc  # noqa: UP017 - the same object as datetime.UTC, without importing it

MAX_DAYS = 36500  # a century: longer than any log, short enough for datetime arithmetic
_REL = re.compile(r"^\s*(\d+)\s*([smhdw])\s*$")
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_EXAMPLES = {"s": "45s", "m": "30m", "h": "24h", "d": "90d", "w": "12w"}


# How far ahead of the reader's clock a record may be dated before it counts as from a wrong
# clock: `lore check` reports it, and choosing "the latest session" passes over it.
SKEW = 300  # seconds


def utcnow() -> datetime:
    return datetime.now(UTC)


def horizon(now: datetime) -> str:
    """The latest timestamp a record may have, read at `now` (SKEW ahead of it)."""
    return format_ts(now + timedelta(seconds=SKEW))


def format_ts(moment: datetime) -> str:
    """`2026-11-22T10:00:00.000Z`: fixed width, so string order is time order."""
    if moment.tzinfo is not UTC:  # (utcnow()'s are: no conversion on the append path)
        moment = moment.astimezone(UTC)
    text = moment.isoformat(timespec="milliseconds")  # C, unlike strftime
    return text[:-6] + "Z"  # "+00:00" -> "Z"


def parse_ts(text: str) -> datetime:
    """Parse a log timestamp (or any ISO 8601 form); naive values are taken as UTC."""
    value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def _forms(units: str) -> str:
    examples = [_EXAMPLES[unit] for unit in units]
    return ", ".join(examples[:-1]) + " or " + examples[-1] if len(examples) > 1 else examples[0]


def parse_age(text: str, option: str, *, units: str = "smhdw") -> timedelta:
    """`7d`, `24h`, `30m`, `2w` (the letters in `units`) as a timedelta, at most MAX_DAYS."""
    match = _REL.match(text)
    if not match or match.group(2) not in units:
        raise UsageError(option + " {!r}: expected an age like " + _forms(units), text)
    digits, unit = match.groups()
    seconds = int(digits) * _SECONDS[unit] if len(digits) <= 15 else -1
    if not 0 < seconds <= MAX_DAYS * 86400:
        raise UsageError(
            option + " {}: must be between 1{} and {}d (an age like {})",
            text.strip(),
            units[0],
            MAX_DAYS,
            _forms(units),
        )
    return timedelta(seconds=seconds)


def check_days(days: int, option: str) -> int:
    """A whole number of days (`--days N`) between 1 and MAX_DAYS."""
    if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= MAX_DAYS:
        raise UsageError(
            option + " {!r}: must be a whole number of days from 1 to {}", days, MAX_DAYS
        )
    return days


def parse_when(text: str, *, now: datetime | None = None, option: str = "--since") -> datetime:
    """Parse `7d`, `24h`, `30m`, `2w`, `YYYY-MM-DD` or an ISO timestamp into a UTC datetime
    no older than MAX_DAYS before `now`."""
    now = now or utcnow()
    raw = text.strip()
    if _REL.match(raw):
        return now - parse_age(raw, option)
    try:
        if len(raw) == 10:
            day = date.fromisoformat(raw)
            moment = datetime(day.year, day.month, day.day, tzinfo=UTC)
        else:
            moment = parse_ts(raw)
    except ValueError:
        raise UsageError(
            option + " {!r}: expected a duration like 7d, 24h, 30m, 2w or a date YYYY-MM-DD", text
        ) from None
    except OverflowError:  # e.g. 0001-01-01T00:00+01:00 is before year 1 in UTC
        raise UsageError(option + " {}: out of the range of dates", raw) from None
    if moment < now - timedelta(days=MAX_DAYS + 1):  # (a day's slack: parsed again later)
        raise UsageError(option + " {}: must be within the last {} days", raw, MAX_DAYS)
    return moment


def as_timestamp(value: str | datetime | None, option: str) -> str | None:
    """An API time argument (a datetime, a canonical timestamp or a `--since` form such as
    `7d` or `YYYY-MM-DD`) as a canonical timestamp."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return format_ts(value)
    return format_ts(parse_when(str(value), option=option))
