"""Pure text formatting for people: action and session tables, the resume brief.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..log.open_work import describe
from ..log.tool_activity import DONE
from ..redact.sanitize import clip
from .framing import frame_data
from .table import table

LAST_ASKED_CHARS = 300  # the brief names the request; the whole prompt is in the log
ERROR_LINE_CHARS = 160  # an error inside an action line (the last failure shows more)
TARGET_CHARS = 120  # a command or other tool argument as a section names it
TASK_CHARS = 120  # one item of the agent's task list
TASKS_SHOWN = 8  # open items listed; the rest are counted
FILES_SHOWN = 12  # files named per list; the rest are counted
COMMANDS_SHOWN = 8  # distinct commands listed


def _short_ts(ts: str | None) -> str:
    return f"{ts[:10]} {ts[11:19]}" if ts else "-"


def actions_table(actions: Sequence[dict[str, Any]]) -> str:
    if not actions:
        return "No matching actions."
    return table(
        ("TIME (UTC)", "SESSION", "AGENT", "TYPE", "OUTCOME", "EPIC", "ID"),
        (
            (
                _short_ts(a["ts"]),
                a["session"][:16],
                a.get("agent") or "-",
                a["type"],
                a["outcome"],
                a.get("epic") or "-",
                a["id"],
            )
            for a in actions
        ),
    )


def sessions_table(sessions: Sequence[Mapping[str, Any]]) -> str:
    if not sessions:
        return "No sessions."
    return table(
        ("SESSION", "AGENT", "PROJECT", "STATUS", "ACTIONS", "STARTED", "LAST ACTIVITY"),
        (
            (
                s["id"],
                s.get("agent") or "-",
                s.get("project") or "-",
                s["status"] + (f" ({s['end_reason']})" if s.get("end_reason") else ""),
                str(s["action_count"]),
                _short_ts(s.get("started")),
                _short_ts(s.get("last_activity")),
            )
            for s in sessions
        ),
    )


def resume_brief(state: Mapping[str, Any]) -> str:
    """The brief an agent can paste into its prompt: `resume_body` framed as quoted data."""
    return frame_data(resume_body(state))


def resume_body(state: Mapping[str, Any], *, recent: bool = True) -> str:
    """The brief's text: labelled sections (no Markdown headings: inside the frame, a line
    that reads as structure is escaped), most useful first, for the frame or a person's view.
    `recent=False` leaves out the last actions (`recent_actions_text`: a capped brief puts
    them after the learnings, as the first thing to cut)."""
    session = state["session"]
    git = state.get("git")
    lines = [
        f"Resume: session {session['id']}",
        "",
        f"- Agent {session.get('agent') or '-'}, project {session.get('project') or '-'}; "
        f"status **{session['status']}**"
        + (f" ({session['end_reason']})" if session.get("end_reason") else "")
        + f"; {session['action_count']} actions, started {_short_ts(session.get('started'))}, "
        f"last activity {_short_ts(session.get('last_activity'))} UTC.",
    ]
    asked = state.get("last_prompt")
    if asked:
        lines.append(f"- Last asked: {_one_line(asked, LAST_ASKED_CHARS)}")
    history = state.get("history")
    if history:
        mb = history["skipped_bytes"] / (1 << 20)
        lines.append(f"- History: {mb:,.0f} MB of older records not read; {history['note']}.")
    if state.get("epic"):
        lines.append(f"- Epic: {state['epic']}")
    if state.get("issue"):
        branch = f" (branch {state['branch']})" if state.get("branch") else ""
        lines.append(f"- Issue: {state['issue']}{branch}")
    lines.append(f"- Work in progress: {state['work_in_progress']}")
    lines += _failures(state.get("last_failure"), state.get("last_failed_command"))
    if state.get("open_actions"):
        lines += ["", "Open (never closed):"]
        lines += [
            f"- {_short_ts(a['ts'])} {describe(a)} (id {a['id']})" for a in state["open_actions"]
        ]
    if state.get("failed_validations"):
        lines += ["", "Failed validations:"]
        for action in state["failed_validations"]:
            error = (
                f": {_one_line(action['error'], ERROR_LINE_CHARS)}" if action.get("error") else ""
            )
            lines.append(f"- {_short_ts(action['ts'])} {describe(action)}{error}")
    lines += ["", "Suggested next steps:"]
    lines += [f"{i}. {step}" for i, step in enumerate(state["suggested_next_steps"], 1)]
    lines += _tasks(state.get("tasks"))
    lines += _work(state.get("files"), state.get("commands"))
    if state.get("learnings"):
        lines += ["", "Relevant learnings:"]
        lines += [f"- {item['title']} (`lore show {item['id']}`)" for item in state["learnings"]]
    if git:
        lines += ["", "Repository:"]
        last = git.get("last_commit") or {}
        lines.append(
            f"- Branch {git.get('branch') or '(detached)'} at "
            f"{(git.get('head') or 'no commits')[:12]}"
            + (f": {last.get('subject')}" if last else "")
        )
        unpushed = git.get("unpushed")
        lines.append(
            "- Unpushed commits: " + ("no upstream" if unpushed is None else str(unpushed))
        )
        if git.get("dirty_count"):
            shown = ", ".join(git["dirty"][:5])
            more = git["dirty_count"] - min(5, git["dirty_count"])
            lines.append(f"- Uncommitted: {shown}" + (f" and {more} more" if more else ""))
    text = "\n".join(lines)
    return (
        text + "\n\n" + recent_actions_text(state)
        if recent and state.get("recent_actions")
        else text
    )


def recent_actions_text(state: Mapping[str, Any]) -> str:
    """The brief's last section: the newest actions, newest first, each error clipped."""
    recent = state.get("recent_actions") or []
    if not recent:
        return ""
    lines = [f"Last {len(recent)} actions (newest first):"]
    for action in recent:
        error = f" — {_one_line(action['error'], ERROR_LINE_CHARS)}" if action.get("error") else ""
        lines.append(f"- {_short_ts(action['ts'])} {describe(action)}{error}")
    return "\n".join(lines)


