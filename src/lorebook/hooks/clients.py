"""Every agent's hooks as one event model: the client's own event names mapped to lorebook's
normalised events, its payload mapped to the one shape the handlers read, and its way of
taking added context.

The normalised events are `lore hook`'s (`entry.EVENTS`): session-start, user-prompt-submit,
post-tool-use, post-tool-use-failure, subagent-start, subagent-stop, pre-compact, stop,
session-end. The normalised payload is Claude Code's (its field names are the de facto
standard): session_id, cwd, prompt, tool_name, tool_input, tool_response, tool_use_id,
duration_ms, error, agent_id, agent_type, trigger, source, reason, model. A handler never sees
a client's own field; unknown fields and newer client versions are tolerated (a payload field
that is missing leaves its record field empty, it never fails the hook).

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs milliseconds on the capture path; mypy still sees it
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    Payload = dict[str, Any]

# -- each client's events: its own name -> the normalised event -------------------------------
# Claude Code and Codex use the same names (Codex adopted Claude Code's hook format).
CLAUDE_EVENTS = {
    "SessionStart": "session-start",
    "UserPromptSubmit": "user-prompt-submit",
    "PostToolUse": "post-tool-use",
    "PostToolUseFailure": "post-tool-use-failure",
    "SubagentStart": "subagent-start",
    "SubagentStop": "subagent-stop",
    "PreCompact": "pre-compact",
    "Stop": "stop",
    "SessionEnd": "session-end",
}
CODEX_EVENTS = {k: v for k, v in CLAUDE_EVENTS.items() if k != "PostToolUseFailure"}
GEMINI_EVENTS = {
    "SessionStart": "session-start",
    "BeforeAgent": "user-prompt-submit",
    "AfterTool": "post-tool-use",  # a failed call: tool_response.error, see _gemini
    # no PreCompress: Gemini CLI 0.61 fires it before every compression check (each turn),
    # whether or not it compresses, so it would leave a false checkpoint per turn
    "AfterAgent": "stop",
    "SessionEnd": "session-end",
}
COPILOT_EVENTS = {
    "sessionStart": "session-start",
    "userPromptSubmitted": "user-prompt-submit",
    "postToolUse": "post-tool-use",
    "postToolUseFailure": "post-tool-use-failure",
    "subagentStart": "subagent-start",
    "subagentStop": "subagent-stop",
    "preCompact": "pre-compact",
    "agentStop": "stop",
    "sessionEnd": "session-end",
}
CLINE_EVENTS = {  # hook files named after the event
    "TaskStart": "session-start",
    "TaskResume": "session-start",
    "UserPromptSubmit": "user-prompt-submit",
    "PostToolUse": "post-tool-use",  # a failed call: postToolUse.success false
    "PreCompact": "pre-compact",
    "TaskComplete": "stop",
    "TaskCancel": "session-end",
    "TaskError": "session-end",
    "SessionShutdown": "session-end",
}
CURSOR_EVENTS = {
    "sessionStart": "session-start",
    "beforeSubmitPrompt": "user-prompt-submit",
    "postToolUse": "post-tool-use",
    "postToolUseFailure": "post-tool-use-failure",
    "afterShellExecution": "post-tool-use",
    "afterFileEdit": "post-tool-use",
    "afterMCPExecution": "post-tool-use",
    "subagentStart": "subagent-start",
    "subagentStop": "subagent-stop",
    "preCompact": "pre-compact",
    "stop": "stop",
    "sessionEnd": "session-end",
}
OPENCODE_EVENTS = {  # the plugin's hook and bus-event names, as the plugin forwards them
    "session.created": "session-start",
    "chat.message": "user-prompt-submit",
    "tool.execute.after": "post-tool-use",
    "session.compacted": "pre-compact",
    "session.idle": "stop",
    "session.deleted": "session-end",
}

# -- tools: a client's shell and file tools as Claude Code names them (the readers' names) ----
SHELL_TOOLS = frozenset(
    {
        "run_shell_command",
        "exec_command",
        "shell",
        "bash",
        "local_shell",
        "run_commands",
        "execute_command",
        "run_terminal_cmd",
    }
)
FILE_TOOLS = {  # a client's file tool -> Claude Code's
    "read_file": "Read",
    "view": "Read",
    "read": "Read",
    "write_file": "Write",
    "create": "Write",
    "write": "Write",
    "write_to_file": "Write",
    "replace": "Edit",
    "edit": "Edit",
    "edit_file": "Edit",
    "replace_in_file": "Edit",
    "str_replace_editor": "Edit",
    "apply_patch": "Edit",
}
PATH_KEYS = ("file_path", "absolute_path", "filePath", "path", "target_file")


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _object(value: Any) -> dict[str, Any]:
    """A JSON object, or one given as a JSON string (Cline and Cursor send some that way)."""
    if isinstance(value, str) and value.startswith("{"):
        import json

        try:
            value = json.loads(value)
        except ValueError:
            return {}
    return value if isinstance(value, dict) else {}


def tool_call(name: Any, given: Any) -> Payload:
    """`tool_name` and `tool_input` as Claude Code would name them: a shell tool is Bash with
    one `command`, a file tool Read/Write/Edit with `file_path`; the client's own tool name is
    kept as `client_tool` when it differs. Other tools pass through unchanged."""
    tool = _text(name) or "unknown"
    args = _object(given)
    if tool in SHELL_TOOLS:
        command = args.get("command", args.get("cmd", args.get("commands")))
        if isinstance(command, str) and command.startswith("["):
            command = _list(command)
        if isinstance(command, list):
            command = "; ".join(str(c) for c in command)
        out = {"tool_name": "Bash", "tool_input": {**args, "command": _text(command)}}
    elif tool in FILE_TOOLS:
        path = next((args[k] for k in PATH_KEYS if isinstance(args.get(k), str)), "")
        out = {"tool_name": FILE_TOOLS[tool], "tool_input": {**args, "file_path": path}}
    else:
        return {"tool_name": tool, "tool_input": given if given is not None else {}}
    if out["tool_name"] != tool:
        out["client_tool"] = tool
    return out


def _list(text: str) -> Any:
    import json

    try:
        return json.loads(text)
    except ValueError:
        return text


def _common(payload: Payload, *, session: Any, cwd: Any) -> Payload:
    out: Payload = {}
    if isinstance(session, str) and session:
        out["session_id"] = session
    if isinstance(cwd, list):
        cwd = next((c for c in cwd if isinstance(c, str)), None)
    if isinstance(cwd, str) and cwd:
        out["cwd"] = cwd
    for key in ("model", "transcript_path"):
        if isinstance(payload.get(key), str):
            out[key] = payload[key]
    return out


# -- payload mappers: (normalised event, client payload) -> (event, normalised payload) -------
def _claude(event: str, payload: Payload) -> tuple[str, Payload]:
    if "tool_result" in payload and "tool_response" not in payload:  # Copilot's Claude names
        payload = {**payload, "tool_response": payload["tool_result"]}
    return event, payload


def _codex(event: str, payload: Payload) -> tuple[str, Payload]:
    if event in ("post-tool-use", "post-tool-use-failure"):
        payload = {**payload, **tool_call(payload.get("tool_name"), payload.get("tool_input"))}
    return event, payload


def _gemini(event: str, payload: Payload) -> tuple[str, Payload]:
    out = {**payload}
    if event == "post-tool-use":
        out.update(tool_call(payload.get("tool_name"), payload.get("tool_input")))
        response = payload.get("tool_response")
        error = response.get("error") if isinstance(response, dict) else None
        if error:
            message = error.get("message") if isinstance(error, dict) else error
            out["error"] = _text(message) or str(message)
            event = "post-tool-use-failure"
    elif event == "stop":
        out.pop("prompt", None)  # AfterAgent repeats the prompt: it was recorded by BeforeAgent
    return event, out


def copilot_call_id(stamp: Any, args: Any) -> str | None:
    """A stand-in id for a Copilot CLI tool call, whose payloads carry none in either of its
    forms (camelCase, or the Claude-like one of its PascalCase entries): the hook's timestamp
    (epoch ms, or the same instant in ISO form) and a checksum of the call's input, equal in
    both, so a call reported both ways is logged once."""
    if isinstance(stamp, int) and not isinstance(stamp, bool) and stamp > 0:
        import time

        whole = time.strftime("%Y%m%dT%H%M%S", time.gmtime(stamp // 1000))
        stamp = f"{whole}{stamp % 1000:03d}Z"
    elif isinstance(stamp, str) and len(stamp) == 24 and stamp.endswith("Z"):
        stamp = stamp.translate({ord(c): None for c in "-:."})  # 2026-11-28T04:40:01.243Z
    else:
        return None
    import json
    import zlib

    given = json.dumps(_object(args), sort_keys=True, default=str).encode()
    return f"copilot-{stamp}-{zlib.crc32(given):08x}"


def _copilot(event: str, payload: Payload) -> tuple[str, Payload]:
    out = _common(payload, session=payload.get("sessionId"), cwd=payload.get("cwd"))
    if event == "session-start":
        out["source"] = _text(payload.get("source")) or "startup"
    elif event == "user-prompt-submit":
        out["prompt"] = _text(payload.get("prompt"))
    elif event in ("post-tool-use", "post-tool-use-failure"):
        out.update(tool_call(payload.get("toolName"), payload.get("toolArgs")))
        call = copilot_call_id(payload.get("timestamp"), payload.get("toolArgs"))
        if call:
            out["tool_use_id"] = call
        result = payload.get("toolResult")
        result = result if isinstance(result, dict) else {}
        text = result.get("textResultForLlm")
        kind = _text(result.get("resultType"))
        if event == "post-tool-use-failure" or kind in ("failure", "error", "denied", "rejected"):
            event = "post-tool-use-failure"
            out["error"] = _text(payload.get("error")) or _text(text) or kind or "tool failed"
        else:
            out["tool_response"] = text if text is not None else result
    elif event in ("subagent-start", "subagent-stop"):
        out["agent_id"] = _text(payload.get("agentId") or payload.get("subagentId"))
        out["agent_type"] = _text(payload.get("agentType") or payload.get("agentName"))
    elif event == "pre-compact":
        out["trigger"] = _text(payload.get("trigger")) or "auto"
    elif event == "session-end":
        out["reason"] = _text(payload.get("reason")) or "other"
    return event, out


def _cline(event: str, payload: Payload) -> tuple[str, Payload]:
    info = payload.get("workspaceInfo")
    root = info.get("rootPath") if isinstance(info, dict) else None
    out = _common(payload, session=payload.get("taskId"), cwd=root or payload.get("workspaceRoots"))
    if event == "session-start":
        out["source"] = "resume" if payload.get("hookName") == "agent_resume" else "startup"
    elif event == "user-prompt-submit":
        given = payload.get("userPromptSubmit")
        prompt = given.get("prompt") if isinstance(given, dict) else payload.get("prompt")
        out["prompt"] = _text(prompt)
    elif event == "post-tool-use":
        result = payload.get("tool_result")
        result = result if isinstance(result, dict) else {}
        post = payload.get("postToolUse")
        post = post if isinstance(post, dict) else {}
        out.update(
            tool_call(
                result.get("name") or post.get("toolName"),
                result.get("input") or post.get("parameters"),
            )
        )
        if isinstance(result.get("id"), str):
            out["tool_use_id"] = result["id"]
        duration = result.get("durationMs", post.get("executionTimeMs"))
        if duration is not None:
            out["duration_ms"] = duration
        if post.get("success") is False or result.get("success") is False:
            event = "post-tool-use-failure"
            out["error"] = _text(result.get("error")) or _text(post.get("result")) or "tool failed"
        else:
            out["tool_response"] = result.get("output", post.get("result"))
    elif event == "session-end":
        names = {"agent_abort": "cancelled", "agent_error": "error"}
        out["reason"] = names.get(_text(payload.get("hookName")), "other")
    return event, out


def _cursor(event: str, payload: Payload) -> tuple[str, Payload]:
    session = payload.get("conversation_id") or payload.get("session_id")
    out = _common(
        payload, session=session, cwd=payload.get("cwd") or payload.get("workspace_roots")
    )
    if isinstance(payload.get("generation_id"), str):
        out["turn_id"] = payload["generation_id"]  # one per turn: tells a stop's twin apart
    name = _text(payload.get("hook_event_name"))
    if event == "session-start":
        out["source"] = _text(payload.get("source")) or "startup"
    elif event == "user-prompt-submit":
        out["prompt"] = _text(payload.get("prompt"))
    elif event in ("post-tool-use", "post-tool-use-failure"):
        if name == "afterShellExecution":
            out.update(tool_call("run_terminal_cmd", {"command": payload.get("command")}))
            out["tool_response"] = payload.get("output")
        elif name == "afterFileEdit":
            path = _text(payload.get("file_path"))
            out.update(
                {
                    "tool_name": "Edit",
                    "tool_input": {"file_path": path, "edits": payload.get("edits")},
                }
            )
        else:  # postToolUse, afterMCPExecution: named tools
            tool = _text(payload.get("tool_name"))
            if name == "afterMCPExecution" and not tool.startswith("mcp__"):
                server = _text(payload.get("server_name") or payload.get("server")) or "mcp"
                tool = f"mcp__{server}__{tool}"
            out.update(
                tool_call(tool, _object(payload.get("tool_input")) or payload.get("tool_input"))
            )
            out["tool_response"] = payload.get("tool_output", payload.get("result_json"))
        if isinstance(payload.get("tool_use_id"), str):
            out["tool_use_id"] = payload["tool_use_id"]
        if payload.get("duration") is not None:
            out["duration_ms"] = payload["duration"]
        error = payload.get("error") or payload.get("error_message")
        if event == "post-tool-use-failure" or error:
            event = "post-tool-use-failure"
            out.pop("tool_response", None)
            out["error"] = _text(error) or "tool failed"
    elif event in ("subagent-start", "subagent-stop"):
        out["agent_id"] = _text(payload.get("subagent_id") or payload.get("agent_id"))
        out["agent_type"] = _text(payload.get("subagent_type") or payload.get("agent_type"))
    elif event == "pre-compact":
        out["trigger"] = _text(payload.get("trigger")) or "auto"
    elif event == "session-end":
        out["reason"] = _text(payload.get("reason") or payload.get("status")) or "other"
    return event, out


_HEX = frozenset("0123456789abcdef")


def opencode_session(session: Any) -> Any:
    """OpenCode's session id as lorebook records it: `ses_` and the hex of the rest. Its own
    (`ses_` + 12 hex + 14 base62) reads as a generated key: the identifier check refuses it,
    and lower-cased it is still redacted wherever a brief or a report names it. The hex is
    never taken for a secret, and `bytes.fromhex` gives OpenCode's id back. Other ids pass."""
    if not isinstance(session, str) or not session.startswith("ses_"):
        return session
    tail = session[4:]
    if len(tail) != 26 or not tail.isascii() or not tail.isalnum() or set(tail[:12]) - _HEX:
        return session
    return f"ses_{tail.encode().hex()}"


