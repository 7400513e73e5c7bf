"""Property: whatever bytes a shard holds, the reader never raises, yields only valid records,
and reports every other non-blank line exactly once with its line number."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lorebook.log.reader import read_shard, type_needle
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


def _spelled(record: dict[str, object], how: int) -> bytes:
    """One record as a writer, a person or another tool might have written it."""
    if how == 0:
        return encode(record).rstrip(b"\n")
    if how == 1:  # spaces after the separators, keys unsorted
        return json.dumps(dict(reversed(list(record.items())))).encode()
    text = json.dumps(record, ensure_ascii=True)  # every type letter written as \\u escape
    word = str(record["type"])
    escaped = "".join(f"\\u{ord(c):04x}" for c in word)
    return text.replace(f'"type": "{word}"', f'"type": "{escaped}"').encode()


types = st.sampled_from(["spawn", "deploy", "plan", "spawn_check"])


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    body=st.lists(
        st.tuples(types, st.sampled_from([0, 1, 2]), st.sampled_from(["", "spawn", '"spawn"'])),
        max_size=12,
    ),
    wanted=types,
)
def test_a_type_needle_skips_only_lines_that_cannot_hold_that_type(
    body: list[tuple[str, int, str]], wanted: str
) -> None:
    """Reading a shard for one type (`type_needle`) yields exactly the records of that type
    that a full read yields, however the lines are spelled (spacing, key order, escapes)."""
    lines = []
    for action_type, how, note in body:
        record = action_record(action_type, session="s-1", agent="a", project="p",
                               context={"note": note})  # fmt: skip
        lines.append(_spelled(record, how))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s-1.jsonl"
        path.write_bytes(b"".join(line + b"\n" for line in lines))
        every = [r for _, r in read_shard(path, "s-1.jsonl") if r["type"] == wanted]
        needled = list(read_shard(path, "s-1.jsonl", needle=type_needle(wanted)))
    assert [r for _, r in needled if r["type"] == wanted] == every
