"""The MCP server over one `Lorebook`: the tools, their errors, and a log entry per call.

One book is opened for the life of the server, so the search index, the embedding model and
the catalog stay warm between calls. Calls run one at a time (the book is not shared between
threads); the search index and the action catalog are built in the background
(`start_index`), so no call waits for either: meanwhile searches answer by keywords and say so
(`degraded`), and figures over the whole log count its last days and say so (`partial`). Whatever a
call does -- wrong argument types, an unknown learning, a crash in the library -- the client
gets a one-line tool error naming the field or the cause, the server keeps running, and the
call is logged as a `tool_call` action (params redacted by the log).
"""

from __future__ import annotations

import sys
import time
import traceback
from typing import Any, get_args

import anyio
from mcp.server import MCPServer
from mcp.server.mcpserver.context import Context
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, InputRequiredResult, TextContent
from mcp_types import Tool as MCPTool
from pydantic import ValidationError

from lorebook import Lorebook, LoreError, __version__, redact_message

from .schemas import lean
from .tools_learn import LearnTools
from .tools_log import LogTools

INSTRUCTIONS = (
    "lorebook: this project's action log and learnings. get_recent_actions resumes the previous "
    "session; search_learnings or preflight before planning."
)


class _StringsStay(FuncMetadata):
    """The SDK decodes a string argument that parses as JSON (for clients that send a list as
    text); for a parameter that takes a string, the string is the value, as sent."""

    @classmethod
    def of(cls, meta: FuncMetadata) -> _StringsStay:
        return cls(**{name: getattr(meta, name) for name in FuncMetadata.model_fields})

    def pre_parse_json(self, data: dict[str, Any]) -> dict[str, Any]:
        parsed = super().pre_parse_json(data)
        fields = self.arg_model.model_fields
        for key, value in data.items():
            field = fields.get(key)
            if isinstance(value, str) and field is not None and _takes_str(field.annotation):
                parsed[key] = value
        return parsed


def _takes_str(annotation: Any) -> bool:
    return annotation is str or str in get_args(annotation)


