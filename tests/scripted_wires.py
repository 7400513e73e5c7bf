"""A scripted model on 127.0.0.1 for driving the real Codex, Gemini, Copilot, Cline and OpenCode
CLIs offline: one server speaking the three wire formats they use.

* OpenAI Responses (`POST …/responses`, SSE with named events): Codex.
* OpenAI Chat Completions (`POST …/chat/completions`, streamed or not): Copilot, Cline, OpenCode.
* Gemini (`POST …/models/M:streamGenerateContent?alt=sse`, `:generateContent`, `:countTokens`).

The script is a list of shell commands. A request that offers a shell tool is answered with a
call to it running the next command (the step is the number of tool results in the request so
far), its arguments filled from the tool's own JSON schema; past the script, or without a shell
tool (title and helper calls), the answer is a final text. Every request is kept, so a test can
look for what the hooks injected. Anthropic Messages (Claude Code) is tests/scripted_model.py.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# each client's shell tool, as its model sees it
SHELL_TOOLS = ("exec_command", "run_shell_command", "bash", "run_commands", "shell")
COMMAND_KEYS = ("cmd", "command", "commands")


@dataclass
class Request:
    path: str
    body: dict[str, Any]

    def text(self) -> str:
        return json.dumps(self.body)


@dataclass
class Call:
    """One tool call the script makes: the client's tool and the arguments given to it."""

    name: str
    arguments: dict[str, Any]


class Wires:
    """The script and the requests it was asked."""

    def __init__(self) -> None:
        self.commands: list[str] = []
        self.final = "Done."
        self.requests: list[Request] = []
        self.calls: list[Call] = []
        self.lock = threading.Lock()
        self.url = ""

    def seen(self, needle: str) -> list[Request]:
        """The requests whose body holds `needle`."""
        with self.lock:
            return [r for r in self.requests if needle in r.text()]

    def next_step(self, tools: list[tuple[str, dict[str, Any]]], done: int) -> Call | None:
        """The tool call to answer with, or None for a final text."""
        shell = next(((n, s) for n, s in tools if n in SHELL_TOOLS), None)
        if shell is None or done >= len(self.commands):
            return None
        call = Call(shell[0], arguments(shell[1], self.commands[done]))
        with self.lock:
            self.calls.append(call)
        return call


def arguments(schema: dict[str, Any], command: str) -> dict[str, Any]:
    """Arguments for a shell tool from its JSON schema: the command in its command field (a
    list where the field is an array), every other required field a harmless value."""
    props = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    out: dict[str, Any] = {}
    for name, prop in props.items():
        prop = prop if isinstance(prop, dict) else {}
        kind = prop.get("type")
        kind = kind[0] if isinstance(kind, list) and kind else kind
        if name in COMMAND_KEYS and not any(k in out for k in COMMAND_KEYS):
            out[name] = [command] if str(kind).lower() == "array" else command
        elif name in required:
            out[name] = _filler(name, prop, str(kind).lower())
    if not any(k in out for k in COMMAND_KEYS):
        out["command"] = command
    return out


def _filler(name: str, prop: dict[str, Any], kind: str) -> Any:
    if prop.get("enum"):
        return prop["enum"][0]
    return {"string": "Run the scripted command", "boolean": False, "integer": 30000,
            "number": 30000, "array": [], "object": {}}.get(kind, "")  # fmt: skip


# -- OpenAI Responses ----------------------------------------------------------------------------
def _responses(wires: Wires, body: dict[str, Any]) -> bytes:
    tools = [(t.get("name", ""), t.get("parameters") or {})
             for t in body.get("tools") or [] if isinstance(t, dict)]  # fmt: skip
    items = [i for i in body.get("input") or [] if isinstance(i, dict)]
    done = sum(1 for item in items if str(item.get("type", "")).endswith("call_output"))
    call = wires.next_step(tools, done)
    rid = f"resp_{len(wires.requests)}"
    if call is None:
        text = {"type": "output_text", "text": wires.final, "annotations": []}
        item = {"type": "message", "role": "assistant", "id": f"msg_{rid}", "content": [text]}
    else:
        item = {"type": "function_call", "id": f"fc_{rid}", "call_id": f"call_{rid}",
                "name": call.name, "arguments": json.dumps(call.arguments)}  # fmt: skip
    usage = {"input_tokens": 10, "input_tokens_details": None, "output_tokens": 5,
             "output_tokens_details": None, "total_tokens": 15}  # fmt: skip
    events = [
        ("response.created", {"type": "response.created", "response": {"id": rid}}),
        ("response.output_item.done", {"type": "response.output_item.done", "item": item}),
        ("response.completed", {"type": "response.completed",
                                "response": {"id": rid, "usage": usage}}),
    ]  # fmt: skip
    return b"".join(f"event: {n}\ndata: {json.dumps(d)}\n\n".encode() for n, d in events)


