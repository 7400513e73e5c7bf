"""Codex CLI's rollout files as the hook events it fires while it writes them.

`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl` (`CODEX_HOME` defaults to
`~/.codex`). Each line is `{"timestamp", "type", "payload"}` (codex-rs/protocol `RolloutLine`):
`session_meta` (id, cwd, git), `response_item` (`function_call`, `custom_tool_call` and
`local_shell_call` matched to their `*_output` by `call_id`), `event_msg` (`user_message`: a
prompt; `task_complete`: the turn's end), `compacted`, `turn_context`. Unknown types are
skipped: a newer Codex adds some. Tool calls go through the same mapping as Codex's
PostToolUse hook payloads (`hooks.clients`), so an imported call and a hooked one match.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..clients import CLIENTS
from .events import Event, Transcript, inside, read_lines

CALLS = {"function_call": "arguments", "custom_tool_call": "input", "local_shell_call": "action"}
OUTPUTS = ("function_call_output", "custom_tool_call_output")
TURN_ENDS = ("task_complete", "turn_complete")


def home(env: Any) -> Path:
    base = env.get("CODEX_HOME") or str(Path(env.get("HOME") or Path.home()) / ".codex")
    return Path(base).expanduser()


def session_files(env: Any, root: Path, problems: list[str]) -> list[Path]:
    """Every rollout file under `$CODEX_HOME/sessions` (their cwd is checked on reading)."""
    top = home(env) / "sessions"
    if not top.is_dir():
        problems.append(f"{top}: no Codex sessions here (not a directory)")
        return []
    return [p for p in sorted(top.rglob("rollout-*.jsonl")) if p.is_file() and not p.is_symlink()]


def read(path: Path, root: Path) -> Transcript | None:
    """The session in `path` when its working directory is in `root`, else None. OSError when
    it cannot be read."""
    problems: list[str] = []
    lines = read_lines(path, problems)
    meta = next((_payload(x) for x in lines if x.get("type") == "session_meta"), {})
    cwd = meta.get("cwd")
    if not isinstance(cwd, str):
        cwd = next((str(_payload(x)["cwd"]) for x in lines if _has_cwd(x)), "")
    if not inside(cwd, root):
        return None
    session = meta.get("id") if isinstance(meta.get("id"), str) else path.stem
    git = meta.get("git")
    branch = git.get("branch") if isinstance(git, dict) else None
    found = Transcript(str(session), cwd, path, problems=problems)
    found.branch = branch if isinstance(branch, str) else ""
    found.events = list(events(lines))
    return found


def _payload(line: dict[str, Any]) -> dict[str, Any]:
    value = line.get("payload")
    return value if isinstance(value, dict) else {}


def _has_cwd(line: dict[str, Any]) -> bool:
    return line.get("type") == "turn_context" and isinstance(_payload(line).get("cwd"), str)


def _prompt(kind: Any, inner: Any, payload: dict[str, Any]) -> str | None:
    """The user's prompt in a line: `event_msg` `user_message` (its `message`), or, as Codex
    0.171 writes it, `event_msg` `item_completed` of a `UserMessage` item (its text parts);
    None for any other line."""
    if kind != "event_msg":
        return None
    if inner == "user_message":
        text = payload.get("message")
        return text if isinstance(text, str) else ""
    item = payload.get("item")
    if inner != "item_completed" or not isinstance(item, dict) or item.get("type") != "UserMessage":
        return None
    parts = item.get("content")
    parts = parts if isinstance(parts, list) else []
    texts = [p.get("text") for p in parts if isinstance(p, dict) and p.get("type") == "text"]
    return "\n".join(t for t in texts if isinstance(t, str))


def events(lines: list[dict[str, Any]]) -> Iterator[Event]:
    """The hook events of a rollout's lines, in order; a call's when its output came."""
    calls: dict[Any, dict[str, Any]] = {}
    first = min((str(x["timestamp"]) for x in lines if x.get("timestamp")), default="")
    yield Event("session-start", "SessionStart", first, {"source": "startup"})
    in_turn, last, asked = False, first, ""
    for line in lines:
        at = last = str(line.get("timestamp") or last)
        payload, kind = _payload(line), line.get("type")
        inner = payload.get("type")
        text = _prompt(kind, inner, payload)
        if text is not None:
            if text.strip() and not (in_turn and text == asked):  # a version writing both forms
                asked = text
                yield Event("user-prompt-submit", "UserPromptSubmit", at, {"prompt": text})
                in_turn = True
        elif kind == "event_msg" and inner in TURN_ENDS and in_turn:
            yield Event("stop", "Stop", at, {"stop_hook_active": False})
            in_turn = False
        elif kind == "compacted":
            yield Event("pre-compact", "PreCompact", at, {"trigger": "auto"})
        elif kind == "response_item" and inner in CALLS:
            calls[payload.get("call_id") or payload.get("id")] = payload
        elif kind == "response_item" and inner in OUTPUTS:
            call = payload.get("call_id")
            item = calls.pop(call, None)
            if isinstance(call, str) and item is not None:
                yield _post(item, call, payload.get("output"), at)
    if in_turn:
        yield Event("stop", "Stop", last, {"stop_hook_active": False})


def _post(item: dict[str, Any], call: str, output: Any, at: str) -> Event:
    """A PostToolUse as Codex's hook sends it, through the same client mapping."""
    kind = str(item.get("type"))
    given = item.get(CALLS[kind])
    name: Any = item.get("name") if isinstance(item.get("name"), str) else kind
    args: Any = _json(given) if kind == "function_call" else given
    if kind == "local_shell_call":  # `action: {type: exec, command: [...]}`
        name = "local_shell"
        args = {"command": given.get("command") if isinstance(given, dict) else given}
    payload = {"tool_name": name, "tool_input": args, "tool_use_id": call,
               "tool_response": _text(output)}  # fmt: skip
    event, normal = CLIENTS["codex"].payload("post-tool-use", payload)
    return Event(event, "PostToolUse", at, normal)


def _json(text: Any) -> Any:
    if not isinstance(text, str):
        return text if text is not None else {}
    try:
        return json.loads(text)
    except ValueError:
        return {"arguments": text}


def _text(output: Any) -> Any:
    """A call's output as the hook gets it: text (older rollouts: `{content, success}`, newer
    ones a list of content items)."""
    if isinstance(output, dict) and isinstance(output.get("content"), str):
        return output["content"]
    if isinstance(output, list):
        parts = [str(i.get("text", "")) for i in output if isinstance(i, dict)]
        return "\n".join(p for p in parts if p)
    return output
