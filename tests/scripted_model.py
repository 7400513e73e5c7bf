"""A scripted Anthropic Messages API on 127.0.0.1 for driving the real Claude Code CLI offline.

Each conversation is answered from a script: the step is the number of `tool_result` blocks in
the request so far; a step is a tool call `(name, input)` or, past the script, a final text.
A subagent's conversation (its first user message holds a key of `Model.subagents`, put in the
prompt of the Task/Agent call that launched it) follows that key's script instead. Every
request body is kept, so a test can read what context the hooks injected.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Step = tuple[str, dict[str, Any]]


def _sse(events: list[tuple[str, dict[str, Any]]]) -> bytes:
    return b"".join(
        f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in events
    )


def _message(model: str) -> dict[str, Any]:
    return {"id": "msg_scripted", "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 1}}  # fmt: skip


def answer(step: Step | str, model: str, n: int) -> bytes:
    """The SSE stream of one assistant turn: a tool call, or a final text."""
    if isinstance(step, str):
        block = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": step}
        stop = "end_turn"
    else:
        name, tool_input = step
        block = {"type": "tool_use", "id": f"toolu_scripted{n:04d}", "name": name, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(tool_input)}
        stop = "tool_use"
    return _sse([
        ("message_start", {"type": "message_start", "message": _message(model)}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": block}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta",
                           "delta": {"stop_reason": stop, "stop_sequence": None},
                           "usage": {"output_tokens": 5}}),
        ("message_stop", {"type": "message_stop"}),
    ])  # fmt: skip


def tool_results(body: dict[str, Any]) -> int:
    count = 0
    for message in body.get("messages") or []:
        content = message.get("content")
        if isinstance(content, list):
            count += sum(
                1 for b in content if isinstance(b, dict) and b.get("type") == "tool_result"
            )
    return count


class Model:
    """The script and the requests it was asked."""

    def __init__(self) -> None:
        self.script: list[Step] = []
        self.subagents: dict[str, list[Step]] = {}  # marker in a subagent's prompt -> its script
        self.final = "Done."
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.url = ""

    def script_for(self, body: dict[str, Any]) -> list[Step]:
        """The main script, or the one of the subagent whose conversation `body` is."""
        first = next((m for m in body.get("messages") or [] if m.get("role") == "user"), {})
        text = json.dumps(first.get("content"))
        return next((s for key, s in self.subagents.items() if key in text), self.script)

    def main_requests(self) -> list[dict[str, Any]]:
        """The agent's own requests (with tools), not side calls such as title generation."""
        return [r for r in self.requests if r.get("tools")]


def _handler(model: Model) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            self._json({})

        def do_HEAD(self) -> None:
            self.send_response(200)
            self.end_headers()

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except ValueError:
                body = {}
            with model.lock:
                model.requests.append(body)
                n = len(model.requests)
            if "/messages" not in self.path or "count_tokens" in self.path:
                self._json({"input_tokens": 10})
                return
            step: Step | str = model.final
            if body.get("tools"):
                done = tool_results(body)
                script = model.script_for(body)
                if done < len(script):
                    step = script[done]
            if not body.get("stream"):
                text = step if isinstance(step, str) else model.final
                self._json({**_message(body.get("model", "m")), "stop_reason": "end_turn",
                            "content": [{"type": "text", "text": text}]})  # fmt: skip
                return
            data = answer(step, str(body.get("model", "m")), n)
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _json(self, value: dict[str, Any]) -> None:
            data = json.dumps(value).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


@contextmanager
def scripted_model() -> Iterator[Model]:
    model = Model()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(model))
    model.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield model
    finally:
        server.shutdown()
        server.server_close()
