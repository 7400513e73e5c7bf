"""The append path's fast forms write exactly what their plain definitions would.

`encode` calls the C JSON encoder directly, ULIDs reuse the time part's characters, `format_ts`
skips converting UTC datetimes and `entropy` takes its terms from a table: each is checked
against the textbook form it replaces, on generated values, including the errors.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta, timezone
from operator import mul
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lorebook.ids import _PAIRS, _encode, new_ulid, ulid_ms
from lorebook.log.writer import encode
from lorebook.redact.patterns import entropy
from lorebook.timeutil import format_ts


def reference_encode(value: Any) -> bytes:
    text = json.dumps(
        value, ensure_ascii=False, separators=(",", ":"), sort_keys=True, allow_nan=False
    )
    return text.encode("utf-8") + b"\n"


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(st.text(), inner)),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(record=st.dictionaries(st.text(), values))
def test_encode_writes_the_bytes_of_canonical_json_dumps(record: dict[str, Any]) -> None:
    assert encode(record) == reference_encode(record)


@pytest.mark.parametrize(
    ("value", "error"),
    [
        ({"x": float("nan")}, ValueError),
        ({"x": [float("inf")]}, ValueError),
        ({"x": object()}, TypeError),
        ({1.5: "a", None: "b"}, TypeError),  # keys that cannot be sorted together
        ({2.5: "a", 1.5: "b"}, None),  # non-str keys: sorted and converted alike
        ({"x": ("a", 1)}, None),
    ],
)
def test_encode_raises_and_converts_like_json_dumps(value: Any, error: type | None) -> None:
    if error is None:
        assert encode(value) == reference_encode(value)
        return
    with pytest.raises(error) as ours:
        encode(value)
    with pytest.raises(error) as theirs:
        reference_encode(value)
    assert str(ours.value) == str(theirs.value)


def test_encode_still_refuses_a_cycle() -> None:
    looped: dict[str, Any] = {}
    looped["self"] = looped
    with pytest.raises(ValueError, match="Circular reference"):
        encode(looped)
    assert encode({"after": "a cycle"}) == b'{"after":"a cycle"}\n'  # no state left behind


@settings(max_examples=500, deadline=None)
@given(ms=st.integers(0, (1 << 48) - 1), rand=st.integers(0, (1 << 80) - 1))
def test_ulid_encoding_matches_the_13_lookup_form(ms: int, rand: int) -> None:
    value = (ms << 80) | rand
    expected = "".join(_PAIRS[(value >> shift) & 1023] for shift in range(120, -1, -10))
    assert _encode(ms, rand) == expected
    assert _encode(ms, rand ^ 1) != expected  # the cached time part never hides the random one
    assert ulid_ms(expected) == ms


def test_ulids_of_one_millisecond_share_the_time_part_and_increase() -> None:
    ids = [new_ulid(1_700_000_000_123) for _ in range(50)] + [new_ulid(1_700_000_000_124)]
    assert len({i[:10] for i in ids[:-1]}) == 1
    assert ids[-1][:10] != ids[0][:10]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)


@pytest.mark.parametrize(
    "moment",
    [
        datetime(2026, 11, 22, 10, 0, 0, 999_999, tzinfo=UTC),
        datetime(2026, 11, 22, 10, 0, 0, tzinfo=timezone.utc),  # noqa: UP017 - the same object
        datetime(2026, 11, 22, 3, 4, 5, 678_000, tzinfo=timezone(timedelta(hours=5))),
        datetime(2026, 11, 22, 23, 59, 59, 999_500, tzinfo=timezone(timedelta(hours=-8))),
    ],
)
def test_format_ts_is_the_utc_isoformat(moment: datetime) -> None:
    text = moment.astimezone(UTC).isoformat(timespec="milliseconds")[:-6] + "Z"
    assert format_ts(moment) == text


@settings(max_examples=500, deadline=None)
@given(s=st.text(min_size=1, max_size=400))
def test_entropy_is_the_same_float_as_the_textbook_sum(s: str) -> None:
    counts = list(map(s.count, set(s)))
    expected = math.log2(len(s)) - math.fsum(map(mul, counts, map(math.log2, counts))) / len(s)
    assert entropy(s) == expected
