"""One function per Claude Code hook event, each a thin call into `Lorebook`.

Claude's `session_id` is the lorebook session id, so every record of one Claude session lands
in one lorebook session. Context hooks (session-start, user-prompt-submit) search by keywords
from files and never load a model; capture hooks only append one redacted line.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from .failopen import CONTEXT_CHARS, BudgetSpent, Hook, note_error

if TYPE_CHECKING:
    from .. import Lorebook

SESSION_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
CHARS_PER_TOKEN = 4  # the usual estimate for English text and code
# the last session's records only hint at what comes next (a command shares a word or two
# with a learning): a lower similarity floor than a prompt's, the count still capped
TOPIC_THRESHOLD = 0.05
PROMPT_CHARS = 500  # a prompt as recorded: enough to say what was asked
END_REASONS = {"prompt_input_exit": "user_exit", "logout": "user_exit"}


class Context:
    """The opened store with the hook's settings and Claude's identifiers."""

    def __init__(self, hook: Hook) -> None:
        from .. import Lorebook

        self.hook = hook
        self.book: Lorebook = Lorebook.open(hook.root)
        self.book.install_subscribers()  # acting for the agent, like every `lore` command
        self.settings = self.book.config.hooks
        hook.budget = self.settings.budget_seconds
        raw = hook.payload.get("session_id")
        self.session = raw if isinstance(raw, str) and SESSION_RE.match(raw) else None
        self.agent = self.book.default_agent(self.settings.agent)
        self.project = self.book.default_project()

    def text(self, key: str) -> str:
        value = self.hook.payload.get(key)
        return value if isinstance(value, str) else ""

    def meta(self, **extra: Any) -> dict[str, Any]:
        """What every record written by a hook carries: its own cost to the agent (the time
        the agent waited for it), and for a detached hook, its time in the background."""
        hook = self.hook
        waited = hook.elapsed_ms() if hook.waited_ms is None else hook.waited_ms
        meta = {"source": f"claude-code:{hook.event}", "overhead_ms": waited, **extra}
        if hook.detached:
            meta["background_ms"] = hook.elapsed_ms()  # the whole write, after the agent moved on
        return meta

    def log(self, action_type: str, **fields: Any) -> dict[str, Any]:
        return self.book.log(  # the agent cannot correct a payload: clip, never drop
            action_type,
            session=self.session,
            agent=self.agent,
            project=self.project,
            clip=True,
            **fields,
        )

    def cap(self, text: str) -> str:
        """Redacted again (a learning may predate a rule), framed as quoted data (never read
        as instructions), its body cut at a line to the budget; the frame stays whole."""
        from ..render.framing import FRAME_CHARS, frame_data

        clean = self.book.sanitizer.redact_text(text)[0]
        limit = min(self.settings.context_tokens * CHARS_PER_TOKEN + FRAME_CHARS, CONTEXT_CHARS)
        return frame_data(clean, limit=limit, more="(more in `lore resume` and `lore search`)")


# -- context hooks ---------------------------------------------------------------------------
def session_start(hook: Hook) -> str | None:
    """The last session's brief and the learnings it touches; then this session's start
    (recorded even with `hooks.session_start: false`, which only stops the brief)."""
    ctx = Context(hook)
    pieces = _brief(ctx) if ctx.settings.session_start else []
    if ctx.session:
        meta = ctx.meta(claude_source=ctx.text("source") or "startup", model=ctx.text("model"))
        ctx.book.start_session(
            session_id=ctx.session,
            agent=ctx.agent,
            project=ctx.project,
            session_type="hook",
            meta={k: v for k, v in meta.items() if v},
        )
    return ctx.cap("\n\n".join(pieces)) if pieces else None


def _brief(ctx: Context) -> list[str]:
    """The brief's pieces, as many as the budget allowed."""
    from .. import LoreError
    from ..render.actions import resume_body

    hook = ctx.hook
    pieces: list[str] = []
    try:
        with hook.guarded():
            state = _resume(ctx)
            pieces.append(resume_body(state))
            found = _learnings(ctx, _topics(state), threshold=TOPIC_THRESHOLD)[0]
            if found:
                pieces.append(found)
    except BudgetSpent:  # inject what was gathered; the session still starts
        note_error(hook.root, hook.event, f"time budget of {hook.budget:g}s spent; brief cut")
    except Exception as exc:  # an unreadable shard, say: the session starts without a brief
        if not isinstance(exc, LoreError) or "no session to resume" not in str(exc):
            note_error(hook.root, hook.event, f"{type(exc).__name__}: {exc}")
    return pieces


