"""`lore actions --json` on a pipe copies the lines of verified shards straight to stdout: the
output is byte for byte the reference, compact `json.dumps` of `Lorebook.actions`, and of a
scan of the shards without any catalog, for an epic whose lines include a secret (redacted on
the way out, never copied), a line written by an older version (other key order, spacing and
escapes), a damaged line, and for an empty epic."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from conftest import LORE, clean_env, lore, on_a_terminal
from lorebook import Lorebook
from lorebook.ids import new_ulid
from lorebook.log import catalog_read

SECRET = "AKIAIOSFODNN7EXAMPLE"  # an AWS access key id: the sanitizer redacts it anywhere
EPIC = "epic-7"
NOTE = "naïve café ✓ " + "x" * 24
# The sessions below run from 2 h before NOW to 16 min after it, days back. NOW is a time of day
# that keeps each within one UTC day whenever the tests run (a session over midnight writes two
# shards, and the tests count shards), and never later than the clock.
_CLOCK = datetime.now(UTC).replace(microsecond=0)
_EVENING = _CLOCK.replace(hour=20, minute=0, second=0)
NOW = min(_CLOCK, _EVENING) if _CLOCK.hour >= 2 else _EVENING - timedelta(days=1)


def _compact(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _scanned(root: Path, **filters: object) -> str:
    """The reference without a catalog: the records a scan of the shards finds, encoded."""
    path = root / ".lore" / "config.yaml"
    path.write_text("catalog:\n  enabled: false\n")
    try:
        return _compact(Lorebook.open(root, env={}).actions(limit=None, **filters))
    finally:
        path.unlink()


def _memo(root: Path) -> dict[str, str]:
    conn = sqlite3.connect(root / ".lore" / "cache" / "catalog.sqlite")
    try:
        return dict(conn.execute("SELECT path, rules FROM clean"))
    finally:
        conn.close()


def _shard_of(root: Path, session: str) -> Path:
    return next(p for p in (root / "actionlog").rglob(f"{session}.jsonl"))


@pytest.fixture
def epic_store(store: Path) -> Path:
    """Four sessions working on one epic (and another): one shard stays canonical, one gets a
    secret pasted in by hand, one a line of an older writer, one a damaged line."""
    book = Lorebook.open(store, env={})
    sessions = []
    for n in range(4):
        start = NOW - timedelta(days=6 - n, hours=2)
        session = book.start_session(agent="PS", project="consilio", now=start)
        for k in range(6):
            session.log(("commit", "deploy", "validate")[k % 3], epic=(EPIC, "epic-8")[k % 2],
                        outcome=("success", "failure")[k % 2], duration_s=k * 0.25,
                        error="port 5000 in use by another" if k % 2 else None,
                        context={"service": f"svc-{n}", "note": NOTE},
                        now=start + timedelta(minutes=10 * k))  # fmt: skip
        book.end_session(session.id, now=start + timedelta(hours=1))
        sessions.append(session.id)
    book.close()
    canonical = _shard_of(store, sessions[0]).read_bytes().splitlines()
    template = json.loads(canonical[1])
    assert template["epic"] == EPIC
    # a secret pasted into a line of the epic by hand: the writer never saw it
    with _shard_of(store, sessions[1]).open("ab") as handle:
        leaked = {**template, "id": new_ulid(), "session": sessions[1],
                  "ts": (NOW - timedelta(days=5)).strftime("%Y-%m-%dT%H:%M:%S.000Z"),
                  "error": f"token {SECRET} rejected"}  # fmt: skip
        handle.write((_compact(dict(sorted(leaked.items()))) + "\n").encode())
    # a line of an older writer: keys unsorted, spaced, non-ASCII escaped
    with _shard_of(store, sessions[2]).open("ab") as handle:
        old = {
            "v": 1,
            "id": new_ulid(),
            "ts": (NOW - timedelta(days=4)).strftime("%Y-%m-%dT%H:%M:%S.000Z"),
            "kind": "action",
            "session": sessions[2],
            **{k: v for k, v in template.items() if k not in ("v", "id", "ts", "session")},
        }
        old["context"] = {"note": "ancien écrit", "service": "svc-old"}
        handle.write((json.dumps(old) + "\n").encode())
    # a damaged line between two good ones
    shard = _shard_of(store, sessions[3])
    lines = shard.read_bytes().splitlines(keepends=True)
    shard.write_bytes(b"".join([*lines[:3], b'{"v": 1, "id": "broken\n', *lines[3:]]))
    time.sleep(2.2)  # files changed this recently are verified on every read, never remembered
    return store


def _cli(root: Path, *args: str) -> tuple[int, str, str]:
    done = lore("actions", *args, env=clean_env(root))
    return done.code, done.out, done.err


def _with_root(root: Path, *args: str) -> tuple[int, str, str]:
    # the store named by `--root` instead of LORE_ROOT: the same answer
    done = lore("--root", str(root), "actions", *args, env=clean_env())
    return done.code, done.out, done.err


def test_the_epic_is_the_reference_byte_for_byte(epic_store: Path) -> None:
    reference = _scanned(epic_store, epic=EPIC)
    found = json.loads(reference)
    assert len(found) == 4 * 3 + 2 and SECRET not in reference
    assert any(r["context"].get("service") == "svc-old" for r in found)
    leaked = [r for r in found if str(r.get("error", "")).startswith("token ")]
    assert len(leaked) == 1 and leaked[0]["error"] != f"token {SECRET} rejected"
    args = ("--epic", EPIC, "--limit", "500", "--json")
    first = _cli(epic_store, *args)  # verifies every shard and remembers the verdicts
    assert first[0] == 0 and first[1] == reference + "\n"
    assert ".jsonl:4: invalid JSON" in first[2]  # the damaged line, reported
    book = Lorebook.open(epic_store, env={})
    clean, verbatim = catalog_read.rules_keys(book.sanitizer)
    memo = _memo(epic_store)
    assert sorted(memo.values()).count(verbatim) == 1, memo  # only the untouched shard
    assert list(memo.values()).count(clean) == 1, memo  # the older writer's: clean, not verbatim
    assert _cli(epic_store, *args) == first  # from the memo: copied lines
    assert _with_root(epic_store, *args) == first
    assert book.actions_json(epic=EPIC, limit=None) == reference
    assert _compact(book.actions(epic=EPIC, limit=None)) == reference
    for limit in (1, 3, 5, 13):
        assert book.actions_json(epic=EPIC, limit=limit) == _compact(found[:limit])


def test_verified_lines_are_not_parsed(epic_store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Once remembered, a canonical shard's lines are copied: only the other shards' records
    are parsed (the secret's, the older writer's, the damaged one's)."""
    lore("actions", "--epic", EPIC, "--json", env=clean_env(epic_store))  # remember
    parsed: list[str] = []
    real = catalog_read.parse_at

    def counting(raw: bytes, rid: str) -> object:
        parsed.append(rid)
        return real(raw, rid)

    monkeypatch.setattr(catalog_read, "parse_at", counting)
    book = Lorebook.open(epic_store, env={})
    text = book.actions_json(epic=EPIC, limit=None)
    rows = json.loads(text)
    copied = [r for r in rows if r["session"] == rows[-1]["session"]]  # the oldest session's
    assert len(copied) == 3
    assert len(parsed) == len(rows) - len(copied)
    assert not {r["id"] for r in copied} & set(parsed)


