"""Timestamps: one canonical UTC format for the log, and the relative forms people type."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta

from .errors import UsageError

_REL = re.compile(r"^(\d+)\s*([smhdw])$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def utcnow() -> datetime:
    return datetime.now(UTC)


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


def parse_when(text: str, *, now: datetime | None = None, option: str = "--since") -> datetime:
    """Parse `7d`, `24h`, `30m`, `2w`, `YYYY-MM-DD` or an ISO timestamp into a UTC datetime."""
    now = now or utcnow()
    raw = text.strip()
    match = _REL.match(raw)
    if match:
        return now - timedelta(**{_UNITS[match.group(2)]: int(match.group(1))})
    try:
        if len(raw) == 10:
            day = date.fromisoformat(raw)
            return datetime(day.year, day.month, day.day, tzinfo=UTC)
        return parse_ts(raw)
    except ValueError:
        raise UsageError(
            f"{option} {text!r}: expected a duration like 7d, 24h, 30m, 2w or a date YYYY-MM-DD"
        ) from None