def _resume(ctx: Context) -> dict[str, Any]:
    """After a compaction or a resume, this session's own state (what the agent just lost);
    at a fresh start, the project's last session."""
    if ctx.session and ctx.text("source") in ("resume", "compact"):
        from .. import LoreError

        try:
            return ctx.book.resume(session=ctx.session)
        except LoreError:
            pass  # not logged here yet: the project's last session then
    return ctx.book.resume(project=ctx.project)


def _topics(state: dict[str, Any]) -> list[str]:
    """What the last session was about, one search each (a query mixing them would match
    no learning well): its epic, and the text of its newest actions and their errors."""
    topics = [str(state.get("epic") or "")]
    for action in (state.get("recent_actions") or [])[:5]:
        context = action.get("context") or {}
        texts = [v for v in context.values() if isinstance(v, str) and len(v) > 3]
        topics.append(" ".join(texts)[:300])
        topics.append(str(action.get("error") or "")[:300])
    return list(dict.fromkeys(t for t in topics if t.strip()))[:6]


def _learnings(
    ctx: Context,
    queries: list[str],
    heading: str = "Team learnings",
    threshold: float | None = None,
    prompt: bool = False,
) -> tuple[str, list[str]]:
    """Published learnings for the queries by keywords (no model, no index refresh), best
    first, as facts; and their ids. A `prompt` is searched by its salient terms, from the saved
    keyword index alone (`SearchIndex.prompt_lessons`: nothing read from the log)."""
    if not _any_learning(ctx):
        return "", []  # nothing to find: skip importing the search code
    limit = ctx.settings.learnings
    best: dict[str, Any] = {}
    for query in queries:
        for result in _search(ctx, query, limit, threshold, prompt):
            if result.id not in best or result.score > best[result.id].score:
                best[result.id] = result
    results = sorted(best.values(), key=lambda r: (-r.score, r.id))[:limit]
    if not results:
        return "", []
    lines = [f"{heading} (lorebook):"]
    for result in results:
        item = result.to_dict()
        takeaway = " ".join(str(item.get("takeaway") or "").split())
        lines.append(f"- {result.id}: {' '.join(str(result.title).split())} — {takeaway}")
    return "\n".join(lines), [result.id for result in results]


def _search(ctx: Context, query: str, limit: int, threshold: float | None, prompt: bool) -> Any:
    if prompt:
        return ctx.book.index.prompt_lessons(
            query, limit=limit, threshold=threshold, status="published"
        )
    return ctx.book.index.search(
        query[:2000],
        mode="keyword",
        limit=limit,
        refresh=False,
        threshold=threshold,
        status="published",
    )


def _any_learning(ctx: Context) -> bool:
    import os

    try:
        with os.scandir(ctx.book.layout.learnings) as entries:
            return any(e.name.endswith(".md") for e in entries)
    except OSError:
        return False


def user_prompt_submit(hook: Hook) -> str | None:
    """The prompt recorded (the brief's "last asked"; `hooks.record_prompts`), then learnings
    about it when some pass the search threshold; else nothing."""
    ctx = Context(hook)
    prompt = ctx.text("prompt").strip()
    if not prompt or not (ctx.settings.record_prompts or ctx.settings.user_prompt):
        return None
    # redacted before it is cut (a cut secret is no longer recognised), then recorded
    shown = ctx.book.sanitizer.redact_text(prompt)[0][:PROMPT_CHARS]
    if ctx.settings.record_prompts:
        try:
            ctx.log("prompt", context={"prompt": shown}, meta=ctx.meta())
        except Exception as exc:  # a read-only store, say: the lessons still come
            note_error(hook.root, hook.event, f"{type(exc).__name__}: {exc}")
    if not ctx.settings.user_prompt:
        return None
    with hook.guarded():
        found, ids = _learnings(ctx, [prompt], "Lessons the team recorded about this", prompt=True)
    if not found:
        return None
    ctx.log(
        "search",
        context={
            "query": shown,
            "phase": "prompt",
            "results": ids,
        },
        meta=ctx.meta(),
    )
    return ctx.cap(found)


