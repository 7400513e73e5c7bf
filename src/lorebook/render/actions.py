"""Pure text formatting for people: action and session tables, the resume brief."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..log.progress import describe
from .framing import frame_data
from .table import table

LAST_ASKED_CHARS = 300  # the brief names the request; the whole prompt is in the log


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


def sessions_table(sessions: Sequence[dict[str, Any]]) -> str:
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


def resume_brief(state: dict[str, Any]) -> str:
    """The brief an agent can paste into its prompt: `resume_body` framed as quoted data."""
    return frame_data(resume_body(state))


def resume_body(state: dict[str, Any]) -> str:
    """The brief's text: labelled sections (no Markdown headings: inside the frame, a line
    that reads as structure is escaped), for the frame or a person's view."""
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
        asked = " ".join(str(asked).split())
        lines.append(
            f"- Last asked: {asked[:LAST_ASKED_CHARS]}"
            + ("…" if len(asked) > LAST_ASKED_CHARS else "")
        )
    history = state.get("history")
    if history:
        mb = history["skipped_bytes"] / (1 << 20)
        lines.append(f"- History: {mb:,.0f} MB of older records not read; {history['note']}.")
    if state.get("epic"):
        lines.append(f"- Epic: {state['epic']}")
    lines.append(f"- Work in progress: {state['work_in_progress']}")
    if state.get("open_actions"):
        lines += ["", "Open (never closed):"]
        lines += [
            f"- {_short_ts(a['ts'])} {describe(a)} (id {a['id']})" for a in state["open_actions"]
        ]
    if state.get("failed_validations"):
        lines += ["", "Failed validations:"]
        for action in state["failed_validations"]:
            error = f": {action['error']}" if action.get("error") else ""
            lines.append(f"- {_short_ts(action['ts'])} {describe(action)}{error}")
    lines += ["", "Suggested next steps:"]
    lines += [f"{i}. {step}" for i, step in enumerate(state["suggested_next_steps"], 1)]
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
    recent = state.get("recent_actions") or []
    if recent:
        lines += ["", f"Last {len(recent)} actions (newest first):"]
        for action in recent:
            error = f" — {action['error']}" if action.get("error") else ""
            lines.append(f"- {_short_ts(action['ts'])} {describe(action)}{error}")
    return "\n".join(lines)


def session_ended(record: dict[str, Any]) -> str:
    """`lore session end`: which session ended and why."""
    return f"ended {record['session']} ({record['reason']})"
