"""A session list read from the shards summarizes the raw records and then redacts the four
fields a summary shows (`redact_summaries`), instead of redacting every field of every record
first: checked against that textbook form on generated sessions whose free fields hold secrets,
and end to end through `lore sessions --json` on shards edited by hand."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import clean_env, lore
from lorebook.log.sessions import redact_summaries, summarize
from lorebook.log.writer import redacted
from lorebook.redact.sanitize import Sanitizer

NOW = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)
GHP = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
STRIPE = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
TEXTS = st.sampled_from(
    [None, "", "claude", "odin-api", "normal", "timeout", "stop", "feature", GHP, STRIPE,
     f"deploy with {GHP}", "user@example.com"]
)  # fmt: skip


@st.composite
def records(draw: Any) -> list[dict[str, Any]]:
    """One or more sessions' records in time order: actions (tracked pairs among them) and
    start and end events, any free field possibly holding a secret."""
    out: list[dict[str, Any]] = []
    for n in range(draw(st.integers(1, 25))):
        ts = (NOW - timedelta(minutes=draw(st.integers(0, 600)))).strftime("%Y-%m-%dT%H:%M:%S.000Z")
        record: dict[str, Any] = {
            "v": 1,
            "id": f"01M8D4VJ9ADXYVPCHG5NP3C{n:03d}",
            "ts": ts,
            "session": draw(st.sampled_from(["s-one", "s-two"])),
            "agent": draw(TEXTS),
            "project": draw(TEXTS),
            "meta": {},
        }
        if draw(st.booleans()):
            record.update(kind="session", event=draw(st.sampled_from(["start", "end"])))
            record["reason"] = draw(TEXTS)
            record["session_type"] = draw(TEXTS)
        else:
            record.update(kind="action", type=draw(st.sampled_from(["commit", "deploy"])))
            record["outcome"] = draw(st.sampled_from(["success", "failure", "in_progress"]))
            parents = [r["id"] for r in out if r.get("outcome") == "in_progress"]
            record["parent"] = draw(st.sampled_from([None, *parents]))
            record["context"] = {"command": draw(TEXTS)}
        out.append(record)
    return out


@settings(max_examples=400, deadline=None)
@given(found=records())
def test_summaries_redacted_after_equal_records_redacted_before(
    found: list[dict[str, Any]],
) -> None:
    sanitizer = Sanitizer()
    textbook = summarize(redacted(sanitizer, json.loads(json.dumps(found))), NOW, 30)
    fast = redact_summaries(sanitizer, summarize(json.loads(json.dumps(found)), NOW, 30))
    assert [s.to_dict() for s in fast] == [s.to_dict() for s in textbook]


def test_a_field_too_long_is_cut_whatever_else_the_record_holds() -> None:
    record = {"v": 1, "id": "01M8D4VJ9ADXYVPCHG5NP3C000", "ts": "2026-11-27T11:00:00.000Z",
              "session": "s-one", "kind": "action", "type": "commit", "outcome": "success",
              "project": "x" * 50_000, "meta": {}}  # fmt: skip
    (info,) = redact_summaries(Sanitizer(), summarize([record], NOW, 30))
    assert info.project is not None and 0 < len(info.project) < 50_000


def test_a_secret_written_into_a_shard_by_hand_never_reaches_the_session_list(
    store: Path,
) -> None:
    env = clean_env(store)
    assert lore("session", "start", "--id", "s-hand", env=env).code == 0
    assert lore("log", "commit", "--session", "s-hand", env=env).code == 0
    assert lore("session", "end", "--session", "s-hand", env=env).code == 0
    (shard,) = (store / "actionlog").rglob("s-hand.jsonl")
    lines = [json.loads(line) for line in shard.read_text().splitlines()]
    lines[0]["agent"] = GHP  # the writer refuses these; a hand edit does not
    lines[0]["session_type"] = f"run {STRIPE}"
    lines[-1]["reason"] = GHP
    shard.write_text("".join(json.dumps(line) + "\n" for line in lines))
    config = store / ".lore" / "config.yaml"
    for catalog in ("true", "false"):  # through the catalog, and a scan of the shards
        config.write_text(f"catalog:\n  enabled: {catalog}\n", encoding="utf-8")
        result = lore("sessions", "--json", env=env)
        assert result.code == 0, result.err
        for secret in (GHP, STRIPE, GHP[:12], STRIPE[:12]):
            assert secret not in result.out
        (row,) = (s for s in json.loads(result.out) if s["id"] == "s-hand")
        assert row["status"] == "ended" and row["action_count"] == 1
        assert "REDACTED" in (row["agent"] or "") and "REDACTED" in (row["end_reason"] or "")