def _opencode(event: str, payload: Payload) -> tuple[str, Payload]:
    """The lorebook plugin forwards `{"input": …, "output": …}` (a hook) or `{"event": …}` (a
    bus event) with the directory it runs in; see hooks/opencode_plugin.js."""
    given = payload.get("input")
    given = given if isinstance(given, dict) else {}
    result = payload.get("output")
    result = result if isinstance(result, dict) else {}
    bus = payload.get("event")
    props = bus.get("properties") if isinstance(bus, dict) else None
    props = props if isinstance(props, dict) else {}
    info = props.get("info")
    session = (
        given.get("sessionID")
        or props.get("sessionID")
        or (info.get("id") if isinstance(info, dict) else None)
    )
    out = _common(payload, session=opencode_session(session), cwd=payload.get("directory"))
    if event == "user-prompt-submit":
        parts = result.get("parts")
        texts = [
            p.get("text") for p in parts or [] if isinstance(p, dict) and p.get("type") == "text"
        ]
        out["prompt"] = "\n".join(t for t in texts if isinstance(t, str))
    elif event == "post-tool-use":
        out.update(tool_call(given.get("tool"), given.get("args")))
        if isinstance(given.get("callID"), str):
            out["tool_use_id"] = given["callID"]
        meta = result.get("metadata")
        meta = meta if isinstance(meta, dict) else {}
        code = meta.get("exit")
        if isinstance(code, int) and not isinstance(code, bool) and code != 0:
            event = "post-tool-use-failure"
            out["error"] = f"exit {code}\n{_text(result.get('output'))}"
        else:
            out["tool_response"] = result.get("output")
    elif event == "session-start":
        out["source"] = "startup"
    elif event == "session-end":
        out["reason"] = "other"
    return event, out