class LoreServer(MCPServer[Any]):
    """`lore mcp`: the tools of `LogTools` and `LearnTools` over one warm book."""

    def __init__(self, book: Lorebook | None) -> None:
        super().__init__(
            "lore", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING"
        )
        self._book = book
        self._lock = anyio.Lock()
        self._given: str | None = book.env.get("LORE_SESSION") if book is not None else None
        self._session: str | None = None  # one this server started, when no client has one
        self.own_session = False  # did this server start the session it logs into?
        log = LogTools(self.book, self.current_session)
        learn = LearnTools(self.book, self.current_session)
        for tool in (
            log.log_action,
            log.get_recent_actions,
            log.get_subagent_status,
            log.search_actions,
            log.get_activity_report,
            log.export_training_data,
            learn.search_learnings,
            learn.index_learning,
            learn.track_learning_application,
            learn.get_learning_stats,
            learn.record_occurrence,
            learn.preflight,
            learn.draft_learning,
            learn.promote_learning,
            learn.get_expertise,
        ):
            description = (tool.__doc__ or "").strip().splitlines()[0]
            self.add_tool(tool, name=tool.__name__, description=description)
            registered = self._tool_manager.get_tool(tool.__name__)
            if registered is not None:
                registered.fn_metadata = _StringsStay.of(registered.fn_metadata)

    async def run_stdio_async(self) -> None:
        """Serve over stdio with lorebook's transport (see `transport` for why)."""
        from .transport import stdio_wire

        lowlevel = self._lowlevel_server
        async with stdio_wire() as (read_stream, write_stream):
            await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())

    def book(self) -> Lorebook:
        if self._book is None:
            raise LoreError("no store is open (start the server with `lore mcp` in a repository)")
        return self._book

    def current_session(self) -> str:
        """The session calls are logged into: LORE_SESSION; else the session of the client
        that started this server, as its session-start hook noted (asked at every call: the
        client may start a new session); else one this server starts (type `mcp`) with its
        first call and ends when it stops."""
        return self._current()[0]

    def _current(self) -> tuple[str, bool]:
        """`current_session`, and whether the client's hooks record every call of this server
        (asked per call, returned to it: nothing of one call is kept for the next)."""
        if self._given:
            return self._given, False
        client = self.book().client_session()
        if client is not None:
            return str(client["session"]), bool(client["capture"])
        if self._session is None:
            self._session = self.book().start_session(session_type="mcp").id
            self.own_session = True
        return self._session, False

    def end(self, reason: str = "normal") -> None:
        """End the session this server started (if any)."""
        if self.own_session and self._session is not None and self._book is not None:
            self._book.end_session(self._session, reason=reason)
            self.own_session = False

    def start_index(self) -> None:
        """Build the action catalog and build or refresh the search index (and load the model)
        in the background: on a fresh clone embedding every learning takes minutes, reading a
        long log without a catalog seconds per query, and no call may wait for either."""
        if self._book is None:
            return
        try:
            self._book.prepare_in_background()
        except LoreError as exc:  # the first search will say what fails
            shown = redact_message(exc, self._book.sanitizer)
            print(f"lore mcp: warning: search index not built: {shown}", file=sys.stderr)

    async def list_tools(self) -> list[MCPTool]:
        """The tools with lean schemas: `tools/list` is paid for in context on every turn."""
        return [
            tool.model_copy(
                update={
                    "input_schema": lean(tool.input_schema),
                    "output_schema": lean(tool.output_schema),
                }
            )
            for tool in await super().list_tools()
        ]

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        async with self._lock:
            started = time.perf_counter()
            error: str | None = None
            try:
                result = await super().call_tool(name, arguments, context)
            except MCPError:
                raise  # a protocol error: the SDK answers it as such
            except Exception as exc:
                error = self.describe(name, exc)
                result = CallToolResult(
                    content=[TextContent(type="text", text=error)], is_error=True
                )
            self.record(name, arguments, error, time.perf_counter() - started)
            return result

    def describe(self, name: str, exc: Exception) -> str:
        """One line for the client: the arguments that failed validation, the library's message,
        or (for a bug, a result that fails its own schema included) the exception type, with
        the traceback on the server's stderr."""
        cause = exc.__cause__
        if isinstance(cause, ValidationError) and not isinstance(exc, UnexpectedToolError):
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'arguments'}: {err['msg']}"
                for err in cause.errors()
            )
            message = f"{name}: invalid arguments: {problems}"
        elif isinstance(cause, LoreError):  # its values redacted, lorebook's words kept
            sanitizer = self._book.sanitizer if self._book is not None else None
            return " ".join(f"{name}: {redact_message(cause, sanitizer)}".split())
        elif isinstance(exc, ToolError) and cause is None:
            message = str(exc)  # e.g. an unknown tool name
        else:
            traceback.print_exception(cause or exc, file=sys.stderr)
            kind = type(cause or exc).__name__
            message = f"{name}: internal error ({kind}); the server's stderr has the details"
        message = " ".join(message.split())
        if self._book is not None:
            message = self._book.sanitizer.redact_text(message)[0]
        return message

    def record(self, name: str, arguments: dict[str, Any], error: str | None, took: float) -> None:
        """The `tool_call` action for one call; a store that cannot be written (read-only) is
        reported on stderr, never to the client as a failed call."""
        if self._book is None:
            return
        try:
            session, hooks_capture = self._current()  # may start the server's own: a write
        except LoreError as exc:
            shown = redact_message(exc, self._book.sanitizer)  # it may name the store
            print(f"lore mcp: warning: {name} call not logged: {shown}", file=sys.stderr)
            return
        if hooks_capture:
            return  # the client's PostToolUse hook records this call: once, not twice
        context: dict[str, Any] = {"tool_name": name, "params": arguments}
        for _ in range(2):
            try:
                self._book.log(
                    "tool_call",
                    clip=True,
                    session=session,
                    context=context,
                    outcome="failure" if error else "success",
                    error=error,
                    duration_s=round(took, 4),
                    meta={"via": "mcp"},
                )
                return
            except LoreError as exc:
                problem = redact_message(exc, self._book.sanitizer)  # it may name the store
                # params the log refuses (nested too deep) are dropped, the call still logged
                context = {"tool_name": name, "params_dropped": problem}
        print(f"lore mcp: warning: {name} call not logged: {problem}", file=sys.stderr)
