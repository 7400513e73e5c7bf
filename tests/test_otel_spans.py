"""`lorebook.otel`'s pure parts: records -> span data (GenAI conventions, ids from record ids,
one span per tracked action, children under their parent, failures as events), content
modes, and where the endpoint comes from."""

from __future__ import annotations

import json
from typing import Any

import pytest

from lorebook.errors import UsageError
from lorebook.otel import spans
from lorebook.otel.run import resolve_endpoint
from lorebook.redact.sanitize import Sanitizer

SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
REPO = spans.Repository("github.com/acme/shop", "https://github.com/acme/shop", "c0ffee" * 6)
S = "sess-1"


def rec(id: str, ts: str, **fields: Any) -> dict[str, Any]:
    base = {"v": 1, "kind": "action", "id": id, "ts": ts, "session": S, "agent": "claude-code",
            "project": "shop", "type": "tool_call", "category": "execution",
            "outcome": "success", "context": {}, "error": None, "duration_s": None,
            "parent": None}  # fmt: skip
    return {**base, **fields}


def session_records() -> list[dict[str, Any]]:
    return [
        {"v": 1, "kind": "session", "event": "start", "id": "E1", "session": S,
         "ts": "2026-11-22T10:00:00.000Z", "agent": "claude-code", "project": "shop",
         "meta": {"model": "claude-opus-4-5", "branch": "main"}},
        rec("A1", "2026-11-22T10:00:01.000Z", type="prompt", category="other",
            context={"prompt": f"deploy with {SECRET}"}),
        rec("A2", "2026-11-22T10:00:02.000Z", type="spawn", outcome="in_progress",
            context={"agent_type": "reviewer", "agent_id": "ag1"}),
        rec("A3", "2026-11-22T10:00:03.500Z", context={
            "tool": "Bash", "tool_use_id": "toolu_1",
            "input": {"command": f"GITHUB_TOKEN={SECRET} git push"}}, parent="A2"),
        rec("A4", "2026-11-22T10:00:05.000Z", type="spawn", parent="A2",
            context={"agent_type": "reviewer"}),
        rec("A5", "2026-11-22T10:00:06.000Z", outcome="failure", error=f"bad token {SECRET}",
            context={"tool": "Read", "tool_use_id": "toolu_2",
                     "input": {"file_path": "src/secret_plans.py"}}, duration_s=0.25),
        rec("A6", "2026-11-22T10:00:07.000Z", type="commit", category="git", parent="GONE"),
        {"v": 1, "kind": "session", "event": "end", "id": "E2", "session": S, "reason": "normal",
         "ts": "2026-11-22T10:00:09.000Z", "agent": "claude-code", "project": "shop"},
    ]  # fmt: skip


def by_action(found: list[spans.SpanData]) -> dict[str, spans.SpanData]:
    return {s.attributes.get("lore.action.id", "session"): s for s in found}


def test_a_session_is_one_trace_of_genai_spans() -> None:
    found = spans.session_spans(S, session_records(), REPO)
    got = by_action(found)
    root = got["session"]
    assert len(found) == 6  # the session, A1, the A2/A4 pair as one span, A3, A5, A6
    assert set(got) == {"session", "A1", "A2", "A3", "A5", "A6"}
    assert {s.trace_id for s in found} == {spans.trace_id(REPO.key, S)}
    assert root.name == "invoke_agent claude-code" and root.parent_id is None
    assert root.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert root.attributes["gen_ai.conversation.id"] == S == root.attributes["session.id"]
    assert root.attributes["vcs.repository.url.full"] == "https://github.com/acme/shop"
    assert root.attributes["vcs.ref.head.revision"] == REPO.commit
    assert root.attributes["gen_ai.request.model"] == "claude-opus-4-5"
    assert root.start == spans.ts_ns("2026-11-22T10:00:00.000Z")
    assert root.end == spans.ts_ns("2026-11-22T10:00:09.000Z")
    # the tracked subagent: one span with the start's id, from start to outcome
    agent = got["A2"]
    assert agent.name == "invoke_agent reviewer" and agent.span_id == spans.span_id(
        root.trace_id, "A2"
    )
    assert agent.attributes["gen_ai.agent.name"] == "reviewer"
    assert agent.attributes["gen_ai.agent.id"] == "ag1"
    assert agent.attributes["lore.outcome"] == "success"
    assert (agent.end - agent.start) == 3_000_000_000
    # a child action under its parent; an unknown parent falls back to the session
    assert got["A3"].parent_id == agent.span_id
    assert got["A3"].name == "execute_tool Bash"
    assert got["A3"].attributes["gen_ai.tool.name"] == "Bash"
    assert got["A3"].attributes["gen_ai.tool.call.id"] == "toolu_1"
    assert got["A6"].parent_id == root.span_id and got["A1"].parent_id == root.span_id
    # a failure: status ERROR and an exception event; the duration gives the start
    failed = got["A5"]
    assert failed.error == "execute_tool Read failed"
    assert failed.events == (
        (
            "exception",
            failed.end,
            {
                "exception.type": "tool_call.failure",
                "exception.message": "execute_tool Read failed",
            },
        ),
    )
    assert failed.end - failed.start == 250_000_000
    assert got["A1"].error is None and root.error is None


