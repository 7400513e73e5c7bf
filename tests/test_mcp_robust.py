"""`lore mcp` under hostile or broken clients: raw frames written to a real server's stdin.

Each frame gets an answer (a tool result, or a JSON-RPC error for what cannot be parsed), the
server keeps serving, strings stay strings, an out-of-range field is clipped and named in the
record's `meta.clipped` (not the record dropped), and EOF ends the server promptly after the
calls already received are written.
"""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import LORE, clean_env, lore, stored_actions
from lorebook import Lorebook

SRC = Path(__file__).resolve().parents[1] / "src"
TIMEOUT = 120.0  # an answer is instant; only the first waits for the warm-up, on a busy machine


class RawServer:
    """A `lore mcp` subprocess spoken to line by line, without a client library."""

    def __init__(self, root: Path, **extra: str) -> None:
        env = {k: os.environ[k] for k in ("PATH", "HOME", "LORE_MODEL_CACHE") if k in os.environ}
        env.update(PYTHONPATH=str(SRC), LORE_ROOT=str(root), LORE_PROJECT="proj", LORE_AGENT="PS")
        env.update(extra)
        self.proc = subprocess.Popen(
            [*LORE, "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=root,
        )
        self.next_id = 100
        self.send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 0,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "clientInfo": {"name": "raw", "version": "1"},
                    },
                }
            )
        )
        assert self.receive()["id"] == 0
        self.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def receive(self, timeout: float = TIMEOUT) -> dict[str, Any]:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        assert ready, f"no answer within {timeout} s"
        line = self.proc.stdout.readline()
        assert line, "the server closed stdout"
        answer: dict[str, Any] = json.loads(line)
        return answer

    def call_frame(self, name: str, arguments: str) -> tuple[int, str]:
        """A tools/call frame with `arguments` spliced in as raw JSON text."""
        self.next_id += 1
        head = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call"})
        frame = head[:-1] + f', "params": {{"name": "{name}", "arguments": {arguments}}}}}'
        return self.next_id, frame

    def call(self, name: str, arguments: str) -> dict[str, Any]:
        request_id, frame = self.call_frame(name, arguments)
        self.send(frame)
        answer = self.receive()
        assert answer["id"] == request_id, answer
        return answer

    def close(self, timeout: float = 10) -> tuple[float, str]:
        """Close stdin; how long the server took to exit, and its stderr."""
        assert self.proc.stdin is not None and self.proc.stderr is not None
        started = time.monotonic()
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"lore mcp still running {timeout} s after stdin closed") from None
        return time.monotonic() - started, self.proc.stderr.read().decode()


@pytest.fixture()
def raw(store: Path) -> Any:
    server = RawServer(store)
    yield server
    if server.proc.poll() is None:
        server.proc.kill()
        server.proc.wait()


def nested(levels: int) -> str:
    return '{"a":' * levels + "1" + "}" * levels


def logged(root: Path, action_type: str) -> list[dict[str, Any]]:
    return [a for a in stored_actions(root) if a["type"] == action_type]


@pytest.mark.parametrize("levels", [300, 5_000])
def test_a_deeply_nested_call_is_answered_and_the_server_keeps_serving(
    raw: RawServer, store: Path, levels: int
) -> None:
    answer = raw.call("log_action", f'{{"action_type":"plan","context":{nested(levels)}}}')
    assert not answer["result"]["isError"], answer
    following = raw.call("log_action", '{"action_type":"commit"}')
    assert not following["result"]["isError"], following
    (plan,) = logged(store, "plan")
    assert plan["meta"]["clipped"] == ["context.a.a.a.a…"]
    assert raw.close()[0] < 5


def test_a_line_that_is_not_json_gets_a_parse_error_and_the_server_goes_on(
    raw: RawServer,
) -> None:
    raw.send("this is not JSON {")
    answer = raw.receive()
    assert answer["id"] is None and answer["error"]["code"] == -32700, answer
    raw.send('["not", "a", "message"]')
    assert raw.receive()["error"]["code"] == -32600
    assert not raw.call("log_action", '{"action_type":"commit"}')["result"]["isError"]


@pytest.mark.parametrize("text", ['{"a":1}', "123", "[1, 2]", "null"])
def test_a_string_argument_that_looks_like_json_stays_a_string(
    raw: RawServer, store: Path, text: str
) -> None:
    arguments = {"action_type": "validate", "outcome": "failure", "error": text, "epic": text}
    answer = raw.call("log_action", json.dumps(arguments))
    assert not answer["result"]["isError"], answer
    (record,) = logged(store, "validate")
    assert (record["error"], record["epic"]) == (text, text)


@pytest.mark.parametrize("duration", ["1e999", "-1e999", "NaN", "-3"])
def test_an_out_of_range_duration_is_clipped_and_named_in_meta(
    raw: RawServer, store: Path, duration: str
) -> None:
    answer = raw.call("log_action", f'{{"action_type":"deploy","duration_s":{duration}}}')
    assert not answer["result"]["isError"], answer
    (record,) = logged(store, "deploy")
    assert record["duration_s"] is None and record["meta"]["clipped"] == ["duration_s"]


