"""Pure analysis of one session's records: what is still open, what failed, what comes next.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import re

from ..redact.sanitize import clip
from .sessions import SessionInfo

TYPE_CHECKING = False  # typing costs milliseconds on cold paths; mypy still sees it
if TYPE_CHECKING:
    from typing import Any


def _epic(record: dict[str, Any]) -> str | None:
    context = record.get("context") or {}
    value = record.get("epic") or context.get("epic_id") or context.get("epic")
    return value if isinstance(value, str) else None


def _agent_id(record: dict[str, Any]) -> str | None:
    value = (record.get("context") or {}).get("agent_id")
    return value if isinstance(value, str) else None


def _closes(later: dict[str, Any], opened: dict[str, Any]) -> bool:
    """Does `later` (same session, after `opened`) close the in-progress action `opened`?"""
    if later.get("parent") == opened["id"]:
        return True
    if later["type"] != opened["type"]:
        return False
    if opened["type"] == "spawn":
        agent_id = _agent_id(opened)
        return agent_id is not None and _agent_id(later) == agent_id
    if opened["type"] in ("validate", "deploy"):
        epic = _epic(opened)
        return epic is not None and _epic(later) == epic
    return False


def open_actions(actions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """In-progress actions (oldest first) that no later action in the session closed."""
    still_open = []
    for index, action in enumerate(actions):
        if action["outcome"] != "in_progress":
            continue
        if not any(_closes(later, action) for later in actions[index + 1 :]):
            still_open.append(action)
    return still_open


def failed_validations(actions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Failed `validate` actions not followed by a successful validation of the same epic."""
    failed = []
    for index, action in enumerate(actions):
        if action["type"] != "validate" or action["outcome"] != "failure":
            continue
        epic = _epic(action)
        if not any(
            later["type"] == "validate" and later["outcome"] == "success" and _epic(later) == epic
            for later in actions[index + 1 :]
        ):
            failed.append(action)
    return failed


def current_epic(actions: list[dict[str, Any]]) -> str | None:
    for action in reversed(actions):
        epic = _epic(action)
        if epic:
            return epic
    return None


# the tool-call summary fields (log.toolsummary) in the order a one-line description prefers them
DETAIL_KEYS = ("command", "file", "pattern", "url", "query", "subagent", "skill")


def tool_detail(context: dict[str, Any]) -> tuple[str, str] | None:
    """(tool name, its telling field) of a stored tool call's context, for a one-line
    description; records logged before these fields existed, or by the MCP server, carry only
    `tool` or `tool_name`."""
    tool = context.get("tool") or context.get("tool_name")
    if not isinstance(tool, str) or not tool:
        return None
    for key in DETAIL_KEYS:
        value = context.get(key)
        if isinstance(value, str) and value.strip():
            if key == "subagent" and isinstance(context.get("description"), str):
                value = f"{value} ({context['description']})"
            return tool, " ".join(value.split())
    return tool, ""


def describe(action: dict[str, Any]) -> str:
    """A short human phrase for an action: type, the most telling context field, outcome; a
    tool call by its tool and telling argument (`Bash: pytest -q [failure]`)."""
    context = action.get("context") or {}
    tool = tool_detail(context) if action["type"] == "tool_call" else None
    if tool is not None:
        name, argument = tool
        label = f"{name}: {clip(argument, 100, '...')}" if argument else name
        epic = _epic(action)
        return label + (f" on {epic}" if epic else "") + f" [{action['outcome']}]"
    detail = ""
    for key in (
        "task_description",
        "task",
        "message",
        "service",
        "approach",
        "tool_name",
        "validation_type",
        "query",
        "title",
        "description",
    ):
        value = context.get(key)
        if isinstance(value, str) and value:
            detail = clip(value, 80, "...")  # the records are redacted: a cut keeps markers
            break
    parts = [action["type"]]
    if detail:
        parts.append(f"({detail})")
    epic = _epic(action)
    if epic:
        parts.append(f"on {epic}")
    return " ".join(parts) + f" [{action['outcome']}]"


def _hhmm(ts: str) -> str:
    return f"{ts[:10]} {ts[11:16]} UTC"


def _failures(action: dict[str, Any]) -> str:
    context = action.get("context") or {}
    items = context.get("failures")
    if isinstance(items, list) and items:
        shown = ", ".join(str(i) for i in items[:3])
        return shown + (f" and {len(items) - 3} more" if len(items) > 3 else "")
    return str(action.get("error") or "see the validation output")