# -- answers: how each client takes added context ---------------------------------------------
def _nested(native: str, text: str) -> Payload:
    """Claude Code's form; Codex and Gemini CLI take it too."""
    return {"hookSpecificOutput": {"hookEventName": native, "additionalContext": text}}


def _top(native: str, text: str) -> Payload:
    """Copilot CLI (only the top-level form reaches its model) and the OpenCode plugin."""
    return {"additionalContext": text}


def _cline_answer(native: str, text: str) -> Payload:
    return {"context": text}


def _cursor_answer(native: str, text: str) -> Payload:
    return {"additional_context": text}


class Client:
    """One agent's hooks: its names (`lore hook CLIENT EVENT`, `meta.source`), its events,
    the events at which it reads context from a hook's answer, and its two mappers."""

    def __init__(
        self,
        name: str,
        source: str,
        events: Mapping[str, str],
        context: frozenset[str],
        payload: Callable[[str, Payload], tuple[str, Payload]],
        answer: Callable[[str, str], Payload],
    ) -> None:
        self.name = name
        self.source = source  # meta.source: "<source>:<normalised event>"
        self.events = events
        self.context = context  # normalised events whose answer reaches the model
        self.payload = payload
        self.answer = answer


_CONTEXT = frozenset({"session-start", "user-prompt-submit"})
CLIENTS = {
    "claude": Client("claude", "claude-code", CLAUDE_EVENTS, _CONTEXT, _claude, _nested),
    "codex": Client("codex", "codex", CODEX_EVENTS, _CONTEXT, _codex, _nested),
    "gemini": Client("gemini", "gemini-cli", GEMINI_EVENTS, _CONTEXT, _gemini, _nested),
    "copilot": Client("copilot", "copilot-cli", COPILOT_EVENTS, _CONTEXT, _copilot, _top),
    # Cline 3.0.65 runs TaskStart/TaskResume/UserPromptSubmit without waiting and reads an
    # answer only from Pre/PostToolUse (which lorebook detaches): capture only, no context
    "cline": Client("cline", "cline", CLINE_EVENTS, frozenset(), _cline, _cline_answer),
    "cursor": Client(
        "cursor", "cursor", CURSOR_EVENTS, frozenset({"session-start"}), _cursor, _cursor_answer
    ),
    "opencode": Client("opencode", "opencode", OPENCODE_EVENTS, _CONTEXT, _opencode, _top),
}


