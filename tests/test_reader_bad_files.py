"""The reader and `lore check` on damaged stores: skip and report (file:line: reason), never fail.

Every shard here is written byte by byte (no writer involved), so each case is exactly the damage
it names. Good records are built by hand as schema-v1 lines in the shard's own day and session, so
`lore check` has nothing to say about them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import clean_env, lore
from lorebook import Lorebook
from lorebook.ids import new_ulid
from lorebook.log.reader import MAX_LINE_BYTES, iter_records, read_shard
from lorebook.problems import Problem

DAY_DIR = Path("actionlog/2026/11/22")
_counter = iter(range(10**6))


def record(session: str = "s1", **overrides: object) -> dict[str, object]:
    """A valid v1 action on 2026-11-22 (timestamps increase with every call)."""
    n = next(_counter)
    ts = f"2026-11-22T10:{n // 60000 % 60:02d}:{n // 1000 % 60:02d}.{n % 1000:03d}Z"
    base: dict[str, object] = {
        "v": 1,
        "kind": "action",
        "id": new_ulid(),
        "ts": ts,
        "session": session,
        "agent": "PS",
        "project": "demo",
        "type": "tool_call",
        "category": "execution",
        "outcome": "success",
        "context": {"n": n},
        "error": None,
        "duration_s": None,
        "parent": None,
        "epic": None,
        "issue": None,
        "meta": {},
    }
    base.update(overrides)
    return base


def line(rec: object) -> bytes:
    return json.dumps(rec, separators=(",", ":"), sort_keys=True).encode() + b"\n"


def write_shard(root: Path, name: str, data: bytes) -> str:
    """Write `actionlog/2026/11/22/<name>` and return its path relative to the root."""
    path = root / DAY_DIR / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return str(DAY_DIR / name)


def read_all(root: Path) -> tuple[list[dict[str, object]], list[Problem]]:
    problems: list[Problem] = []
    records = list(iter_records(root / "actionlog", base=root, on_problem=problems.append))
    return records, problems


def ids(records: list[dict[str, object]]) -> list[object]:
    return [r["id"] for r in records]


# -- one damaged shard at a time ---------------------------------------------------------------


def test_invalid_json_on_line_two_of_three(store: Path) -> None:
    good1, good3 = record(), record()
    rel = write_shard(
        store, "s1.jsonl", line(good1) + b'{"v":1,"kind":"action",oops}\n' + line(good3)
    )
    records, problems = read_all(store)
    assert ids(records) == [good1["id"], good3["id"]]
    assert len(problems) == 1
    assert (problems[0].path, problems[0].line) == (rel, 2)
    assert problems[0].reason == (
        "invalid JSON: Expecting property name enclosed in double quotes at column 24"
    )
    assert str(problems[0]).startswith(f"{rel}:2: invalid JSON")


def test_invalid_utf8_bytes(store: Path) -> None:
    good1, good3 = record(), record()
    bad = b'{"v":1,"note":"caf\xe9 \xff"}\n'
    rel = write_shard(store, "s1.jsonl", line(good1) + bad + line(good3))
    records, problems = read_all(store)
    assert ids(records) == [good1["id"], good3["id"]]
    first_bad = bad.index(b"\xe9") + 1
    assert problems == [Problem(rel, 2, f"invalid UTF-8 at byte {first_bad}")]


def test_ten_megabyte_line_between_two_good_lines(store: Path) -> None:
    good1, good3 = record(), record()
    huge = b'{"pad":"' + b"a" * (10 * 1024 * 1024) + b'"}\n'
    rel = write_shard(store, "s1.jsonl", line(good1) + huge + line(good3))
    records, problems = read_all(store)
    assert ids(records) == [good1["id"], good3["id"]]
    assert problems == [Problem(rel, 2, f"line longer than {MAX_LINE_BYTES} bytes, skipped")]
    # the line after the oversize one keeps its own number
    numbered = [(n, r["id"]) for n, r in read_shard(store / rel, rel)]
    assert numbered == [(1, good1["id"]), (3, good3["id"])]


def test_empty_file_yields_nothing_and_reports_nothing(store: Path) -> None:
    write_shard(store, "s1.jsonl", b"")
    good = record(session="s2")
    write_shard(store, "s2.jsonl", line(good))
    records, problems = read_all(store)
    assert ids(records) == [good["id"]]
    assert problems == []


def test_blank_lines_and_crlf_are_tolerated(store: Path) -> None:
    good1, good2 = record(), record()
    write_shard(store, "s1.jsonl", line(good1) + b"\n   \n" + line(good2).replace(b"\n", b"\r\n"))
    records, problems = read_all(store)
    assert ids(records) == [good1["id"], good2["id"]]
    assert problems == []


def test_shard_path_that_is_a_directory(store: Path) -> None:
    (store / DAY_DIR / "bad.jsonl").mkdir(parents=True)
    (store / DAY_DIR / "bad.jsonl" / "inner.jsonl").write_bytes(line(record(session="inner")))
    good = record()
    write_shard(store, "s1.jsonl", line(good))
    records, problems = read_all(store)
    assert ids(records) == [good["id"]]
    rel = str(DAY_DIR / "bad.jsonl")
    assert problems == [Problem(rel, 0, "is a directory, not a shard file")]
    assert str(problems[0]) == f"{rel}: is a directory, not a shard file"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("[]", "not a v1 record: not a JSON object"),
        ('"just a string"', "not a v1 record: not a JSON object"),
        ("null", "not a v1 record: not a JSON object"),
        ('{"v": 2}', "not a v1 record: unsupported schema version 2"),
        ('{"v": 1}', "not a v1 record: missing or non-string 'id'"),
    ],
)
def test_valid_json_that_is_not_a_record(store: Path, text: str, reason: str) -> None:
    good1, good3 = record(), record()
    rel = write_shard(store, "s1.jsonl", line(good1) + text.encode() + b"\n" + line(good3))
    records, problems = read_all(store)
    assert ids(records) == [good1["id"], good3["id"]]
    assert problems == [Problem(rel, 2, reason)]


@pytest.mark.parametrize(
    ("overrides", "reason"),
    [
        (
            {"ts": "2026-11-22 10:00:00"},
            "not a v1 record: 'ts' is not a UTC timestamp like "
            "2026-11-22T10:00:00.000Z: '2026-11-22 10:00:00'",
        ),
        (
            {"ts": "yesterday"},
            "not a v1 record: 'ts' is not a UTC timestamp like "
            "2026-11-22T10:00:00.000Z: 'yesterday'",
        ),
        ({"id": "not-a-ulid"}, "not a v1 record: 'id' is not a ULID: 'not-a-ulid'"),
        ({"kind": "thought"}, "not a v1 record: unknown kind 'thought'"),
        (
            {"outcome": "meh"},
            "not a v1 record: 'outcome' must be one of success, failure, blocked, in_progress",
        ),
        ({"context": [1, 2]}, "not a v1 record: 'context' must be an object"),
    ],
)
def test_record_with_a_bad_field(store: Path, overrides: dict[str, object], reason: str) -> None:
    good1, good3 = record(), record()
    rel = write_shard(store, "s1.jsonl", line(good1) + line(record(**overrides)) + line(good3))
    records, problems = read_all(store)
    assert ids(records) == [good1["id"], good3["id"]]
    assert problems == [Problem(rel, 2, reason)]


def test_files_that_are_not_jsonl_are_ignored(store: Path) -> None:
    good = record()
    write_shard(store, "s1.jsonl", line(good))
    write_shard(store, "notes.txt", b"not json at all\n")
    write_shard(store, "s1.jsonl.bak", b"{broken\n")
    write_shard(store, ".s1.jsonl.swp", b"\x00\x01")
    write_shard(store, "README.md", b"# hi\n")
    # directories that are not YYYY/MM/DD are not days
    (store / "actionlog" / "notes").mkdir()
    (store / "actionlog" / "notes" / "x.jsonl").write_bytes(b"{broken\n")
    (store / "actionlog" / "2026" / "1x").mkdir(parents=True)
    (store / "actionlog" / "2026" / "1x" / "x.jsonl").write_bytes(b"{broken\n")
    records, problems = read_all(store)
    assert ids(records) == [good["id"]]
    assert problems == []


def test_torn_last_line_is_reported_as_torn(store: Path) -> None:
    good = record()
    torn = line(record())[:57]
    rel = write_shard(store, "s1.jsonl", line(good) + torn)
    records, problems = read_all(store)
    assert ids(records) == [good["id"]]
    assert len(problems) == 1
    assert (problems[0].path, problems[0].line) == (rel, 2)
    assert problems[0].reason.startswith("torn line at end of file (invalid JSON: ")


def test_duplicate_line_is_yielded_once(store: Path) -> None:
    dup, other = record(), record()
    write_shard(store, "s1.jsonl", line(dup) + line(other) + line(dup))
    records, problems = read_all(store)
    assert ids(records) == [dup["id"], other["id"]]
    assert problems == []


def test_every_kind_of_damage_at_once_through_the_api(store: Path) -> None:
    """All the cases above in one store: the good records come back, newest first, via Lorebook."""
    goods, rels = build_damaged_store(store)
    problems: list[Problem] = []
    book = Lorebook.open(store, env={})
    found = book.actions(limit=None, on_problem=problems.append)
    assert sorted(r["id"] for r in found) == sorted(g["id"] for g in goods)
    assert [r["ts"] for r in found] == sorted((r["ts"] for r in found), reverse=True)
    assert sorted((p.path, p.line) for p in problems) == sorted(rels)


# -- the real CLI ------------------------------------------------------------------------------


def build_damaged_store(root: Path) -> tuple[list[dict[str, object]], list[tuple[str, int]]]:
    """Good records spread over damaged shards; returns the good records and (path, line) of
    every damaged line, in the order `lore check` walks them (file name order, line order)."""
    goods = [record(session="a"), record(session="a"), record(session="b"), record(session="c")]
    a = write_shard(root, "a.jsonl", line(goods[0]) + b"{oops\n" + line(goods[1]) + b"[]\n")
    b = write_shard(root, "b.jsonl", b"\xff\xfe\n" + line(goods[2]) + b'{"v": 2}\n')
    (root / DAY_DIR / "bad.jsonl").mkdir()
    c = write_shard(
        root,
        "c.jsonl",
        line(goods[3]) + line(record(session="c", ts="noon")) + line(record(session="c"))[:40],
    )
    write_shard(root, "empty.jsonl", b"")
    write_shard(root, "ignored.txt", b"{oops\n")
    bad = str(DAY_DIR / "bad.jsonl")
    damaged = [(a, 2), (a, 4), (b, 1), (b, 3), (bad, 0), (c, 2), (c, 3)]
    return goods, damaged


def test_cli_actions_json_on_a_damaged_store(store: Path) -> None:
    goods, damaged = build_damaged_store(store)
    run = lore("actions", "--json", "--limit", "100", env=clean_env(store))
    assert run.code == 0, run.err
    listed = run.json()
    assert isinstance(listed, list)
    assert sorted(r["id"] for r in listed) == sorted(g["id"] for g in goods)
    warnings = [w for w in run.err.splitlines() if w]
    assert len(warnings) == len(damaged)
    assert all(w.startswith("lore: warning: skipped actionlog/2026/11/22/") for w in warnings)
    for path, number in damaged:
        where = f"{path}:{number}: " if number else f"{path}: "
        assert any(where in w for w in warnings), (where, warnings)
    assert f"skipped {DAY_DIR}/a.jsonl:2: invalid JSON: " in run.err
    assert f"skipped {DAY_DIR}/b.jsonl:1: invalid UTF-8 at byte 1" in run.err
    assert f"skipped {DAY_DIR}/bad.jsonl: is a directory, not a shard file" in run.err
    assert f"skipped {DAY_DIR}/c.jsonl:3: torn line at end of file" in run.err
    assert "Traceback" not in run.err


def test_cli_warns_about_the_first_ten_and_counts_the_rest(store: Path) -> None:
    good = record()
    write_shard(store, "s1.jsonl", line(good) + b"{oops\n" * 25)
    run = lore("actions", "--json", env=clean_env(store))
    assert run.code == 0, run.err
    listed = run.json()
    assert isinstance(listed, list)
    assert [r["id"] for r in listed] == [good["id"]]
    warnings = run.err.splitlines()
    assert len(warnings) == 11
    assert warnings[0].startswith(f"lore: warning: skipped {DAY_DIR}/s1.jsonl:2: invalid JSON")
    assert warnings[9].startswith(f"lore: warning: skipped {DAY_DIR}/s1.jsonl:11: invalid JSON")
    assert warnings[10] == (
        "lore: warning: 15 more lines skipped (run `lore check` for all findings)"
    )


def test_cli_check_lists_every_finding_and_exits_1(store: Path) -> None:
    goods, _ = build_damaged_store(store)
    # things only `check` cares about: a duplicate, a record in the wrong day and wrong shard
    dup = goods[0]
    write_shard(
        store,
        "d.jsonl",
        line(record(session="d"))
        + line(record(session="d"))
        + line(record(session="d", ts="2026-11-21T23:59:59.999Z"))
        + line(record(session="elsewhere")),
    )
    with open(store / DAY_DIR / "a.jsonl", "ab") as handle:
        handle.write(line(dup | {"outcome": "failure"}))  # another record with its id
    run = lore("check", env=clean_env(store))
    assert run.code == 1, run.err
    out = run.out.splitlines()
    a, d = f"{DAY_DIR}/a.jsonl", f"{DAY_DIR}/d.jsonl"
    expected_prefixes = [
        f"{a}:2: invalid JSON: ",
        f"{a}:4: not a v1 record: not a JSON object",
        f"{a}:5: duplicate id {dup['id']} (first at {a}:1)",
        f"{DAY_DIR}/b.jsonl:1: invalid UTF-8 at byte 1",
        f"{DAY_DIR}/b.jsonl:3: not a v1 record: unsupported schema version 2",
        f"{DAY_DIR}/bad.jsonl: is a directory, not a shard file",
        f"{DAY_DIR}/c.jsonl:2: not a v1 record: 'ts' is not a UTC timestamp",
        f"{DAY_DIR}/c.jsonl:3: torn line at end of file (invalid JSON: ",
        f"{d}:3: ts 2026-11-21T23:59:59.999Z is not in the shard's day 2026-11-22",
        f"{d}:4: session 'elsewhere' does not match the shard name 'd'",
    ]
    findings = out[:-1]
    assert len(findings) == len(expected_prefixes), run.out
    for got, want in zip(findings, expected_prefixes, strict=True):
        assert got.startswith(want), (got, want)
    # 4 good + a duplicate + 4 in d.jsonl; bad.jsonl counts as a shard that could not be read
    assert out[-1] == "checked 9 records in 6 shards, 0 learnings, 0 expertise files: 10 finding(s)"
    assert "Traceback" not in run.err

    as_json = lore("check", "--json", env=clean_env(store))
    assert as_json.code == 1
    report = as_json.json()
    assert isinstance(report, dict)
    assert report["ok"] is False
    assert [(f["path"], f["line"]) for f in report["findings"]] == [
        (a, 2),
        (a, 4),
        (a, 5),
        (f"{DAY_DIR}/b.jsonl", 1),
        (f"{DAY_DIR}/b.jsonl", 3),
        (f"{DAY_DIR}/bad.jsonl", 0),
        (f"{DAY_DIR}/c.jsonl", 2),
        (f"{DAY_DIR}/c.jsonl", 3),
        (d, 3),
        (d, 4),
    ]


def test_cli_check_exits_0_on_a_clean_store(store: Path) -> None:
    empty = lore("check", env=clean_env(store))
    assert (empty.code, empty.out.strip()) == (
        0,
        "checked 0 records in 0 shards, 0 learnings, 0 expertise files: ok",
    ), empty.err
    write_shard(store, "s1.jsonl", line(record()) + line(record()))
    write_shard(store, "s2.jsonl", line(record(session="s2")))
    write_shard(store, "notes.txt", b"{oops\n")
    run = lore("check", env=clean_env(store))
    assert run.code == 0, run.out + run.err
    assert run.out.strip() == "checked 3 records in 2 shards, 0 learnings, 0 expertise files: ok"
    assert run.err == ""
    as_json = lore("check", "--json", env=clean_env(store))
    assert as_json.code == 0
    assert as_json.json() == {
        "ok": True,
        "shards": 2,
        "records": 3,
        "learnings": 0,
        "expertise": 0,
        "repeated": 0,
        "fixed": 0,
        "findings": [],
    }
