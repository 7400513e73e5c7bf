"""The shipped JSON Schema and the reader's validator agree on what a v1 line is."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from lorebook import Lorebook
from lorebook.model import validate_record

SCHEMA = json.loads(
    (Path(__file__).parent.parent / "docs" / "schema" / "action-v1.schema.json").read_text()
)


def schema_ok(record: Any) -> bool:
    return not list(jsonschema.Draft202012Validator(SCHEMA).iter_errors(record))


def written_records(book: Lorebook) -> list[dict[str, Any]]:
    with book.session(agent="PS", project="consilio") as s:
        opened = s.log("spawn", outcome="in_progress", context={"agent_id": "a1"}, epic="e-1")
        s.log("spawn", parent=opened["id"], duration_s=2.5, issue="ISS-1")
        s.log("deploy", outcome="failure", error="port in use", context={"port": 5000})
    book.log("commit", context={"commit_hash": "a1b2c3d"})
    paths = sorted(book.layout.actionlog.rglob("*.jsonl"))
    return [json.loads(line) for p in paths for line in p.read_text().splitlines()]


def test_everything_the_writer_writes_is_valid_for_both(book: Lorebook) -> None:
    records = written_records(book)
    assert {r["kind"] for r in records} == {"session", "action"}
    assert {r.get("event") for r in records if r["kind"] == "session"} == {"start", "end"}
    for record in records:
        assert validate_record(record) is None, record
        assert schema_ok(record), record


def _mutations(base: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    def change(**kw: Any) -> dict[str, Any]:
        out = dict(base)
        for key, value in kw.items():
            if value is ...:
                out.pop(key, None)
            else:
                out[key] = value
        return out

    return [
        ("version 2", change(v=2)),
        ("no id", change(id=...)),
        ("id not a ULID", change(id="not-a-ulid")),
        ("ts without millis", change(ts="2026-11-22T10:00:00Z")),
        ("bad session id", change(session="has space")),
        ("unknown kind", change(kind="note")),
        ("bad outcome", change(outcome="done")),
        ("type with capitals", change(type="Commit")),
        ("negative duration", change(duration_s=-1)),
        ("context is a list", change(context=[1])),
        ("meta is a string", change(meta="x")),
        ("agent is a number", change(agent=3)),
    ]


@pytest.mark.parametrize("index", range(12))
def test_both_reject_the_same_broken_records(book: Lorebook, index: int) -> None:
    action = next(r for r in written_records(book) if r["kind"] == "action")
    name, broken = _mutations(action)[index]
    assert validate_record(broken) is not None, name
    assert not schema_ok(broken), name
