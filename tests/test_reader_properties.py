"""Property: whatever bytes a shard holds, the reader never raises, yields only valid records,
and reports every other non-blank line exactly once with its line number."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lorebook.log.reader import read_shard
from lorebook.log.writer import action_record, encode
from lorebook.model import validate_record
from lorebook.problems import Problem

VALID = encode(action_record("commit", session="s-1", agent="a", project="p")).rstrip(b"\n")

lines = st.one_of(
    st.just(VALID),
    st.binary(max_size=60).filter(lambda b: b"\n" not in b and b"\r" not in b),
    st.text(max_size=40).map(lambda t: t.replace("\n", " ").encode("utf-8", "surrogatepass")),
    st.just(b'{"v":1}'),
    st.just(b"[]"),
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=st.lists(lines, max_size=12), torn=st.booleans())
def test_reader_never_raises_and_accounts_for_every_line(body: list[bytes], torn: bool) -> None:
    data = b"\n".join(body) + (b"" if torn or not body else b"\n")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s-1.jsonl"
        path.write_bytes(data)
        problems: list[Problem] = []
        records = list(read_shard(path, "s-1.jsonl", problems.append, dedupe=False))
    for _, record in records:
        assert validate_record(record) is None
    numbered = data.split(b"\n")
    if numbered and numbered[-1] == b"":
        numbered.pop()
    good = {n for n, _ in records}
    bad = {p.line for p in problems}
    assert not good & bad
    for index, raw in enumerate(numbered, 1):
        if not raw.strip():
            continue
        try:
            ok = validate_record(json.loads(raw.decode("utf-8"))) is None
        except (UnicodeDecodeError, ValueError):
            ok = False
        assert (index in good) == ok, (index, raw)
        assert (index in bad) == (not ok), (index, raw)
