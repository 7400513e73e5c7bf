"""`lore mcp`'s stdio transport: every frame gets an answer, and EOF ends the server.

The SDK's stdio reader drops a frame it cannot parse without a reply, and a frame nested a few
hundred levels deep fails inside the validator the same way, so the client waits forever; on
EOF it stops at once, cancelling calls already received. Here each line is parsed by us:
nesting past `MAX_DEPTH` is cut (before any decoder recurses) to the sanitizer's marker, a line
that is not JSON gets a -32700 parse error and one that is not a JSON-RPC message a -32600, both
with the id when there is one; on EOF the requests already received are answered (and logged)
before the server returns, within `DRAIN_SECONDS`. A client gone from stdout is not an error.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
from typing import Any, BinaryIO

import anyio
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage
from mcp_types import (
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCRequest,
    JSONRPCResponse,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError

from lorebook import clip_json_text

MAX_DEPTH = 100  # levels of a frame kept: far below the validator's and decoder's limits
DRAIN_SECONDS = 10.0  # on EOF, how long requests already received may take to finish

Serve = Callable[[Any, Any], Awaitable[None]]


def error_reply(code: int, message: str, request_id: Any = None) -> SessionMessage:
    if isinstance(request_id, bool) or not isinstance(request_id, int | str):
        request_id = None
    error = ErrorData(code=code, message=message)
    return SessionMessage(JSONRPCError(jsonrpc="2.0", id=request_id, error=error))


def parse_frame(line: bytes) -> SessionMessage:
    """The message of one line, or the error reply the line gets instead."""
    text = clip_json_text(line.decode("utf-8", errors="replace"), MAX_DEPTH)
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as exc:
        return error_reply(PARSE_ERROR, f"Parse error: {str(exc).splitlines()[0]}")
    try:
        return SessionMessage(jsonrpc_message_adapter.validate_python(value, by_name=False))
    except ValidationError:
        request_id = value.get("id") if isinstance(value, dict) else None
        return error_reply(
            INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message", request_id
        )


def _claim() -> tuple[BinaryIO, BinaryIO, Callable[[], None]]:
    """The wire, on private descriptors; fd 0 reads /dev/null and fd 1 goes to stderr while
    serving, so a library's stray print cannot corrupt a frame."""
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)

    def restore() -> None:
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)

    return os.fdopen(wire_in, "rb"), os.fdopen(wire_out, "wb"), restore


class _Wire:
    """The two tasks between the descriptors and the server's streams."""

    def __init__(self, reader: BinaryIO, writer: BinaryIO) -> None:
        self.reader, self.writer = reader, writer
        self.pending: set[int | str] = set()  # requests received and not yet answered
        self.gone = False  # the client no longer reads stdout

    def read_lines(self, send: MemoryObjectSendStream[bytes | None], token: Any) -> None:
        """In a daemon thread (a blocked read never holds up the exit): lines, then None."""
        try:
            for line in self.reader:
                anyio.from_thread.run(send.send, line, token=token)
        except (OSError, ValueError):
            pass
        finally:
            with suppress(Exception):  # the server may have stopped already
                anyio.from_thread.run(send.send, None, token=token)

    async def pump_in(
        self,
        lines: MemoryObjectReceiveStream[bytes | None],
        to_server: MemoryObjectSendStream[SessionMessage | Exception],
        replies: MemoryObjectSendStream[SessionMessage],
    ) -> None:
        async with to_server, replies:
            async for line in lines:
                if line is None:
                    break
                if not line.strip():
                    continue
                message = parse_frame(line)
                if isinstance(message.message, JSONRPCError):
                    await replies.send(message)
                    continue
                if isinstance(message.message, JSONRPCRequest):
                    self.pending.add(message.message.id)
                await to_server.send(message)
            with anyio.move_on_after(DRAIN_SECONDS):  # EOF: answer what was received
                while self.pending and not self.gone:
                    await anyio.sleep(0.02)

    async def pump_out(self, replies: MemoryObjectReceiveStream[SessionMessage]) -> None:
        async with replies:
            async for reply in replies:
                message = reply.message
                if isinstance(message, JSONRPCResponse | JSONRPCError):
                    self.pending.discard(message.id)
                if self.gone:
                    continue
                frame = message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                try:
                    await anyio.to_thread.run_sync(self._write, frame.encode())
                except OSError:  # the client went away: keep serving what it sent
                    self.gone = True

    def _write(self, data: bytes) -> None:
        self.writer.write(data)
        self.writer.flush()


@asynccontextmanager
async def stdio_wire() -> AsyncIterator[tuple[Any, Any]]:
    """(read stream, write stream) for the low-level server, over this process's stdio."""
    reader, writer, restore = _claim()
    wire = _Wire(reader, writer)
    line_send, line_receive = anyio.create_memory_object_stream[bytes | None](16)
    to_server, from_wire = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    to_wire, replies = anyio.create_memory_object_stream[SessionMessage](64)
    token = anyio.lowlevel.current_token()
    threading.Thread(
        target=wire.read_lines, args=(line_send, token), name="lore-mcp-stdin", daemon=True
    ).start()
    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(wire.pump_in, line_receive, to_server, to_wire.clone())
            tasks.start_soon(wire.pump_out, replies)
            async with to_wire:
                yield from_wire, to_wire
    finally:
        with suppress(OSError):
            writer.flush()
        restore()
        sys.stdout.flush()