def test_an_edited_canonical_shard_is_not_copied(epic_store: Path) -> None:
    """A secret written over a remembered canonical line, same size, mtime set back: the ctime
    tells the edit, the shard is verified again and its records redacted."""
    args = ("--epic", EPIC, "--limit", "500", "--json")
    assert _cli(epic_store, *args)[0] == 0
    shard = min((epic_store / "actionlog").rglob("*.jsonl"))
    before = shard.stat()
    text = shard.read_text()
    edited = text.replace("x" * 21, SECRET + " ", 1)  # in the first line of the epic
    assert edited != text and len(edited) == len(text)
    with shard.open("r+") as handle:
        handle.write(edited)
    os.utime(shard, ns=(before.st_atime_ns, before.st_mtime_ns))
    code, out, _ = _cli(epic_store, *args)
    assert code == 0 and SECRET not in out
    assert out == _scanned(epic_store, epic=EPIC) + "\n"


def test_an_empty_epic_and_other_filters(epic_store: Path) -> None:
    for args in (("--epic", "epic-none"), ("--epic", EPIC, "--outcome", "failure"),
                 ("--type", "deploy", "--limit", "2"), ("--since", "5d", "--epic", "epic-8"),
                 ("--include-archive", "--epic", EPIC)):  # fmt: skip
        fast = _cli(epic_store, *args, "--json")
        assert fast == _with_root(epic_store, *args, "--json")
        assert fast[0] == 0
    assert _cli(epic_store, "--epic", "epic-none", "--json")[1] == "[]\n"
    book = Lorebook.open(epic_store, env={})
    assert book.actions_json(epic="epic-none", limit=None) == "[]"
    assert book.actions_json(epic=EPIC, outcome="failure", limit=None) == _scanned(
        epic_store, epic=EPIC, outcome="failure"
    )


def test_a_terminal_still_gets_indented_json(epic_store: Path) -> None:
    args = ["actions", "--epic", EPIC, "--limit", "500", "--json"]
    code, shown, _ = on_a_terminal([*LORE, *args], clean_env(epic_store))
    assert code == 0 and shown.startswith("[\n  {")
    assert json.loads(shown) == json.loads(_scanned(epic_store, epic=EPIC))


def test_tricky_values_are_copied_as_json_dumps_prints_them(store: Path) -> None:
    """Floats, big numbers, escapes, control characters, non-BMP text and nesting, as the
    writer stores them: the shard is canonical, and its copied lines are `json.dumps`'s."""
    values = [0.1, 1e16, -0.0, 1e-7, 2**70, -(2**63), "tab\there", 'quote " back \\ slash',
              "line\nbreak \u2028 sep", "\x01\x1f ctrl", "emoji 🦜 and ñ", [1, [2.5, {"a": None}]],
              {"z": 1, "a": {"é": True}}, "", "</script>"]  # fmt: skip
    book = Lorebook.open(store, env={})
    session = book.start_session(agent="PS", project="consilio", now=NOW - timedelta(days=2))
    for n, value in enumerate(values):
        session.log("validate", epic=EPIC, context={"value": value}, duration_s=n / 3,
                    now=NOW - timedelta(days=2) + timedelta(minutes=n + 1))  # fmt: skip
    book.close()
    time.sleep(2.2)  # old enough to be remembered
    reference = _scanned(store, epic=EPIC)
    assert len(json.loads(reference)) == len(values)
    args = ("--epic", EPIC, "--limit", "500", "--json")
    assert _cli(store, *args) == (0, reference + "\n", "")
    _, verbatim = catalog_read.rules_keys(Lorebook.open(store, env={}).sanitizer)
    assert list(_memo(store).values()) == [verbatim]
    assert _cli(store, *args) == (0, reference + "\n", "")  # copied from the remembered shard
    assert Lorebook.open(store, env={}).actions_json(epic=EPIC, limit=None) == reference
