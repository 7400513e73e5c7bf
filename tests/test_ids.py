"""ULIDs: 26 Crockford characters, time-ordered, strictly increasing within a process."""

from __future__ import annotations

import itertools
import re
import time
from datetime import UTC, datetime

from lorebook.ids import MAX_MINT_MS, _encode, new_ulid, ulid_ms

CROCKFORD = re.compile(r"^[0-9A-HJKMNP-TV-Z]{26}$")


def test_shape_is_26_crockford_characters() -> None:
    for _ in range(200):
        value = new_ulid()
        assert len(value) == 26
        assert CROCKFORD.match(value), value
        assert not set(value) & set("ILOU")


def test_strictly_increasing_in_a_tight_loop() -> None:
    ids = [new_ulid() for _ in range(10_000)]
    assert all(a < b for a, b in itertools.pairwise(ids))
    assert len(set(ids)) == 10_000


def test_strictly_increasing_within_one_explicit_millisecond() -> None:
    ms = 1_700_000_000_123
    ids = [new_ulid(ms) for _ in range(1_000)]
    assert all(a < b for a, b in itertools.pairwise(ids))
    assert {ulid_ms(i) for i in ids} == {ms}


def test_ulid_ms_round_trips_the_current_time() -> None:
    before = int(time.time() * 1000)
    value = new_ulid()
    after = int(time.time() * 1000)
    got = ulid_ms(value)
    assert got is not None
    assert before <= got <= after


def test_explicit_now_ms_gives_that_time() -> None:
    t = int(datetime(2026, 11, 22, 10, tzinfo=UTC).timestamp() * 1000)
    for ms in (0, 1, 1_700_000_000_000, t, MAX_MINT_MS):  # (past year 9999: a wrong clock)
        value = new_ulid(ms)
        assert ulid_ms(value) == ms
        assert ulid_ms(value.lower()) == ms
    assert ulid_ms(_encode((1 << 48) - 1, 0)) == (1 << 48) - 1  # the largest time part


def test_time_part_sorts_by_time() -> None:
    early = new_ulid(1_600_000_000_000)
    late = new_ulid(1_600_000_000_001)
    assert early[:10] < late[:10]
    assert early < late


def test_ulid_ms_rejects_non_ulids() -> None:
    assert ulid_ms("") is None
    assert ulid_ms("too-short") is None
    assert ulid_ms("U" * 26) is None  # U is not in Crockford's alphabet
    assert ulid_ms("01ARZ3NDEKTSV4RRFFQ69G5FA") is None  # 25 characters
