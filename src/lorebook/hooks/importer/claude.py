"""Claude Code's session files as the hook events it fired while they were written.

`~/.claude/projects/<dashed cwd>/<session>.jsonl` (`CLAUDE_CONFIG_DIR` moves `~/.claude`); a
subagent's own calls in `<session>/subagents/agent-*.jsonl` (older versions: `agent-*.jsonl`
beside the sessions). The events are the ones `lore hooks install claude` wires, with the
payloads Claude Code sends: SessionStart (`startup`; `compact` after a compaction),
UserPromptSubmit per human prompt, Stop at the end of each turn, PreCompact at a compaction,
SubagentStart/SubagentStop around a Task call (`Agent` in newer versions; one launched in the
background stops with its transcript's last line), and per tool call PostToolUse
(`tool_response` = the result's structured `toolUseResult`) or PostToolUseFailure (`error` = the
result text). A subagent's calls carry its `agent_id` (its lines' `agentId`, else its file's
name), as the hooks Claude Code runs inside a subagent do. A call refused at the permission
prompt fires no post-tool hook, nor one with no result.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .events import Event, Transcript, inside, read_lines

NOT_PROMPT = (
    "[Request interrupted",
    "<command-",
    "<local-command",
    "Caveat:",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
    "<task-notification",
)
REJECTED = "The user doesn't want to proceed"
SUBAGENT_TOOLS = ("Task", "Agent")
_DASH = re.compile(r"[^A-Za-z0-9]")


def text_of(content: Any) -> str:
    """The text of a message's content: a string, or its text blocks joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text", ""))
            for b in content
            if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


def human_prompt(line: dict[str, Any]) -> str | None:
    """The text of a prompt a person typed, else None (tool results, injected lines, slash
    commands and their output, interrupts)."""
    if line.get("type") != "user" or line.get("isMeta") or line.get("isCompactSummary"):
        return None
    content = (line.get("message") or {}).get("content")
    if isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    ):
        return None
    text = text_of(content).strip()
    if not text or text.startswith(NOT_PROMPT):
        return None
    return text


def results(lines: list[dict[str, Any]]) -> dict[Any, tuple[dict[str, Any], Any]]:
    """tool_use_id -> (its tool_result block, the line's structured `toolUseResult`)."""
    found = {}
    for line in lines:
        content = (line.get("message") or {}).get("content")
        if line.get("type") != "user" or not isinstance(content, list):
            continue
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                found[block.get("tool_use_id")] = (block, line.get("toolUseResult"))
    return found


def replayable(result: tuple[dict[str, Any], Any] | None) -> bool:
    """A call that fires a post-tool hook: it has a result and was not refused."""
    return result is not None and not text_of(result[0].get("content")).startswith(REJECTED)