def identify(client: Client, payload: Payload, env: Mapping[str, str]) -> Client:
    """The client that really sent `payload`: Cursor and Copilot CLI also run Claude Code's
    hooks, and a call they report both ways must be logged once (dedupe by source)."""
    if client.name == "claude":
        if "cursor_version" in payload or "conversation_id" in payload:
            return CLIENTS["cursor"]
        if env.get("COPILOT_HOOK_DIR") or env.get("COPILOT_PROJECT_DIR"):
            return CLIENTS["copilot"]
    return client


def normalise(client: Client, event: str, payload: Payload) -> tuple[str, Payload]:
    """The normalised (event, payload) of one client hook; Claude-shaped payloads from other
    clients (Copilot's PascalCase entries) go through the Claude mapper."""
    if (
        "hook_event_name" in payload
        and client.name in ("copilot", "cursor")
        and ("tool_response" in payload or "tool_result" in payload or "session_id" in payload)
    ):
        event, payload = _claude(event, payload)
        event, payload = _codex(event, payload)
        if client.name == "copilot" and "tool_use_id" not in payload:
            call = copilot_call_id(payload.get("timestamp"), payload.get("tool_input"))
            if call and event in ("post-tool-use", "post-tool-use-failure"):
                payload = {**payload, "tool_use_id": call}
        return event, payload
    return client.payload(event, payload)