def _one_line(text: Any, limit: int) -> str:
    """`text` (redacted already) on one line, cut to `limit` characters (markers kept whole)."""
    return clip(" ".join(str(text).split()), limit)


def _failures(last: dict[str, Any] | None, command: dict[str, Any] | None) -> list[str]:
    """The last failure, and the last failed command when it is another action: what failed,
    when, its error (an excerpt, redacted then cut) and whether a later run succeeded."""
    lines: list[str] = []
    for label, failure in (("Last failure", last), ("Last failed command", command)):
        if failure is None or (label != "Last failure" and last and failure["id"] == last["id"]):
            continue
        what = failure.get("tool") or failure.get("type")
        target = f": {_one_line(failure['target'], TARGET_CHARS)}" if failure.get("target") else ""
        retried = failure.get("retried")
        later = f" (run again later: {retried})" if retried else ""
        lines += [
            "",
            f"{label}:",
            f"- {_short_ts(failure.get('ts'))} {what}{target} [{failure.get('outcome')}]{later}",
        ]
        if failure.get("error"):
            lines.append(f"- Error: {failure['error']}")
    return lines


def _tasks(tasks: dict[str, Any] | None) -> list[str]:
    """The agent's own task list: its open items in its order, then a count of the rest."""
    if not tasks:
        return []
    items = tasks["items"]
    lines = ["", f"Task list ({tasks['tool']}; {tasks['open']} open, {tasks['completed']} done):"]
    shown = 0
    for number, item in enumerate(items, 1):
        if item.get("status") in DONE:
            continue
        if shown == TASKS_SHOWN:
            lines.append(f"- and {tasks['open'] - shown} more open")
            break
        ident = f"#{item['id']} " if item.get("id") else f"{number}. "
        subject = _one_line(item.get("subject") or "(no subject recorded)", TASK_CHARS)
        lines.append(f"- {ident}[{item.get('status') or 'unknown'}] {subject}")
        shown += 1
    return lines


def _work(files: dict[str, Any] | None, commands: list[dict[str, Any]] | None) -> list[str]:
    """What was done: files edited, files only read (newest first), commands with outcomes."""
    lines: list[str] = []
    for key, label in (("edited", "Files edited"), ("read", "Files only read")):
        paths = (files or {}).get(key) or []
        if not paths:
            continue
        count = (files or {}).get(f"{key}_count") or len(paths)
        shown = paths[:FILES_SHOWN]
        more = count - len(shown)
        lines += ["", f"{label} ({count}, newest first):"]
        lines.append("- " + ", ".join(shown) + (f" and {more} more" if more > 0 else ""))
    if commands:
        lines += [
            "",
            f"Commands run ({len(commands)}{'+' if len(commands) >= 30 else ''}, "
            "newest first, outcome of the last run):",
        ]
        for entry in commands[:COMMANDS_SHOWN]:
            runs = f", {entry['runs']} runs" if entry.get("runs", 1) > 1 else ""
            failed = f", {entry['failures']} failed" if entry.get("failures") else ""
            command = _one_line(entry["command"], TARGET_CHARS)
            lines.append(f"- {command} [{entry.get('outcome')}{runs}{failed}]")
    return lines


def session_ended(record: dict[str, Any]) -> str:
    """`lore session end`: which session ended and why."""
    return f"ended {record['session']} ({record['reason']})"