# -- OpenAI Chat Completions ---------------------------------------------------------------------
def _chat(wires: Wires, body: dict[str, Any]) -> tuple[bytes, str]:
    tools = []
    for tool in body.get("tools") or []:
        fn = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(fn, dict):
            tools.append((fn.get("name", ""), fn.get("parameters") or {}))
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    call = wires.next_step(tools, sum(1 for m in messages if m.get("role") == "tool"))
    cid, model, created = f"chatcmpl-{len(wires.requests)}", body.get("model"), int(time.time())
    if call is None:
        message: dict[str, Any] = {"role": "assistant", "content": wires.final}
        finish = "stop"
    else:
        fn = {"name": call.name, "arguments": json.dumps(call.arguments)}
        calls = [{"id": f"call_{cid}", "type": "function", "function": fn}]
        message = {"role": "assistant", "content": None, "tool_calls": calls}
        finish = "tool_calls"
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    if not body.get("stream"):
        whole = {"id": cid, "object": "chat.completion", "created": created, "model": model,
                 "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                 "usage": usage}  # fmt: skip
        return json.dumps(whole).encode(), "application/json"
    delta = dict(message)
    if call is not None:
        delta["tool_calls"] = [{"index": 0, **c} for c in message["tool_calls"]]
    chunk = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model}
    chunks = [
        {**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
        {**chunk, "choices": [], "usage": usage},
    ]
    data = b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks)
    return data + b"data: [DONE]\n\n", "text/event-stream"


# -- Gemini --------------------------------------------------------------------------------------
def _gemini(wires: Wires, body: dict[str, Any], model: str) -> dict[str, Any]:
    tools = []
    for group in body.get("tools") or []:
        for fn in (group or {}).get("functionDeclarations") or []:
            schema = fn.get("parametersJsonSchema") or fn.get("parameters") or {}
            tools.append((fn.get("name", ""), _lower_types(schema)))
    done = sum(1 for content in body.get("contents") or [] for part in content.get("parts") or []
               if isinstance(part, dict) and "functionResponse" in part)  # fmt: skip
    config = body.get("generationConfig") or {}
    call = wires.next_step(tools, done)
    if call is not None:
        part: dict[str, Any] = {"functionCall": {"name": call.name, "args": call.arguments}}
    elif config.get("responseJsonSchema") or config.get("responseSchema"):
        schema = config.get("responseJsonSchema") or config.get("responseSchema")
        part = {"text": json.dumps(_json_answer(_lower_types(schema)))}  # a helper's check
    else:
        part = {"text": wires.final}
    return {"candidates": [{"content": {"role": "model", "parts": [part]},
                            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5,
                              "totalTokenCount": 15},
            "modelVersion": model}  # fmt: skip


def _lower_types(schema: Any) -> Any:
    """Gemini's schemas may spell types in capitals (STRING, OBJECT)."""
    if isinstance(schema, dict):
        return {k: (v.lower() if k == "type" and isinstance(v, str) else _lower_types(v))
                for k, v in schema.items()}  # fmt: skip
    if isinstance(schema, list):
        return [_lower_types(v) for v in schema]
    return schema


def _json_answer(schema: dict[str, Any]) -> dict[str, Any]:
    """An answer to a structured helper call (Gemini's next-speaker and routing checks): the
    turn goes back to the user, the default model is kept."""
    out: dict[str, Any] = {}
    for name, prop in (schema.get("properties") or {}).items():
        if name == "next_speaker":
            out[name] = "user"
        elif prop.get("enum"):
            out[name] = prop["enum"][0]
        else:
            out[name] = _filler(name, prop, str(prop.get("type", "string")))
    return out


def _handler(wires: Wires) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            models = [{"id": m, "object": "model", "name": f"models/{m}"}
                      for m in ("fake-model", "gpt-4.1", "gemini-2.5-flash")]  # fmt: skip
            self._send(json.dumps({"object": "list", "data": models, "models": models}).encode(),
                       "application/json")  # fmt: skip

        def do_HEAD(self) -> None:
            self._send(b"", "text/plain")

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                body = {}
            body = body if isinstance(body, dict) else {"value": body}
            with wires.lock:
                wires.requests.append(Request(self.path, body))
            path = self.path.split("?", 1)[0]
            if path.endswith("/responses"):
                self._send(_responses(wires, body), "text/event-stream")
            elif path.endswith("/chat/completions"):
                self._send(*_chat(wires, body))
            elif ":countTokens" in path:
                self._send(json.dumps({"totalTokens": 10}).encode(), "application/json")
            elif ":streamGenerateContent" in path or ":generateContent" in path:
                model = path.rsplit("/", 1)[-1].split(":", 1)[0]
                answer = json.dumps(_gemini(wires, body, model))
                if ":stream" in path:
                    self._send(f"data: {answer}\r\n\r\n".encode(), "text/event-stream")
                else:
                    self._send(answer.encode(), "application/json")
            else:
                self._send(b"{}", "application/json")

        def _send(self, data: bytes, kind: str) -> None:
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


@contextmanager
def scripted_wires() -> Iterator[Wires]:
    wires = Wires()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(wires))
    server.daemon_threads = True
    wires.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield wires
    finally:
        server.shutdown()
        server.server_close()