def test_ids_are_the_same_on_every_run_and_differ_per_repository() -> None:
    first = spans.session_spans(S, session_records(), REPO)
    again = spans.session_spans(S, list(reversed(session_records())), REPO)
    assert [(s.trace_id, s.span_id, s.parent_id) for s in first] == [
        (s.trace_id, s.span_id, s.parent_id) for s in again]  # fmt: skip
    other = spans.Repository("github.com/acme/other")
    assert spans.trace_id(other.key, S) != first[0].trace_id
    assert all(s.span_id != 0 and s.trace_id != 0 for s in first)


def values(found: list[spans.SpanData]) -> str:
    return json.dumps([[s.name, s.attributes, s.error, s.events] for s in found])


def test_content_stays_out_by_default_and_is_redacted_then_cut_when_asked() -> None:
    plain = values(spans.session_spans(S, session_records(), REPO))
    for content in (SECRET, "git push", "secret_plans.py", "deploy with", "bad token"):
        assert content not in plain
    sanitizer = Sanitizer()
    shown = spans.session_spans(S, session_records(), REPO, lambda t: sanitizer.redact_text(t)[0])
    text = values(shown)
    assert SECRET not in text and SECRET[:12] not in text
    assert "git push" in text and "secret_plans.py" in text and "bad token" in text
    got = by_action(shown)
    assert "GITHUB_TOKEN" in got["A3"].attributes["gen_ai.tool.call.arguments"]
    assert got["A5"].error is not None and got["A5"].error.startswith("bad token")


def test_redacted_content_is_cut_after_redaction() -> None:
    long = f"{'x' * 2000} {SECRET}"
    command = "y" * (spans.LIMIT - 40) + " " + SECRET
    records = [
        rec(
            "B1",
            "2026-11-22T10:00:01.000Z",
            context={"tool": "Bash", "input": {"command": command}},
        ),
        rec("B2", "2026-11-22T10:00:02.000Z", type="note", context={"text": long}),
    ]
    sanitizer = Sanitizer()
    found = spans.session_spans(S, records, REPO, lambda t: sanitizer.redact_text(t)[0])
    got = by_action(found)
    arguments = got["B1"].attributes["gen_ai.tool.call.arguments"]
    assert len(arguments) <= spans.LIMIT and SECRET[:8] not in arguments
    assert len(got["B2"].attributes["lore.context"]) <= spans.LIMIT


def test_the_endpoint_comes_from_the_option_then_the_standard_variables_then_config() -> None:
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318",
           "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://tempo:4318/custom/traces"}  # fmt: skip
    assert resolve_endpoint("http://a:4318", env, None)[0] == "http://a:4318/v1/traces"
    assert resolve_endpoint(None, env, None)[0] == "http://tempo:4318/custom/traces"
    del env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]
    assert resolve_endpoint(None, env, None)[0] == "http://collector:4318/v1/traces"
    assert resolve_endpoint(None, {}, "https://c/v1/traces")[0] == "https://c/v1/traces"
    url, shown = resolve_endpoint("https://user:tok3n@host:4318/?k=v", {}, None)
    assert "tok3n" in url and "tok3n" not in shown and shown == "https://host:4318/v1/traces"


@pytest.mark.parametrize("bad", ["not a url", "ftp://host/x", "http://", "http://h:port/"])
def test_a_bad_endpoint_is_one_line(bad: str) -> None:
    with pytest.raises(UsageError, match="not an http"):
        resolve_endpoint(bad, {}, None)
    with pytest.raises(UsageError, match="no endpoint"):
        resolve_endpoint(None, {}, None)