def tool_uses(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every tool_use block of the assistant's lines, in order."""
    return [
        block
        for line in lines
        if line.get("type") == "assistant"
        for block in (line.get("message") or {}).get("content") or []
        if isinstance(block, dict) and block.get("type") == "tool_use"
    ]


def events(
    lines: list[dict[str, Any]],
    *,
    sidechain: bool = False,
    final_stop: bool = True,
    agent: str = "",
) -> Iterator[Event]:
    """The hook events of a transcript's lines, in order, ending with the last turn's Stop
    (`final_stop`). A subagent's file (`sidechain`) gives its tool calls only: its prompt is
    the Task's, its session the parent's; each call names the subagent (its line's `agentId`,
    else `agent`)."""
    found = results(lines)
    pending: dict[Any, tuple[dict[str, Any], str]] = {}
    first = min((str(line["timestamp"]) for line in lines if line.get("timestamp")), default="")
    if not sidechain:
        start = {"source": "startup", "model": _model(lines)}
        yield Event("session-start", "SessionStart", first, {k: v for k, v in start.items() if v})
    in_turn, last = False, first
    for line in lines:
        at = str(line.get("timestamp") or last)
        last = at
        kind = line.get("type")
        if sidechain:
            pass
        elif kind == "system" and line.get("subtype") == "compact_boundary":
            trigger = (line.get("compactMetadata") or {}).get("trigger") or "auto"
            yield Event("pre-compact", "PreCompact", at, {"trigger": trigger})
            yield Event("session-start", "SessionStart", at, {"source": "compact"})
            continue
        else:
            prompt = human_prompt(line)
            if prompt is not None:
                if in_turn:
                    yield Event("stop", "Stop", at, {"stop_hook_active": False})
                yield Event("user-prompt-submit", "UserPromptSubmit", at, {"prompt": prompt})
                in_turn = True
                continue
        content = (line.get("message") or {}).get("content")
        if not isinstance(content, list):
            continue
        for block in content:
            if not isinstance(block, dict):
                continue
            if kind == "assistant" and block.get("type") == "tool_use":
                pending[block.get("id")] = (block, "")
                if sidechain:
                    inside = line.get("agentId")
                    pending[block.get("id")] = (block, inside if isinstance(inside, str) else agent)
                elif block.get("name") in SUBAGENT_TOOLS:
                    out = (found.get(block.get("id")) or ({}, None))[1]
                    ran = out.get("agentId") if isinstance(out, dict) else None
                    ran = ran or f"agent-{str(block.get('id', ''))[-8:]}"
                    pending[block.get("id")] = (block, ran)
                    kind_of = (block.get("input") or {}).get("subagent_type") or ""
                    yield Event(
                        "subagent-start",
                        "SubagentStart",
                        at,
                        {"agent_id": ran, "agent_type": kind_of},
                    )
            elif kind == "user" and block.get("type") == "tool_result":
                call, who = pending.pop(block.get("tool_use_id"), (None, ""))
                if call is None or not replayable((block, None)):
                    continue
                yield from _post(call, who, block, line.get("toolUseResult"), at, sidechain)
    if in_turn and final_stop:  # the last turn ended too (with the session, or a disconnect)
        yield Event("stop", "Stop", last, {"stop_hook_active": False})


def _model(lines: list[dict[str, Any]]) -> str:
    """The model of the first answer (not `<synthetic>`: lines Claude Code writes itself)."""
    for line in lines:
        model = (
            (line.get("message") or {}).get("model") if line.get("type") == "assistant" else None
        )
        if isinstance(model, str) and model and not model.startswith("<"):
            return model
    return ""


def _post(
    call: dict[str, Any],
    agent: str,
    block: dict[str, Any],
    structured: Any,
    at: str,
    sidechain: bool = False,
) -> Iterator[Event]:
    """A call's post-tool event: in a subagent's file, naming the subagent (`agent`); in the
    session's own, a Task call's after its SubagentStop."""
    name, tool_input = call.get("name") or "", call.get("input") or {}
    if agent and not sidechain:
        kind = tool_input.get("subagent_type") or "" if isinstance(tool_input, dict) else ""
        fields = {"agent_id": agent, "agent_type": kind, "stop_hook_active": False}
        yield Event("subagent-stop", "SubagentStop", at, fields)
    base: dict[str, Any] = {
        "tool_name": name,
        "tool_input": tool_input,
        "tool_use_id": call.get("id"),
    }
    if agent and sidechain:
        base["agent_id"] = agent
    if block.get("is_error"):
        error = text_of(block.get("content")) or str(structured or "")
        fields = {**base, "error": error, "is_interrupt": False}
        yield Event("post-tool-use-failure", "PostToolUseFailure", at, fields)
    else:
        response = structured if structured is not None else block.get("content")
        yield Event("post-tool-use", "PostToolUse", at, {**base, "tool_response": response})


def remap(value: Any, old: str, new: str) -> Any:
    """`value` with the working directory `old` replaced by `new` (a replay elsewhere)."""
    if isinstance(value, str):
        return value.replace(old, new) if old else value
    if isinstance(value, list):
        return [remap(v, old, new) for v in value]
    if isinstance(value, dict):
        return {k: remap(v, old, new) for k, v in value.items()}
    return value


# -- the files ---------------------------------------------------------------------------------
def projects_dir(env: Any) -> Path:
    base = env.get("CLAUDE_CONFIG_DIR") or str(Path(env.get("HOME") or Path.home()) / ".claude")
    return Path(base).expanduser() / "projects"


def session_files(env: Any, root: Path, problems: list[str]) -> list[Path]:
    """The main session files whose folder name can hold a session of `root` (the folder is
    the working directory with every other character than a letter or digit as `-`)."""
    top = projects_dir(env)
    if not top.is_dir():
        problems.append(f"{top}: no Claude Code sessions here (not a directory)")
        return []
    dashed = _DASH.sub("-", str(root))
    out = []
    for folder in sorted(top.iterdir()):
        if folder.name != dashed and not folder.name.startswith(dashed + "-"):
            continue
        if folder.is_dir() and not folder.is_symlink():
            out += [
                p
                for p in sorted(folder.glob("*.jsonl"))
                if not p.name.startswith("agent-") and p.is_file() and not p.is_symlink()
            ]
    return out


def read(path: Path, root: Path) -> Transcript | None:
    """The session in `path` with its subagents' calls, when its working directory is in
    `root`; None for another repository's. OSError when it cannot be read."""
    problems: list[str] = []
    lines = read_lines(path, problems)
    cwd = next((str(line["cwd"]) for line in lines if isinstance(line.get("cwd"), str)), "")
    if not inside(cwd, root):
        return None
    session = next((str(x["sessionId"]) for x in lines if x.get("sessionId")), path.stem)
    branch = next((str(x["gitBranch"]) for x in lines if x.get("gitBranch")), "")
    found = Transcript(session, cwd, path, problems=problems, branch=branch)
    found.events = list(events(lines))
    side: list[Event] = []
    for sub in _subagent_files(path, session):
        agent = sub.stem.removeprefix("agent-")
        try:
            own = list(events(read_lines(sub, problems), sidechain=True, agent=agent))
        except OSError as exc:
            problems.append(f"{sub}: cannot be read ({exc.strerror or exc}); skipped")
            continue
        side += own + _late_stops(found.events, own)
    if side:  # a subagent's calls where they happened among the session's own
        found.events = _merge(found.events, sorted(side, key=lambda e: e.at))
    return found


def _late_stops(main: list[Event], own: list[Event]) -> list[Event]:
    """The SubagentStop of a subagent that worked on after its Task call answered (launched in
    the background), taken out of `main` and moved to its last call."""
    agents = {e.fields.get("agent_id") for e in own} - {None, ""}
    last = max((e.at for e in own if e.at), default="")
    moved = []
    for event in list(main):
        stop = event.event == "subagent-stop" and event.fields.get("agent_id") in agents
        if stop and event.at < last:
            main.remove(event)
            moved.append(Event(event.event, event.name, last, event.fields))
    return moved


def _subagent_files(path: Path, session: str) -> list[Path]:
    own = sorted((path.parent / path.stem / "subagents").glob("agent-*.jsonl"))
    older = []
    for candidate in sorted(path.parent.glob("agent-*.jsonl")):  # older versions: beside it
        try:
            with open(candidate, encoding="utf-8", errors="replace") as lines:
                head = lines.readline(65536)
        except OSError:
            continue
        if f'"sessionId":"{session}"' in head.replace(" ", ""):
            older.append(candidate)
    return [p for p in own + older if p.is_file() and not p.is_symlink()]


def _merge(main: list[Event], side: list[Event]) -> list[Event]:
    """`side` placed among `main` by time, each keeping its own order (ties: main first); the
    final Stop stays last."""
    import heapq

    tail = [main.pop()] if main and main[-1].event == "stop" else []
    return [*heapq.merge(main, side, key=lambda e: e.at), *tail]
