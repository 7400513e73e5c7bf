"""What a session did and left open, read from its tool calls: files edited and read, commands
run with their outcomes, the last failure with its error, and the agent's own task list.

The brief needs these beyond its last few actions: a long session's edits and its failing
build scroll out of any fixed window. Pure functions over one session's (redacted) records,
oldest first; stdlib only, no I/O.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import re

from ..redact.sanitize import clip

TYPE_CHECKING = False  # typing costs milliseconds on cold paths; mypy still sees it
if TYPE_CHECKING:
    from typing import Any

    from ..contracts.records import CommandRun, FilesTouched

EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
READ_TOOLS = frozenset({"Read"})
KEEP = 30  # entries kept per list (files, commands) in the JSON answer
ERROR_CHARS = 400  # an error as the brief's data holds it (redacted first, then cut)
STORED_ERROR_CHARS = 1000  # an error as capture stores it: the log's own cut of a string
# a line of a long error that says what went wrong (the rest is usually progress output); the
# patterns here are compiled on first use (by `re`'s cache), not when a cold resume imports them
TELLING = (
    r"(?i)error|fail|panic|exception|traceback|denied|not found|no such|invalid|cannot|can't|"
    r"unknown|refused|timed? ?out|undefined|expected|missing|fatal|conflict"
)
FAILED = ("failure", "blocked")
DONE = frozenset({"completed", "done", "deleted", "cancelled", "canceled"})


def _context(action: dict[str, Any]) -> dict[str, Any]:
    context = action.get("context")
    return context if isinstance(context, dict) else {}


def _tool(action: dict[str, Any]) -> str | None:
    if action.get("type") != "tool_call":
        return None
    context = _context(action)
    tool = context.get("tool") or context.get("tool_name")
    return tool if isinstance(tool, str) and tool else None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def files_touched(actions: list[dict[str, Any]]) -> FilesTouched:
    """`{"edited": [...], "read": [...], "edited_count", "read_count"}`: the distinct files the
    session's tool calls changed (Edit, Write, MultiEdit, NotebookEdit that succeeded; and the
    `context.files` of a commit an agent logged) and those it only read, newest first, at most
    KEEP of each (the counts are all of them)."""
    edited: dict[str, None] = {}
    read: dict[str, None] = {}
    for action in reversed(actions):
        if action.get("outcome") != "success":
            continue
        if action.get("type") == "commit":
            files = _context(action).get("files")
            for path in files if isinstance(files, list) else ():
                if _text(path) is not None:
                    edited.setdefault(path, None)
            continue
        tool = _tool(action)
        path = _text(_context(action).get("file"))
        if tool is None or path is None:
            continue
        if tool in EDIT_TOOLS:
            edited.setdefault(path, None)
        elif tool in READ_TOOLS:
            read.setdefault(path, None)
    only_read = [path for path in read if path not in edited]
    return {
        "edited": list(edited)[:KEEP],
        "read": only_read[:KEEP],
        "edited_count": len(edited),
        "read_count": len(only_read),
    }


def commands_run(actions: list[dict[str, Any]]) -> list[CommandRun]:
    """The distinct commands the session ran (a tool call's or an action's `context.command`),
    newest first, at most KEEP: `{command, outcome (of its last run), runs, failures, ts}`."""
    found: dict[str, CommandRun] = {}
    for action in reversed(actions):
        command = _text(_context(action).get("command"))
        if command is None:
            continue
        key = " ".join(command.split())
        entry = found.get(key)
        if entry is None:
            if len(found) >= KEEP:
                continue
            entry = found[key] = {
                "command": key,
                "outcome": action.get("outcome"),
                "runs": 0,
                "failures": 0,
                "ts": action.get("ts"),
            }
        entry["runs"] += 1
        entry["failures"] += action.get("outcome") in FAILED
    return list(found.values())


# what a run adds to a command only to show its output differently: a pipe into a pager or
# filter at the end, a redirection of stderr or into /dev/null
_VIEW_TAIL = r"\s*\|\s*(?:head|tail|grep|less|more|cat|wc|sort|uniq|jq|tee)\b.*$"
_REDIRECT = r"\s*(?:\d?>&\d|&>\s*/dev/null|\d?>\s*/dev/null)"


def command_key(command: str) -> str:
    """`command` as a later run of the same command is recognised: whitespace squashed, and
    a trailing pipe into head/tail/grep/... and stderr redirections dropped
    (`mise run test 2>&1 | tail -20` is a run of `mise run test`)."""
    key = " ".join(command.split())
    return re.sub(_REDIRECT, "", re.sub(_VIEW_TAIL, "", key)).strip() or key


def _target(action: dict[str, Any]) -> tuple[str, str | None]:
    """What a failure was of, to match a later run of the same thing: the tool and its
    telling argument, or the action type and its service or epic."""
    context = _context(action)
    tool = _tool(action)
    for key in ("command", "file", "pattern", "url", "query", "subagent", "skill", "mcp_tool"):
        value = _text(context.get(key))
        if value is not None:
            return tool or str(action.get("type")), " ".join(value.split())
    if tool is not None:
        return tool, None
    for key in ("service", "validation_type"):
        value = _text(context.get(key))
        if value is not None:
            return str(action.get("type")), value
    epic = action.get("epic") or context.get("epic")
    return str(action.get("type")), epic if isinstance(epic, str) else None


def action_target(action: dict[str, Any]) -> tuple[str, str | None]:
    """What `action` was of, on one line's terms: (its tool, else its type; the telling
    argument: command, file, pattern, ..., else its service or epic, or None)."""
    return _target(action)


def _same_run(action: dict[str, Any]) -> tuple[str, str | None]:
    """`_target`, a command by its `command_key`: what a later run must match to retry it."""
    kind, target = _target(action)
    if target is not None and _text(_context(action).get("command")) is not None:
        return kind, command_key(target)
    return kind, target


def error_digest(text: str, limit: int = STORED_ERROR_CHARS) -> str:
    """A long error (redacted already: redact first, then cut) in at most `limit` characters,
    kept where it tells the most: its first two lines, the lines that name a failure (`FAIL`,
    `error`, `not found`, ...) and its last two, with a `…` line where lines were left out.
    A build or test run prints pages of progress before the line that failed; the log's own
    cut keeps only the head. Short text is returned as it is."""
    if len(text) <= limit:
        return text
    lines = text.splitlines()
    each = max(limit // 4, 1)
    head = list(range(min(2, len(lines))))
    tail = [n for n in range(max(len(lines) - 2, 0), len(lines)) if n not in head]
    keep = set(head + tail)
    used = sum(min(len(lines[n]), each) + 1 for n in keep)
    for number, line in enumerate(lines):
        if number in keep or not re.search(TELLING, line):
            continue
        cost = min(len(line), each) + 1
        if used + cost + 4 * len(keep) > limit:
            break
        keep.add(number)
        used += cost
    out: list[str] = []
    last = -1
    for number in sorted(keep):
        if number != last + 1:
            out.append("…")
        out.append(clip(lines[number], each))
        last = number
    return clip("\n".join(out), limit)


def error_excerpt(error: Any, limit: int = ERROR_CHARS) -> str | None:
    """A (redacted) error on one line of at most `limit` characters: whole when it fits;
    else its `error_digest` (first lines, the lines naming a failure, last lines)."""
    if not isinstance(error, str) or not error.strip():
        return None
    flat = " ".join(error.split())
    if len(flat) <= limit:
        return flat
    return clip(" ".join(error_digest(error, limit).split()), limit)


def failure_summary(
    actions: list[dict[str, Any]], index: int, limit: int = ERROR_CHARS
) -> dict[str, Any]:
    """The failure `actions[index]` as the brief states it: `{id, ts, type, tool, target,
    outcome, error (an excerpt), retried}` (`retried`: the outcome of the newest later run
    of the same target, else null)."""
    action = actions[index]
    target = _target(action)[1]
    same = _same_run(action)
    retried = None
    if target is not None:
        for later in reversed(actions[index + 1 :]):
            if _same_run(later) == same:
                retried = later.get("outcome")
                break
    return {
        "id": action.get("id"),
        "ts": action.get("ts"),
        "type": action.get("type"),
        "tool": _tool(action),
        "target": target,
        "outcome": action.get("outcome"),
        "error": error_excerpt(action.get("error"), limit),
        "retried": retried,
    }


def last_failures(
    actions: list[dict[str, Any]],
) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """(the newest failed or blocked action, the newest failed action with a command) as
    `failure_summary`s; the second is None when the session has no failed command."""
    last = command = None
    for index in range(len(actions) - 1, -1, -1):
        action = actions[index]
        if action.get("outcome") not in FAILED:
            continue
        if last is None:
            last = failure_summary(actions, index)
        if _text(_context(action).get("command")) is not None:
            command = last if last["id"] == action.get("id") else failure_summary(actions, index)
            break
    return last, command


# -- the agent's own task list -------------------------------------------------------------
def _todo_items(action: dict[str, Any]) -> list[dict[str, Any]] | None:
    """A TodoWrite call's list: its input's `todos`, else its response's `newTodos`."""
    context = _context(action)
    for holder, key in (("input", "todos"), ("response", "newTodos")):
        value = context.get(holder)
        todos = value.get(key) if isinstance(value, dict) else None
        if isinstance(todos, list):
            items = []
            for todo in todos:
                if isinstance(todo, dict) and _text(todo.get("content")):
                    status = todo.get("status")
                    items.append(
                        {
                            "id": None,
                            "subject": todo["content"],
                            "status": status if isinstance(status, str) else "pending",
                        }
                    )
            return items
    return None


