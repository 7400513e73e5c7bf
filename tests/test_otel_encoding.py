"""What `lore otel export` puts on the wire, span for span, held against a reference taken
before the export was made faster: how the SDK spans are built and batched may change, the
spans the receiver decodes may not. The real `lore` posts to a local OTLP sink.

Regenerate the reference (only when the spans are meant to change) with
`LORE_WRITE_OTEL_REFERENCE=1 pytest tests/test_otel_encoding.py`."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from conftest import clean_env, git, lore
from lorebook import Lorebook
from lorebook.otel import SCHEMA_URL
from test_otel_export import SECRET, Sink

REFERENCE = Path(__file__).parent / "otel_reference" / "spans.json"
REMOTE = "https://example.invalid/acme/shop.git"


def day_ts(day: int, second: int, ms: int = 0) -> str:
    return f"2026-11-{day:02d}T{10 + second // 3600:02d}:{second // 60 % 60:02d}:" \
           f"{second % 60:02d}.{ms:03d}Z"  # fmt: skip


def action(session: str, n: int, second: int, **fields: Any) -> dict[str, Any]:
    base = {"v": 1, "kind": "action", "id": f"01K{sum(map(ord, session)):05d}{n:018d}",
            "ts": day_ts(20, second, n % 1000), "session": session, "agent": "claude-code",
            "project": "shop", "type": "tool_call", "category": "execution",
            "outcome": "success", "error": None, "duration_s": None, "parent": None,
            "epic": None, "issue": None, "meta": {},
            "context": {"tool": "Bash", "tool_use_id": f"toolu_{session}_{n}",
                        "input": {"command": "make test"}}}  # fmt: skip
    return {**base, **fields}


def event(session: str, name: str, second: int, **fields: Any) -> dict[str, Any]:
    number = 0 if name == "start" else 999
    return {"v": 1, "kind": "session", "event": name,
            "id": f"01E{sum(map(ord, session)):05d}{number:018d}", "ts": day_ts(20, second),
            "session": session,
            "agent": "claude-code", "project": "shop", "meta": {}, **fields}  # fmt: skip


def sessions() -> dict[str, list[dict[str, Any]]]:
    """Every shape the mapping knows: tool calls with input and response, tracked subagents
    (start and outcome), children of an action and of an unknown one, failures with and
    without error text, durations, epics and issues, a model and branch, sessions ended
    normally, by an error, or still open, one with no session events at all."""
    out: dict[str, list[dict[str, Any]]] = {}
    for k, reason in enumerate(("normal", "error", "crash", None, "none")):
        s = f"s-{k}"
        rows = [] if reason == "none" else [event(s, "start", 0, meta={
            "model": "claude-opus-4-5", "branch": f"feat/{k}"})]  # fmt: skip
        for n in range(1, 11):
            fields: dict[str, Any] = {}
            if n % 10 == 1:
                fields = {"type": "spawn", "outcome": "in_progress", "context": {
                    "agent_type": "reviewer", "agent_id": f"ag{n}"}}  # fmt: skip
            elif n % 10 == 2:
                fields = {"type": "spawn", "parent": action(s, n - 1, 0)["id"],
                          "context": {"agent_type": "reviewer"}}  # fmt: skip
            elif n % 10 == 3:
                fields = {"parent": action(s, n - 2, 0)["id"], "epic": "E-1", "issue": "I-2"}
            elif n % 10 == 4:
                fields = {"type": "commit", "category": "git", "parent": "01KGONE",
                          "context": {"message": f"push with {SECRET}"}}  # fmt: skip
            elif n % 10 == 5:
                fields = {"outcome": "failure", "error": f"bad token {SECRET}",
                          "duration_s": 0.25}  # fmt: skip
            elif n % 10 == 6:
                fields = {"outcome": "failure", "type": "deploy", "context": {}}
            elif n % 10 == 7:
                fields = {"context": {"tool": "Read", "tool_use_id": f"t{n}",
                                      "input": {"file_path": "src/a.py"},
                                      "response": "x" * 1100}, "duration_s": 3}  # fmt: skip
            rows.append(action(s, n, 10 * n, **fields))
        if reason not in (None, "none"):
            rows.append(event(s, "end", 500, reason=reason))
        out[s] = rows
    return out


@pytest.fixture
def fixed_store(tmp_path: Path) -> Path:
    """A store whose every exported byte is fixed: a remote of its own, no commit (so no
    revision), the sessions above written straight into shards (one session across two
    days), and one invalid line."""
    root = tmp_path / "fixed"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "remote", "add", "origin", REMOTE)
    Lorebook.init(root, env={})
    for session, rows in sessions().items():
        for day, part in ((20, rows[:7]), (21, rows[7:])):
            shard = root / "actionlog" / "2026" / "11" / f"{day:02d}" / f"{session}.jsonl"
            shard.parent.mkdir(parents=True, exist_ok=True)
            text = "".join(json.dumps(r, sort_keys=True, separators=(",", ":")) + "\n"
                           for r in part)  # fmt: skip
            shard.write_text(text + ("{not json\n" if session == "s-1" else ""), "utf-8")
    return root


def received(store: Path, content: str) -> list[dict[str, Any]]:
    """The spans a receiver decodes from one export, in (trace, span) order, as dicts."""
    from google.protobuf.json_format import MessageToDict

    sink = Sink()
    try:
        done = lore("otel", "export", "--endpoint", sink.url, "--content", content,
                    env=clean_env(store, OTEL_RESOURCE_ATTRIBUTES=""), timeout=120)  # fmt: skip
        assert done.code == 0, done.err
        for request in sink.requests:
            for resource_spans in request.resource_spans:
                assert resource_spans.schema_url == SCHEMA_URL
                names = {(kv.key, kv.value.string_value)
                         for kv in resource_spans.resource.attributes}  # fmt: skip
                assert ("service.name", "lorebook") in names
                assert [s.scope.name for s in resource_spans.scope_spans] == ["lorebook"]
                assert resource_spans.scope_spans[0].schema_url == SCHEMA_URL
        got = [MessageToDict(span, preserving_proto_field_name=True) for span in sink.spans()]
    finally:
        sink.close()
    return sorted(got, key=lambda s: (s["trace_id"], s["span_id"]))


def written(got: dict[str, list[dict[str, Any]]]) -> str:
    """The reference as JSON with one span a line (a change shows as the spans it touches)."""
    modes = [f'"{mode}": [\n' + ",\n".join(json.dumps(s, sort_keys=True) for s in spans)
             + "\n]" for mode, spans in got.items()]  # fmt: skip
    return "{\n" + ",\n".join(modes) + "\n}\n"


def test_the_spans_on_the_wire_are_those_of_the_reference(fixed_store: Path) -> None:
    got = {content: received(fixed_store, content) for content in ("none", "redacted")}
    if os.environ.get("LORE_WRITE_OTEL_REFERENCE"):
        REFERENCE.parent.mkdir(exist_ok=True)
        REFERENCE.write_text(written(got), "utf-8")
    want = json.loads(REFERENCE.read_text("utf-8"))
    assert len(got["none"]) == len(want["none"]) == 5 + 5 * 9  # sessions + unpaired actions
    for content in ("none", "redacted"):
        for mine, theirs in zip(got[content], want[content], strict=True):
            assert mine == theirs
    assert SECRET not in json.dumps(got) and SECRET[:12] not in json.dumps(got)
