"""`lore otel export` against real receivers: Arize Phoenix (the spans read back through its
REST API and compared with the log) and a small local OTLP sink (what was posted, a receiver
that refuses a batch, the watermark), with the real `lore` in subprocesses."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import threading
import time
import urllib.request
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from conftest import assert_one_error_line, clean_env, git, lore, require_real, stop_server, stored
from lorebook import Lorebook
from lorebook.otel import spans
from lorebook.otel.batches import BATCH_BYTES
from search_fixtures import free_port
from test_import_sessions import env_for, picked, place

SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
AWS = "AKIA" + "QWERTYUIOPASDFGH"
PHOENIX = "20.26.1"  # the arize-phoenix .ci/run installs


# -- the receivers -----------------------------------------------------------------------------


@pytest.fixture(scope="session")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real Phoenix server on a free loopback port (its own venv: LORE_PHOENIX_DIR, else
    ~/.cache/lorebook-test/phoenix), sqlite in a temp working dir; its base URL."""
    venv = Path(os.environ.get("LORE_PHOENIX_DIR")
                or Path.home() / ".cache/lorebook-test/phoenix")  # fmt: skip
    exe = venv / "bin" / "phoenix"
    if not exe.is_file():
        require_real(f"Phoenix is not installed in {venv} (see .ci/run)")
    work = tmp_path_factory.mktemp("phoenix")
    port, grpc = free_port(), free_port()
    env = {**clean_env(), "PHOENIX_WORKING_DIR": str(work), "PHOENIX_PORT": str(port),
           "PHOENIX_HOST": "127.0.0.1", "PHOENIX_GRPC_PORT": str(grpc)}  # fmt: skip
    env.pop("PHOENIX_SQL_DATABASE_URL", None)
    log = open(work / "server.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen([str(exe), "serve"], env=env, cwd=work, stdout=log,
                            stderr=subprocess.STDOUT)  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    try:
        while True:
            try:
                with urllib.request.urlopen(f"{url}/healthz", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"phoenix serve: {(work / 'server.log').read_text()[-800:]}")
            time.sleep(0.5)
        yield url
    finally:
        stop_server(proc, log, 30)


def phoenix_spans(url: str, project: str, expected: int) -> list[dict[str, Any]]:
    """Every span of `project`, read through Phoenix's REST API (paged), once `expected`
    are there (ingestion is asynchronous) or after 30 s."""
    deadline = time.monotonic() + 30
    while True:
        found: list[dict[str, Any]] = []
        cursor = None
        while True:
            query = f"{url}/v1/projects/{project}/spans?limit=1000"
            query += f"&cursor={cursor}" if cursor else ""
            try:
                with urllib.request.urlopen(query, timeout=10) as answer:
                    page = json.load(answer)
            except urllib.error.HTTPError as exc:  # the project appears with its first span
                if exc.code != 404:
                    raise
                page = {"data": [], "next_cursor": None}
            found += page["data"]
            cursor = page.get("next_cursor")
            if not cursor:
                break
        if len(found) >= expected or time.monotonic() > deadline:
            return found
        time.sleep(0.5)


class Sink:
    """A local OTLP/HTTP receiver: answers each POST with the next status of `answers`
    (then 200), keeping the decoded requests and their headers."""

    def __init__(self, answers: tuple[int, ...] = ()) -> None:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
        )

        self.answers, self.requests, self.headers = list(answers), [], []  # type: ignore[var-annotated]
        sink = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                status = sink.answers.pop(0) if sink.answers else 200
                if status == 200:
                    sink.requests.append(ExportTraceServiceRequest.FromString(body))
                    sink.headers.append(dict(self.headers))
                self.send_response(status)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def spans(self) -> list[Any]:
        return [span for request in self.requests for rs in request.resource_spans
                for ss in rs.scope_spans for span in ss.spans]  # fmt: skip

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def sink() -> Iterator[Sink]:
    made = Sink()
    yield made
    made.close()


# -- stores ------------------------------------------------------------------------------------


def log(store: Path, *args: str) -> str:
    done = lore("log", *args, env=clean_env(store, LORE_AGENT="PS", LORE_SESSION="s-build"))
    assert done.code == 0, done.err
    return done.out.strip()