def test_an_over_deep_context_keeps_the_record_and_the_rest_of_it(
    raw: RawServer, store: Path
) -> None:
    context = f'{{"keep":"this","deep":{nested(80)}}}'
    answer = raw.call(
        "log_action", f'{{"action_type":"plan","duration_s":1e999,"context":{context}}}'
    )
    assert not answer["result"]["isError"], answer
    (record,) = logged(store, "plan")
    assert record["context"]["keep"] == "this"
    assert record["meta"]["clipped"] == ["context.deep.a.a.a…", "duration_s"]
    call = [a for a in logged(store, "tool_call") if a["context"]["tool_name"] == "log_action"]
    assert call[-1]["context"]["params"]["context"]["keep"] == "this"  # params clipped, kept


def test_closing_stdin_ends_the_server_within_seconds_without_a_traceback(
    raw: RawServer,
) -> None:
    """A killed client: stdout is gone too, with calls in flight whose answers cannot go out."""
    assert raw.proc.stdout is not None
    assert not raw.call("search_actions", "{}")["result"]["isError"]  # warmed up
    raw.proc.stdout.close()
    for _ in range(3):
        raw.send(raw.call_frame("search_actions", "{}")[1])
    took, err = raw.close()
    assert took < 5 and raw.proc.returncode == 0, err
    assert "Traceback" not in err, err


def test_a_call_sent_just_before_stdin_closes_is_written(raw: RawServer, store: Path) -> None:
    assert not raw.call("log_action", '{"action_type":"plan"}')["result"]["isError"]  # warmed up
    raw.send(raw.call_frame("log_action", '{"action_type":"deploy","context":{"n":1}}')[1])
    raw.send(raw.call_frame("log_action", '{"action_type":"deploy","context":{"n":2}}')[1])
    took, err = raw.close()
    assert took < 5, err
    assert sorted(a["context"]["n"] for a in logged(store, "deploy")) == [1, 2]
    sessions = Lorebook.open(store, env={}).sessions()
    assert [(s.session_type, s.status) for s in sessions] == [("mcp", "ended")]


def test_a_warm_up_stuck_on_a_dead_search_server_does_not_hold_the_exit(store: Path) -> None:
    """A Chroma server that accepts and never answers: the warm-up hangs, and with it every
    call; EOF still ends the server once the calls received have had their time."""
    with socket.socket() as dead:
        dead.bind(("127.0.0.1", 0))
        dead.listen(16)
        server = RawServer(store, LORE_CHROMA_URL=f"http://127.0.0.1:{dead.getsockname()[1]}")
        try:
            server.send(server.call_frame("log_action", '{"action_type":"deploy"}')[1])
            took, err = server.close(timeout=40)
        finally:
            if server.proc.poll() is None:
                server.proc.kill()
                server.proc.wait()
    assert took < 20 and server.proc.returncode == 0, err
    assert "Traceback" not in err, err


# -- the same clipping on the hook path -------------------------------------------------------
def hook_payload(store: Path, **fields: Any) -> str:
    base = {
        "session_id": "5b7a1f0e-2c1d-4e8a-9f00-1234567890ab",
        "cwd": str(store),
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_use_id": "toolu_1",
    }
    return json.dumps({**base, **fields})


@pytest.mark.parametrize("levels", [100, 5_000])
def test_a_hook_payload_with_an_over_deep_input_and_infinite_duration_is_kept(
    store: Path, levels: int
) -> None:
    deep = '{"command": "ls", "a": ' + nested(levels) + "}"
    text = hook_payload(store, tool_input="INPUT", tool_response={"stdout": "ok"})
    text = text.replace('"INPUT"', deep)[:-1] + ', "duration_ms": 1e999}'  # Python reads inf
    done = lore("hook", "post-tool-use", cwd=store, env=clean_env(LORE_HOOK_DETACH="0"), stdin=text)
    assert (done.code, done.out) == (0, ""), done.err
    (action,) = stored_actions(store)
    assert action["context"]["input"]["command"] == "ls"
    assert action["context"]["response"] == {"stdout": "ok"}
    assert action["duration_s"] is None
    assert action["meta"]["clipped"] == ["context.input.a.a.a…", "duration_s"]


def test_the_bracket_scan_cuts_only_what_is_too_deep() -> None:
    from lorebook import clip_json_text

    text = '{"s": "[[[{{{", "a": [[[1]], {"b": [2]}]}'
    assert clip_json_text(text, 2) == (
        '{"s": "[[[{{{", "a": ["[TRUNCATED: nested too deep]", "[TRUNCATED: nested too deep]"]}'
    )
    assert json.loads(clip_json_text(text, 4)) == json.loads(text)
    assert json.loads(clip_json_text("[" * 100_000 + "]" * 100_000, 3)) == [
        [["[TRUNCATED: nested too deep]"]]
    ]
    with pytest.raises(ValueError):
        json.loads(clip_json_text("[" * 50 + '"open', 3))  # not JSON stays not JSON