# -- capture hooks ---------------------------------------------------------------------------
def _tool_call(hook: Hook, *, failed: bool) -> None:
    ctx = Context(hook)
    if not ctx.settings.capture:
        return
    from .. import tool_summary

    payload = hook.payload
    # the tool and its telling argument (command, file, pattern...) as first-class fields,
    # each redacted then cut; the clipped input and response beside them
    redact = ctx.book.sanitizer.redact_text
    context: dict[str, Any] = tool_summary(
        ctx.text("tool_name"), payload.get("tool_input"), hook.root, lambda t: redact(t)[0]
    )
    for key, name in (("tool_input", "input"), ("tool_use_id", "tool_use_id"),
                      ("duration_ms", "duration_ms"), ("is_interrupt", "interrupted")):  # fmt: skip
        if payload.get(key) is not None:
            context[name] = payload[key]
    if not failed and "tool_response" in payload:
        context["response"] = payload["tool_response"]  # redacted, then cut, by the log
    duration = payload.get("duration_ms")
    seconds = duration  # not a number, or out of range: clipped by the log
    if isinstance(duration, int | float) and not isinstance(duration, bool):
        seconds = duration / 1000
    error = payload.get("error") if failed else None
    ctx.log(
        "tool_call",
        outcome="failure" if failed else "success",
        context=context,
        error=str(error) if error is not None else ("tool failed" if failed else None),
        duration_s=seconds,
        meta=ctx.meta(),
    )


def post_tool_use(hook: Hook) -> None:
    _tool_call(hook, failed=False)


def post_tool_use_failure(hook: Hook) -> None:
    _tool_call(hook, failed=True)


def subagent_start(hook: Hook) -> None:
    ctx = Context(hook)
    ctx.log("spawn", outcome="in_progress", context=_agent(ctx), meta=ctx.meta())


def subagent_stop(hook: Hook) -> None:
    """The spawn's outcome, linked to its in_progress action when this session logged one."""
    ctx = Context(hook)
    agent = _agent(ctx)
    parent = None
    if ctx.session and agent.get("agent_id"):
        for action in ctx.book.actions(type="spawn", session=ctx.session, limit=200):
            if action.get("outcome") == "in_progress" and (
                (action.get("context") or {}).get("agent_id") == agent["agent_id"]
            ):
                parent = action["id"]
                break
    failed = bool(hook.payload.get("error"))
    ctx.log(
        "spawn",
        outcome="failure" if failed else "success",
        context=agent,
        parent=parent,
        error=str(hook.payload["error"]) if failed else None,
        meta=ctx.meta(),
    )


def _agent(ctx: Context) -> dict[str, Any]:
    keys = ("agent_id", "agent_type", "agent_transcript_path")
    return {key: ctx.text(key) for key in keys if ctx.text(key)}


def pre_compact(hook: Hook) -> None:
    ctx = Context(hook)
    context = {"trigger": ctx.text("trigger") or "auto"}
    if ctx.text("custom_instructions"):
        context["instructions"] = ctx.text("custom_instructions")
    ctx.log("checkpoint", context=context, meta=ctx.meta())


def _end(hook: Hook, reason: str) -> None:
    ctx = Context(hook)
    if not ctx.session:
        return
    word = END_REASONS.get(reason, reason)
    if not re.match(r"^[a-z][a-z0-9_]{0,63}$", word):
        word = "other"
    ctx.book.end_session(
        ctx.session,
        reason=word,
        agent=ctx.agent,
        project=ctx.project,
        meta=ctx.meta(claude_reason=reason[:64]),
    )


def stop(hook: Hook) -> None:
    """The agent finished its turn: an end event with reason `stop`, which readers take as a
    turn ending, not the session (the next prompt goes on in it); SessionEnd ends it."""
    _end(hook, "stop")


def session_end(hook: Hook) -> None:
    reason = hook.payload.get("reason")
    _end(hook, reason if isinstance(reason, str) else "other")


HANDLERS = {
    "session-start": session_start,
    "user-prompt-submit": user_prompt_submit,
    "post-tool-use": post_tool_use,
    "post-tool-use-failure": post_tool_use_failure,
    "subagent-start": subagent_start,
    "subagent-stop": subagent_stop,
    "pre-compact": pre_compact,
    "stop": stop,
    "session-end": session_end,
}