def plant(store: Path) -> None:
    """A session of our own: a tracked deploy with a child tool call, a failure, and a line
    an agent appended itself with secrets in it (export redacts again, whatever the log has).
    The store gets a remote of its own: the test repositories' first commits are alike."""
    git(store, "remote", "add", "origin", f"https://example.invalid/acme/{uuid.uuid4().hex}.git")
    start = log(store, "deploy", "--outcome", "in_progress")
    log(
        store,
        "tool_call",
        "--parent",
        start,
        "--context",
        '{"tool": "Bash", "tool_use_id": "toolu_CHILD", "input": {"command": "make deploy"}}',
    )
    log(store, "deploy", "--parent", start, "--outcome", "failure", "--error", "rollout stuck")
    shard = next(p for p in (store / "actionlog").rglob("s-build.jsonl"))
    raw = {"v": 1, "kind": "action", "id": "01JRAWRAWRAWRAWRAWRAWRAWRA", "ts": time.strftime(
        "%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()), "session": "s-build", "agent": "PS",
        "project": "p", "type": "tool_call", "category": "execution", "outcome": "failure",
        "context": {"tool": "Bash", "tool_use_id": "toolu_PLANTED",
                    "input": {"command": f"GITHUB_TOKEN={SECRET} git push"}},
        "error": f"fatal: bad credentials {AWS}", "duration_s": 1.5, "parent": None,
        "epic": None, "issue": None, "meta": {}}  # fmt: skip
    with open(shard, "a", encoding="utf-8") as out:
        out.write(json.dumps(raw, sort_keys=True, separators=(",", ":")) + "\n")


@pytest.fixture
def claude_store(store: Path, tmp_path: Path) -> Path:
    """A store holding a real Claude Code session (six subagents) imported by `lore import
    claude`, and `plant`'s session."""
    session = picked()[2]
    place(session, tmp_path / "claude", store)
    done = lore("import", "claude", env=env_for(store, tmp_path), timeout=300)
    assert done.code == 0, done.err
    plant(store)
    return store


def expected_spans(store: Path) -> dict[str, Any]:
    """What the log says the export holds: per session, its records' spans (the mapping's
    own pure function is tested alone in test_otel_spans.py)."""
    by_session: dict[str, list[dict[str, Any]]] = {}
    for record in stored(store):
        by_session.setdefault(record["session"], []).append(record)
    return by_session


def export(store: Path, *args: str, **env: str) -> Any:
    return lore("otel", "export", *args, env=clean_env(store, **env), timeout=120)


# -- Phoenix -----------------------------------------------------------------------------------


def test_phoenix_holds_each_session_as_a_genai_trace(phoenix: str, claude_store: Path) -> None:
    project = f"lore-{uuid.uuid4().hex[:8]}"
    attrs = f"openinference.project.name={project}"
    done = export(claude_store, "--endpoint", phoenix, "--json", OTEL_RESOURCE_ATTRIBUTES=attrs)
    assert done.code == 0, done.err
    sent = done.json()
    records = expected_spans(claude_store)
    actions = [r for rs in records.values() for r in rs if r["kind"] == "action"]
    pair_outcomes = [r for r in actions if r["parent"] and r["outcome"] != "in_progress"
                     and any(s["id"] == r["parent"] and s["outcome"] == "in_progress"
                             and s["type"] == r["type"] for s in actions)]  # fmt: skip
    count = len(records) + len(actions) - len(pair_outcomes)
    assert sent["sessions"] == len(records) == 2 and sent["spans"] == count
    got = phoenix_spans(phoenix, project, count)
    assert len(got) == count
    ids = {s["context"]["span_id"] for s in got}
    assert len(ids) == count
    roots = {s["context"]["trace_id"]: s for s in got if s["parent_id"] is None}
    assert len(roots) == 2
    for root in roots.values():
        attributes = root["attributes"]
        assert root["name"].startswith("invoke_agent ")
        assert attributes["gen_ai.operation.name"] == "invoke_agent"
        assert attributes["session.id"] == attributes["gen_ai.conversation.id"]
        assert attributes["vcs.ref.head.revision"] == git(claude_store, "rev-parse",
                                                          "HEAD").strip()  # fmt: skip
        assert attributes["vcs.repository.url.full"].startswith("https://example.invalid/acme/")
    by_action = {s["attributes"].get("lore.action.id"): s for s in got}
    for record in actions:
        if record in pair_outcomes:
            assert record["id"] not in by_action  # carried by its start's span
            continue
        span = by_action[record["id"]]
        assert span["context"]["span_id"] == format(
            spans.span_id(int(span["context"]["trace_id"], 16), record["id"]), "016x"
        )
        root = roots[span["context"]["trace_id"]]
        assert root["attributes"]["session.id"] == record["session"]
        parent = record["parent"]
        trace = int(span["context"]["trace_id"], 16)
        want = (format(spans.span_id(trace, parent), "016x") if parent and parent in by_action
                else root["context"]["span_id"])  # fmt: skip
        assert span["parent_id"] == want
        if record["type"] == "tool_call":
            assert span["name"] == f"execute_tool {record['context']['tool']}"
            assert span["attributes"]["gen_ai.tool.name"] == record["context"]["tool"]
            assert span["attributes"]["gen_ai.tool.call.id"] == record["context"]["tool_use_id"]
    # the six subagents of the real session: one invoke_agent span each, start to outcome
    agents = [s for s in got if s["attributes"].get("lore.action.type") == "spawn"]
    assert len(agents) == 6 and all(s["name"].startswith("invoke_agent ") for s in agents)
    assert all(s["attributes"]["lore.outcome"] == "success" for s in agents)
    # the child tool call under the tracked deploy; the failures carry an exception event
    deploy = next(s for s in got if s["name"] == "deploy")
    child = next(s for s in got if s["attributes"].get("gen_ai.tool.call.id") == "toolu_CHILD")
    assert child["parent_id"] == deploy["context"]["span_id"]
    for failed in (deploy, by_action["01JRAWRAWRAWRAWRAWRAWRAWRA"]):
        assert failed["status_code"] == "ERROR"
        assert [e["name"] for e in failed["events"]] == ["exception"]
        assert failed["events"][0]["attributes"]["exception.type"].endswith(".failure")
    text = json.dumps(got)
    for content in (SECRET, SECRET[:12], AWS, "git push", "make deploy", "rollout stuck"):
        assert content not in text
    # a resend is the same trace: nothing new in Phoenix
    again = export(claude_store, "--endpoint", phoenix, OTEL_RESOURCE_ATTRIBUTES=attrs)
    assert again.code == 0, again.err
    time.sleep(2)
    assert {s["context"]["span_id"] for s in phoenix_spans(phoenix, project, count)} == ids
    assert len(phoenix_spans(phoenix, project, count)) == count
    # --since-last: the watermark says it all arrived
    rerun = export(claude_store, "--endpoint", phoenix, "--since-last", "--json",
                   OTEL_RESOURCE_ATTRIBUTES=attrs)  # fmt: skip
    assert rerun.code == 0, rerun.err
    assert rerun.json()["spans"] == 0 and rerun.json()["unchanged_sessions"] == 2


def test_phoenix_redacted_content_keeps_no_secret(phoenix: str, store: Path) -> None:
    plant(store)
    project = f"lore-{uuid.uuid4().hex[:8]}"
    done = export(store, "--endpoint", phoenix, "--content", "redacted",
                  OTEL_RESOURCE_ATTRIBUTES=f"openinference.project.name={project}")  # fmt: skip
    assert done.code == 0, done.err
    got = phoenix_spans(phoenix, project, 4)
    assert len(got) == 4  # the session, the tracked deploy, its tool call, the planted call
    text = json.dumps(got)
    assert SECRET not in text and SECRET[:12] not in text and AWS not in text
    planted = next(s for s in got
                   if s["attributes"].get("gen_ai.tool.call.id") == "toolu_PLANTED")  # fmt: skip
    assert "git push" in planted["attributes"]["gen_ai.tool.call.arguments"]
    assert planted["events"][0]["attributes"]["exception.message"].startswith("fatal: bad")
    assert "make deploy" in text and "rollout stuck" in text


# -- a local receiver --------------------------------------------------------------------------


def ulid(session: str, n: int) -> str:
    """A ULID-shaped id, the same for the same session and number."""
    return f"01J{sum(map(ord, session)) % 1000:03d}{n:020d}"


def write_session(store: Path, session: str, actions: int, day: str = "2026-11-20") -> Path:
    """A shard of `actions` tool calls written as an agent may write it (schema-valid lines)."""
    shard = store / "actionlog" / day.replace("-", "/") / f"{session}.jsonl"
    shard.parent.mkdir(parents=True, exist_ok=True)
    lines = []
    for n in range(actions):
        ts = f"{day}T10:{n // 60000 % 60:02d}:{n // 1000 % 60:02d}.{n % 1000:03d}Z"
        lines.append(json.dumps({
            "v": 1, "kind": "action", "id": ulid(session, n), "ts": ts, "session": session,
            "agent": "PS", "project": "p", "type": "tool_call", "category": "execution",
            "outcome": "success", "context": {"tool": "Bash", "tool_use_id": f"t{n}"},
            "error": None, "duration_s": None, "parent": None, "epic": None, "issue": None,
            "meta": {}}, sort_keys=True, separators=(",", ":")))  # fmt: skip
    shard.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return shard


def marks(store: Path) -> dict[str, Any]:
    found = list((store / ".lore" / "cache" / "otel").glob("*.json"))
    return {p.name: json.loads(p.read_text()) for p in found}


def test_since_last_sends_only_sessions_that_grew(store: Path, sink: Sink) -> None:
    write_session(store, "s-one", 3)
    shard = write_session(store, "s-two", 2)
    first = export(store, "--endpoint", sink.url, "--since-last", "--json")
    assert first.code == 0, first.err
    assert first.json()["sessions"] == 2 and len(sink.spans()) == 7
    before = {s.span_id for s in sink.spans()}
    assert export(store, "--endpoint", sink.url, "--since-last").code == 0
    assert len(sink.requests) == 1  # nothing new: nothing sent
    with open(shard, "a", encoding="utf-8") as out:  # the open session goes on
        out.write(shard.read_text().splitlines()[0].replace(ulid("s-two", 0), ulid("s-two", 9))
                  .replace("10:00:00.000", "10:00:09.000") + "\n")  # fmt: skip
    grown = export(store, "--endpoint", sink.url, "--since-last", "--json")
    assert grown.code == 0, grown.err
    assert grown.json()["sessions"] == 1 and grown.json()["unchanged_sessions"] == 1
    resent = sink.requests[-1].resource_spans[0].scope_spans[0].spans
    assert len(resent) == 4 and {s.span_id for s in resent} - before == {
        spans.span_id(int.from_bytes(resent[0].trace_id, "big"), ulid("s-two", 9)).to_bytes(
            8, "big"
        )
    }


def test_a_refused_batch_is_one_line_and_the_watermark_holds_only_accepted_ones(
    store: Path,
) -> None:
    big = write_session(store, "s-a", BATCH_BYTES // 300 + 1)  # a batch of its own
    assert big.stat().st_size >= BATCH_BYTES
    write_session(store, "s-b", 10)
    refusing = Sink(answers=(200, 400))  # the batches may arrive in either order (2 workers)
    try:
        done = export(store, "--endpoint", refusing.url, "--since-last")
        assert_one_error_line(done, f"{refusing.url}/v1/traces", "was not accepted", "400")
        (request,) = refusing.requests
        sent = {a.value.string_value for rs in request.resource_spans for ss in rs.scope_spans
                for sp in ss.spans for a in sp.attributes if a.key == "session.id"}  # fmt: skip
        assert len(sent) == 1
        (mark,) = marks(store).values()
        assert list(mark["shards"]) == [f"2026/11/20/{sent.pop()}.jsonl"]  # the accepted one
        again = export(store, "--endpoint", refusing.url, "--since-last", "--json")
        assert again.code == 0, again.err
        assert again.json()["sessions"] == 1 and again.json()["unchanged_sessions"] == 1
        assert len(refusing.requests) == 2
        (mark,) = marks(store).values()
        assert sorted(mark["shards"]) == ["2026/11/20/s-a.jsonl", "2026/11/20/s-b.jsonl"]
    finally:
        refusing.close()


def test_a_refusal_on_the_first_batch_leaves_no_watermark(store: Path) -> None:
    write_session(store, "s-a", 3)
    refusing = Sink(answers=(400,))
    try:
        done = export(store, "--endpoint", refusing.url, "--since-last")
        assert_one_error_line(done, "batch 1", "was not accepted")
        assert marks(store) == {}
    finally:
        refusing.close()


def test_an_unreachable_receiver_and_a_bad_url_are_one_line(store: Path) -> None:
    write_session(store, "s-a", 3)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = sock.getsockname()[1]
    done = export(store, "--endpoint", f"http://127.0.0.1:{closed}", OTEL_EXPORTER_OTLP_TIMEOUT="1")
    assert_one_error_line(done, f"http://127.0.0.1:{closed}/v1/traces", "batch 1")
    assert marks(store) == {}
    assert_one_error_line(export(store, "--endpoint", "ftp://x/y"), "not an http(s) URL")
    assert_one_error_line(export(store), "no endpoint")


def test_headers_and_credentials_reach_the_receiver_and_are_never_printed(
    store: Path, sink: Sink
) -> None:
    write_session(store, "s-a", 2)
    token = "Bearer s3cr3t-" + "x" * 20  # sent URL-encoded, as the variable is specified
    endpoint = sink.url.replace("http://", "http://user:pw-zz9@")
    headers = "x-api-key=" + token.replace(" ", "%20")
    done = export(store, "--json", OTEL_EXPORTER_OTLP_ENDPOINT=endpoint,
                  OTEL_EXPORTER_OTLP_HEADERS=headers)  # fmt: skip
    assert done.code == 0, done.err
    assert {k.lower(): v for k, v in sink.headers[0].items()}["x-api-key"] == token
    assert "s3cr3t" not in done.out + done.err and "pw-zz9" not in done.out + done.err
    assert done.json()["endpoint"] == f"{sink.url}/v1/traces"


def test_dry_run_sends_and_marks_nothing(store: Path, sink: Sink) -> None:
    write_session(store, "s-a", 4)
    done = export(store, "--endpoint", sink.url, "--dry-run", "--since-last", "--json")
    assert done.code == 0, done.err
    assert done.json()["spans"] == 5 and done.json()["dry_run"] is True
    assert done.json()["batches"] == 1
    assert sink.requests == [] and marks(store) == {}


def test_without_the_extra_it_says_what_to_install(store: Path) -> None:
    write_session(store, "s-a", BATCH_BYTES // 300 + 1)  # two batches: the workers' path
    write_session(store, "s-b", 1)
    code = ("import sys; sys.modules['opentelemetry.exporter.otlp.proto.http.trace_exporter']"
            " = None; from lorebook.cli import main; sys.exit(main(sys.argv[1:]))")  # fmt: skip
    done = subprocess.run(["python" if False else __import__("sys").executable, "-c", code,
                           "otel", "export", "--endpoint", "http://127.0.0.1:9"],
                          env=clean_env(store), capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        "lore: error: otel export needs the OpenTelemetry SDK and exporter: "
        "pip install 'lorebook[otel]'"]  # fmt: skip


def test_the_endpoint_may_come_from_the_config(store: Path, sink: Sink) -> None:
    write_session(store, "s-a", 1)
    (store / ".lore" / "config.yaml").write_text(f"otel:\n  endpoint: {sink.url}\n")
    done = export(store, "--json")
    assert done.code == 0, done.err
    assert done.json()["endpoint"] == f"{sink.url}/v1/traces" and len(sink.spans()) == 2


def test_the_library_call_returns_what_was_sent(store: Path, sink: Sink) -> None:
    write_session(store, "s-a", 2)
    with Lorebook.open(store, env={}) as book:
        result = book.otel_export(sink.url, content="redacted")
    assert result["spans"] == 3 and result["semconv"] == "1.41.0" and len(sink.spans()) == 3


def test_the_watermark_is_never_written_through_a_symlink(store: Path, sink: Sink,
                                                          tmp_path: Path) -> None:  # fmt: skip
    write_session(store, "s-a", 2)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    cache = store / ".lore" / "cache"
    cache.mkdir(parents=True, exist_ok=True)
    (cache / "otel").symlink_to(outside)
    done = export(store, "--endpoint", sink.url, "--since-last")
    assert_one_error_line(done, "symlink")
    assert list(outside.iterdir()) == []


def test_a_damaged_watermark_is_one_line_naming_it(store: Path, sink: Sink) -> None:
    write_session(store, "s-a", 2)
    assert export(store, "--endpoint", sink.url).code == 0
    (mark,) = (store / ".lore" / "cache" / "otel").glob("*.json")
    mark.write_text("{not json", encoding="utf-8")
    done = export(store, "--endpoint", sink.url, "--since-last")
    assert_one_error_line(done, str(mark), "delete it to send everything again")