def _task(value: Any) -> tuple[str, dict[str, Any]] | None:
    """(id, {subject, status}) of one task as TaskList, TaskGet or TaskCreate answer it."""
    if not isinstance(value, dict):
        return None
    ident = value.get("id")
    if not isinstance(ident, str | int) or isinstance(ident, bool):
        return None
    item: dict[str, Any] = {}
    if _text(value.get("subject")):
        item["subject"] = value["subject"]
    if _text(value.get("status")):
        item["status"] = value["status"]
    return str(ident), item


def _apply_task_call(tasks: dict[str, dict[str, Any]], tool: str, context: dict[str, Any]) -> None:
    """One TaskCreate, TaskUpdate, TaskList or TaskGet call applied to `tasks` (id -> item)."""
    given: dict[str, Any] = _mapping(context.get("input"))
    answer: dict[str, Any] = _mapping(context.get("response"))
    if answer.get("success") is False:
        return
    if tool == "TaskCreate":
        found = _task(answer.get("task"))
        if found is not None:
            ident, item = found
            subject = item.get("subject") or _text(given.get("subject"))
            tasks[ident] = {"id": ident, "subject": subject, "status": "pending"}
    elif tool == "TaskUpdate":
        given_id = given.get("taskId", answer.get("taskId"))
        if not isinstance(given_id, str | int) or isinstance(given_id, bool):
            return
        key = str(given_id)
        item = tasks.setdefault(key, {"id": key, "subject": None, "status": None})
        change = answer.get("statusChange")
        status = given.get("status") or (change.get("to") if isinstance(change, dict) else None)
        if isinstance(status, str) and status:
            item["status"] = status
        if _text(given.get("subject")):
            item["subject"] = given["subject"]
    elif tool == "TaskList" and isinstance(answer.get("tasks"), list):
        listed = [found for found in map(_task, answer["tasks"]) if found is not None]
        tasks.clear()
        for ident, item in sorted(listed, key=lambda pair: _order(pair[0])):
            tasks[ident] = {"id": ident, "subject": None, "status": None, **item}
    elif tool == "TaskGet":
        found = _task(answer.get("task"))
        if found is not None:
            ident, item = found
            tasks.setdefault(ident, {"id": ident, "subject": None, "status": None}).update(item)


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _order(ident: str) -> tuple[int, str]:
    return (int(ident), "") if ident.isdigit() else (1 << 62, ident)