def work_in_progress(
    actions: list[dict[str, Any]], still_open: list[dict[str, Any]], failed: list[dict[str, Any]]
) -> str:
    """One sentence saying what the session was in the middle of."""
    spawns = [a for a in still_open if a["type"] == "spawn"]
    if spawns:
        spawn = spawns[-1]
        context = spawn.get("context") or {}
        who = _agent_id(spawn) or "(no agent id)"
        kind = context.get("subagent_type")
        label = f"{kind} subagent" if isinstance(kind, str) else "Subagent"
        return f"{label[:1].upper()}{label[1:]} {who} is still running: {describe(spawn)}."
    if still_open:
        return f"Still in progress since {_hhmm(still_open[-1]['ts'])}: {describe(still_open[-1])}."
    if failed:
        last = failed[-1]
        epic = _epic(last)
        target = f" of {epic}" if epic else ""
        return f"Validation{target} failed: {_failures(last)}."
    if actions:
        return f"Last action: {describe(actions[-1])} at {_hhmm(actions[-1]['ts'])}."
    return "No actions were logged in this session."


# Suggested steps read as instructions, so they are lorebook's own templates filled only with
# bounded fields that cannot carry a sentence: a validated action type, id, time and outcome,
# counts, and names (epic, agent id, service, branch, path, commit) that pass `_SAFE_NAME`.
# Error text, failure lists, task descriptions and learning text never go into a step: they
# stay in the records the brief shows as data.
_SAFE_NAME = re.compile(r"^[A-Za-z0-9_.][A-Za-z0-9_.:@/+-]{0,99}$")
_SAFE_HASH = re.compile(r"^[0-9a-f]{7,40}$")


def _safe(value: Any, pattern: re.Pattern[str] = _SAFE_NAME) -> str | None:
    """`value` when it is a short name that cannot carry words or markup, else None."""
    return value if isinstance(value, str) and pattern.match(value) else None


def _label(action: dict[str, Any]) -> str:
    """An action as a step names it: its type and, when safe, its epic."""
    epic = _safe(_epic(action))
    return f"the {action['type']} action" + (f" on {epic}" if epic else "")


def next_steps(
    info: SessionInfo,
    actions: list[dict[str, Any]],
    still_open: list[dict[str, Any]],
    failed: list[dict[str, Any]],
    git: dict[str, Any] | None,
    *,
    failures: tuple[dict[str, Any] | None, dict[str, Any] | None] = (None, None),
    tasks: dict[str, Any] | None = None,
) -> list[str]:
    """Concrete suggestions, most urgent first, from templates only (see `_SAFE_NAME`):
    `failures` are the last failure and the last failed command (`log.tool_activity.last_failures`),
    `tasks` the agent's own task list (`log.tool_activity.task_list`)."""
    steps: list[str] = []
    for action in still_open:
        context = action.get("context") or {}
        if action["type"] == "spawn":
            who = _safe(_agent_id(action))
            steps.append(
                f"Check the status of {f'subagent {who}' if who else 'the subagent'} "
                f"(spawned {_hhmm(action['ts'])}); if it finished, validate its work."
            )
        elif action["type"] == "deploy":
            service = _safe(context.get("service"))
            steps.append(
                f"Check whether the deploy of {service or 'the service'} started at "
                f"{_hhmm(action['ts'])} finished; run its health check."
            )
        else:
            steps.append(
                f"Check whether {_label(action)} started at {_hhmm(action['ts'])} "
                "finished; it was never closed."
            )
    for action in failed:
        epic = _safe(_epic(action))
        target = f" of {epic}" if epic else ""
        items = (action.get("context") or {}).get("failures")
        count = (
            f"{len(items)} failure{'s' if len(items) != 1 else ''}, listed"
            if isinstance(items, list) and items
            else "its error is shown"
        )
        steps.append(
            f"Fix the failures from the validation{target} ({count} under failed "
            "validations), then re-validate."
        )
    last = actions[-1] if actions else None
    step = _failure_step(failures, last)
    if step:
        steps.append(step)
    step = _task_step(tasks)
    if step:
        steps.append(step)
    if git:
        dirty = git.get("dirty") or []
        if dirty:
            safe = [p for p in (_safe(p) for p in dirty) if p][:3]
            more = len(dirty) - len(safe)
            shown = ", ".join(safe) + (f" and {more} more" if safe and more else "")
            steps.append(
                f"Review {len(dirty)} uncommitted file(s)"
                f"{f' ({shown})' if shown else ''}; commit or discard them."
            )
        unpushed = git.get("unpushed")
        if isinstance(unpushed, int) and not isinstance(unpushed, bool) and unpushed > 0:
            branch = _safe(git.get("branch")) or "the current branch"
            steps.append(f"Push {unpushed} unpushed commit(s) on {branch}.")
    commits = [
        i for i, a in enumerate(actions) if a["type"] == "commit" and a["outcome"] == "success"
    ]
    deploys = [i for i, a in enumerate(actions) if a["type"] == "deploy"]
    if commits and not failed and (not deploys or deploys[-1] < commits[-1]):
        commit = actions[commits[-1]]
        ref = _safe((commit.get("context") or {}).get("commit_hash"), _SAFE_HASH)
        steps.append(
            f"Deploy if needed: {f'commit {ref}' if ref else 'the last commit'} was never "
            "deployed in this session."
        )
    if not steps:
        epic = _safe(current_epic(actions))
        if info.status == "ended":
            reason = _safe(info.end_reason) or "normally"
            steps.append(
                f"The session ended ({reason}); start the next task{f' on {epic}' if epic else ''}."
            )
        elif last:
            steps.append(f"Continue from the last action: {_label(last)} [{last['outcome']}].")
    return steps


