"""The mirror's fast line reader reads exactly what `decode_line` reads.

`mirror.source._decode` parses lines with orjson and keeps a record only when it is a valid v1
record; every other line goes to `decode_line`, the reference every reader uses. So the one
thing to prove is that a line orjson parses to a valid record is one json parses to the same
record: same keys in the same order, same values of the same types (a bool is no int, -0.0 is
no 0.0). Checked on generated records and lines, with the inputs where the two parsers differ
(duplicate keys, floats at the edges, integers past 64 bits, NaN, escapes, lone surrogates,
invalid UTF-8, a byte-order mark) and on a generated store's lines.
"""

from __future__ import annotations

import json
import math
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lorebook.mirror import source
from lorebook.model import decode_line

pytest.importorskip("orjson")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))


def same(a: Any, b: Any) -> bool:
    """Equal as values and as types, floats by their bits (nan, -0.0), dicts in key order."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (
            a == b and math.copysign(1, a) == math.copysign(1, b)
        )
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def reference(lines: list[bytes]) -> tuple[list[dict[str, Any]], int]:
    records, skipped = [], 0
    for raw in lines:
        if not raw.strip():
            continue
        record, _ = decode_line(raw)
        if record is None:
            skipped += 1
        else:
            records.append(record)
    return records, skipped


def check(lines: list[bytes]) -> None:
    got, want = source._decode(lines), reference(lines)
    assert got[1] == want[1]
    assert len(got[0]) == len(want[0])
    assert all(same(g, w) for g, w in zip(got[0], want[0], strict=True)), (got, want)


def test_the_fast_parser_is_in_use() -> None:
    assert source._fast_loads is not None


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(),
    st.text(),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(), inner)),
    max_leaves=20,
)
ulid = st.text("0123456789ABCDEFGHJKMNPQRSTVWXYZ", min_size=26, max_size=26).map(
    lambda s: "0" + s[1:]
)


@st.composite
def records(draw: st.DrawFn) -> dict[str, Any]:
    record: dict[str, Any] = {
        "v": 1, "id": draw(ulid), "ts": "2026-11-27T10:00:00.000Z", "session": draw(ulid),
        "kind": "action", "type": draw(st.sampled_from(["tool_call", "deploy", "plan"])),
        "outcome": draw(st.sampled_from(["success", "failure", "in_progress"])),
        "agent": draw(st.none() | st.text(max_size=8)),
        "context": draw(st.dictionaries(st.text(), values)),
        "meta": draw(st.dictionaries(st.text(max_size=6), values, max_size=3)),
        "duration_s": draw(st.none() | st.floats(min_value=0) | st.integers(0, 2**70)),
    }  # fmt: skip
    return record


def dumps(value: Any, ascii_only: bool) -> bytes:
    text = json.dumps(value, ensure_ascii=ascii_only, allow_nan=True)
    return text.encode("utf-8", "surrogatepass")


@settings(max_examples=400, deadline=None)
@given(record=records(), ascii_only=st.booleans())
def test_a_record_line_reads_the_same(record: dict[str, Any], ascii_only: bool) -> None:
    check([dumps(record, ascii_only)])


@settings(max_examples=300, deadline=None)
@given(value=values, ascii_only=st.booleans())
def test_any_json_line_reads_the_same(value: Any, ascii_only: bool) -> None:
    check([dumps(value, ascii_only)])


@settings(max_examples=300, deadline=None)
@given(record=records(), cut=st.integers(0, 400), junk=st.binary(max_size=6))
def test_a_damaged_line_reads_the_same(record: dict[str, Any], cut: int, junk: bytes) -> None:
    line = dumps(record, False)
    check([line[:cut] + junk + line[cut:], line[:cut], junk])


BASE = (
    '{"v":1,"id":"01JD0000000000000000000000","ts":"2026-11-27T10:00:00.000Z",'
    '"session":"s1","kind":"action","type":"deploy","outcome":"success"'
)


@pytest.mark.parametrize(
    "tail",
    [
        ',"context":{"a":1,"a":2}}',  # duplicate keys: the last one wins in both
        ',"agent":"x","agent":"y"}',
        ',"context":{"n":18446744073709551615}}',  # the largest u64
        ',"context":{"n":18446744073709551616}}',  # past 64 bits: json's
        ',"context":{"n":-9223372036854775809}}',
        ',"context":{"f":1e400}}',  # overflows to inf in json
        ',"context":{"f":-0.0,"g":4.9e-324,"h":2.2250738585072014e-308}}',
        ',"context":{"f":0.1000000000000000055511151231257827021181583404541015625}}',
        ',"context":{"f":1.7976931348623157e308,"g":123456789012345678901234567890.5}}',
        ',"context":{"f":NaN}}',
        ',"context":{"f":Infinity}}',
        ',"context":{"s":"\\ud83d\\ude00 \\u00e9 \\u0000"}}',  # escapes, a pair, NUL
        ',"context":{"s":"\\ud800"}}',  # a lone surrogate: json's
        ',"context":{"s":"\\udc00x"}}',
        ',"duration_s":true}',
        ',"duration_s":1E2}',
        "}\r",
        "}   ",
    ],
)
def test_lines_where_the_parsers_could_differ_read_the_same(tail: str) -> None:
    line = (BASE + tail).encode("utf-8")
    check([line])
    check([b"\xef\xbb\xbf" + line])  # a byte-order mark
    check([line.replace(b'"deploy"', b'"d\xffploy"')])  # invalid UTF-8
    check([line.replace(b'"deploy"', b'"d\xed\xa0\x80ploy"')])  # an encoded surrogate


def test_a_generated_store_reads_the_same(tmp_path: Path) -> None:
    import generate_store

    end = datetime(2026, 11, 27, tzinfo=UTC)
    generate_store.generate(tmp_path / "store", 3000, 2, 7, end, 1)
    lines = [
        line
        for path in sorted((tmp_path / "store" / "actionlog").rglob("*.jsonl"))
        for line in path.read_bytes().splitlines()
    ]
    assert len(lines) >= 3000
    check(lines)