def task_list(actions: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The agent's own task list as the session left it, or None: the newest TodoWrite list,
    or the tasks built from TaskCreate/TaskUpdate/TaskList/TaskGet calls, whichever was
    touched last. `{tool, ts, items: [{id, subject, status}], open, completed}`; deleted
    tasks are left out, items keep the agent's order (tasks by id)."""
    todo_writes: list[dict[str, Any]] = []
    tasks: dict[str, dict[str, Any]] = {}
    tasks_ts: str | None = None
    for action in actions:
        tool = _tool(action)
        if tool is None or action.get("outcome") != "success":
            continue
        if tool == "TodoWrite":
            todo_writes.append(action)
        elif tool in ("TaskCreate", "TaskUpdate", "TaskList", "TaskGet"):
            _apply_task_call(tasks, tool, _context(action))
            tasks_ts = str(action.get("ts"))
    todos: tuple[str, list[dict[str, Any]]] | None = None
    for action in reversed(todo_writes):  # each holds the whole list: the newest one that does
        found = _todo_items(action)
        if found is not None:
            todos = (str(action.get("ts")), found)
            break
    if tasks_ts is not None and (todos is None or tasks_ts >= todos[0]):
        kept = [t for t in tasks.values() if t.get("status") != "deleted"]
        items = sorted(kept, key=lambda t: _order(t["id"]))
        tool, ts = "TaskCreate", tasks_ts
    elif todos is not None:
        ts, items = todos
        tool = "TodoWrite"
    else:
        return None
    if not items:
        return None
    done = sum(1 for item in items if item.get("status") in DONE)
    return {"tool": tool, "ts": ts, "items": items, "open": len(items) - done, "completed": done}


def first_open_task(tasks: dict[str, Any] | None) -> tuple[int, dict[str, Any]] | None:
    """(1-based position, item) of the task to go on with: the first in progress, else the
    first pending (any status not done), else None."""
    if not tasks:
        return None
    items = tasks["items"]
    for wanted in ("in_progress", None):
        for number, item in enumerate(items, 1):
            status = item.get("status")
            if (status == wanted) if wanted else status not in DONE:
                return number, item
    return None
