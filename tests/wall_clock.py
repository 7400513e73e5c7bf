"""Checking what code worked out from the wall clock when the test cannot hand it one (a `lore`
subprocess, a facade method without `now=`).

Reading the clock once, before or after the call, fails every run that crosses midnight UTC (or
a new week or year) in between. What the code computed is one of the values read just before and
just after the call: the two differ only when the call crosses such a boundary, so accepting
either hides no failure.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


def around(read: Callable[[], T], call: Callable[[], R]) -> tuple[R, set[T]]:
    """`call()`, and the values `read()` gives just before and just after it."""
    before = read()
    result = call()
    return result, {before, read()}


def day(days_ago: int = 0) -> str:
    """The UTC date `days_ago` days before now, as the commands write it (YYYY-MM-DD)."""
    return (datetime.now(UTC) - timedelta(days=days_ago)).strftime("%Y-%m-%d")