# a command a step may quote: one line of plain words, paths, flags and `&&`/`2>&1`, no quotes,
# backticks, `$`, `;`, `|` or brackets (so no redaction marker, substitution or pipe to a shell)
_SAFE_COMMAND = re.compile(r"^[A-Za-z0-9_.:/@+=,%~^ &>-]{1,120}$")


def _failure_step(
    failures: tuple[dict[str, Any] | None, dict[str, Any] | None], last: dict[str, Any] | None
) -> str | None:
    """Fix and retry the newest failure that was not run again with success: a failed command
    (quoted only when `_SAFE_COMMAND` holds), a failed action such as a deploy, or a tool's
    failure when it is the session's last action (a refused edit is retried at once, else)."""
    newest, command = failures
    for failure, section in ((newest, "Last failure"), (command, "Last failed command")):
        if failure is None or failure.get("retried") == "success":
            continue
        if failure.get("type") == "validate":
            continue  # the failed validations' own step
        tool = failure.get("tool")
        is_command = failure is command or (command is not None and failure["id"] == command["id"])
        if tool is not None and not is_command and (last is None or last["id"] != failure["id"]):
            continue
        when = _hhmm(str(failure.get("ts")))
        where = f"its error is under {section}" if failure.get("error") else f"see {section}"
        if is_command:
            shown = _safe(failure.get("target"), _SAFE_COMMAND)
            what = f"`{shown}`" if shown else f"the {_safe(tool) or 'failed'} command"
            return f"Fix what made {what} fail at {when} ({where}), then run it again."
        kind = _safe(failure.get("type")) or "action"
        if tool is not None:
            return (
                f"Fix the failed {_safe(tool) or 'tool'} call at {when} ({where}), then retry it."
            )
        target = _safe(failure.get("target"))
        of = f" of {target}" if target else ""
        state = "failed" if failure.get("outcome") == "failure" else "blocked"
        return f"Fix and retry the {state} {kind}{of} at {when} ({where})."
    return None


def _task_step(tasks: dict[str, Any] | None) -> str | None:
    """Go on with the agent's own open task: the first in progress, else the first pending,
    named by its position or id (its text is shown as data under Task list, never here)."""
    from .tool_activity import first_open_task  # here: reports use this module, not the task list

    found = first_open_task(tasks)
    if tasks is None or found is None:
        return None
    number, item = found
    status = _safe(item.get("status")) or "open"
    left = f"{tasks['open']} of {len(tasks['items'])} still open"
    ident = _safe(item.get("id"))
    if tasks.get("tool") == "TodoWrite" or not ident:
        return (
            f"Go on with item {number} of the agent's todo list ({status}; {left}; "
            "shown under Task list)."
        )
    return (
        f"Go on with task #{ident} of the agent's task list ({status}; {left}; "
        "shown under Task list)."
    )
