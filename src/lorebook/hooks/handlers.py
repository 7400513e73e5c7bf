"""One function per Claude Code hook event, each a thin call into `Lorebook`.

Claude's `session_id` is the lorebook session id, so every record of one Claude session lands
in one lorebook session. Context hooks (session-start, user-prompt-submit) search by keywords
from files and never load a model; capture hooks only append one redacted line.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from .failopen import CONTEXT_CHARS, BudgetSpent, Hook, note_error

if TYPE_CHECKING:
    from .. import Lorebook
    from ..contracts import ResumeState

SESSION_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
CHARS_PER_TOKEN = 4  # the usual estimate for English text and code
# the last session's records only hint at what comes next (a command shares a word or two
# with a learning): a lower similarity floor than a prompt's, the count still capped
TOPIC_THRESHOLD = 0.05
PROMPT_CHARS = 500  # a prompt as recorded: enough to say what was asked
# the same prompt this close is one prompt delivered twice (the second config's hook starts
# once the first has answered: within its budget); a person asking again takes longer
PROMPT_TWIN_S = 5
TWIN_S = 3  # a stop, compaction or end this close to the same one is a second delivery
END_REASONS = {"prompt_input_exit": "user_exit", "logout": "user_exit"}


class Context:
    """The opened store with the hook's settings and Claude's identifiers."""

    def __init__(self, hook: Hook) -> None:
        from .. import Lorebook

        self.hook = hook
        self.book: Lorebook = hook.book or Lorebook.open(hook.root)
        if hook.book is None:  # an import installs them once on its own store
            self.book.install_subscribers()  # acting for the agent, like every `lore` command
        self.settings = self.book.config.hooks
        hook.budget = self.settings.budget_seconds
        raw = hook.payload.get("session_id")
        self.session = raw if isinstance(raw, str) and SESSION_RE.match(raw) else None
        self.agent = self.book.default_agent(self.settings.agent or hook.source)
        self.project = self.book.default_project()

    def text(self, key: str) -> str:
        value = self.hook.payload.get(key)
        return value if isinstance(value, str) else ""

    def meta(self, **extra: Any) -> dict[str, Any]:
        """What every record written by a hook carries: its own cost to the agent (the time
        the agent waited for it), and for a detached hook, its time in the background."""
        hook = self.hook
        waited = hook.elapsed_ms() if hook.waited_ms is None else hook.waited_ms
        meta = {"source": f"{hook.source}:{hook.event}", "overhead_ms": waited, **extra}
        if hook.at is not None:  # replayed from the client's session file: cost it nothing
            del meta["overhead_ms"]
            meta["imported"] = True
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
            now=self.hook.at,
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
    source = ctx.text("source") or "startup"
    if not _once(ctx, f"start:{source}"):
        return None  # the same start delivered twice: one brief, one record
    past = hook.at is not None  # imported: no brief to give, no client to bind
    pieces = _brief(ctx) if ctx.settings.session_start and not past else []
    if ctx.session:
        from .. import head_branch, issue_in_branch

        branch = ctx.text("git_branch") if past else head_branch(str(ctx.book.root))
        meta = ctx.meta(
            **{_named(hook, "source"): source},
            model=ctx.text("model"),
            branch=branch,
            issue=issue_in_branch(branch),  # what the session works on, as its branch says
        )
        ctx.book.start_session(
            session_id=ctx.session,
            agent=ctx.agent,
            project=ctx.project,
            session_type="hook",
            meta={k: v for k, v in meta.items() if v},
            now=hook.at,
        )
        if not past:
            _one_session(ctx, ctx.session)
    return ctx.cap("\n\n".join(pieces)) if pieces else None


def _one_session(ctx: Context, session: str) -> None:
    """Everything this Claude session logs lands in its lorebook session: its MCP server's
    calls (a note it finds, see `lorebook.log.client_notes`) and the agent's own `lore` commands
    (`LORE_SESSION`, through the file Claude Code reads into its shell: CLAUDE_ENV_FILE)."""
    import os

    try:
        ctx.book.bind_client(session, capture=ctx.settings.capture)
    except OSError as exc:  # a read-only cache: the server keeps a session of its own
        note_error(ctx.hook.root, ctx.hook.event, f"client note not written: {exc}")
    env_file = os.environ.get("CLAUDE_ENV_FILE")
    if env_file and not os.path.islink(env_file):
        try:
            with open(env_file, "a", encoding="utf-8") as out:
                out.write(f"export LORE_SESSION={session}\n")  # SESSION_RE: shell-safe
        except OSError as exc:
            note_error(ctx.hook.root, ctx.hook.event, f"CLAUDE_ENV_FILE not written: {exc}")


def _brief(ctx: Context) -> list[str]:
    """The brief's pieces, as many as the budget allowed."""
    from .. import LoreError
    from ..render.actions import recent_actions_text, resume_body

    hook = ctx.hook
    pieces: list[str] = []
    recent = ""  # the last actions go after the learnings: the first to go when it is cut
    try:
        with hook.guarded():
            state = _resume(ctx)
            pieces.append(resume_body(state, recent=False))
            recent = recent_actions_text(state)
            found = _learnings(ctx, _topics(state), threshold=TOPIC_THRESHOLD)[0]
            if found:
                pieces.append(found)
    except BudgetSpent:  # inject what was gathered; the session still starts
        note_error(hook.root, hook.event, f"time budget of {hook.budget:g}s spent; brief cut")
    except Exception as exc:  # an unreadable shard, say: the session starts without a brief
        if not isinstance(exc, LoreError) or "no session to resume" not in str(exc):
            note_error(hook.root, hook.event, f"{type(exc).__name__}: {exc}")
    return [*pieces, recent] if recent else pieces


def _resume(ctx: Context) -> ResumeState:
    """After a compaction or a resume, this session's own state (what the agent just lost);
    at a fresh start, the project's last session."""
    if ctx.session and ctx.text("source") in ("resume", "compact"):
        from .. import LoreError

        try:
            return ctx.book.resume(session=ctx.session)
        except LoreError:
            pass  # not logged here yet: the project's last session then
    # the previous meaningful session of this repository (by any name it went by), never this one
    own = (ctx.session,) if ctx.session else ()
    return ctx.book.resume(project=ctx.book.project_names(), exclude=own)


def _topics(state: ResumeState) -> list[str]:
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
    if ctx.settings.record_prompts and _first_prompt(ctx, prompt):
        try:
            from .. import issue_in_text

            ctx.log(
                "prompt", context={"prompt": shown}, issue=issue_in_text(shown), meta=ctx.meta()
            )
        except Exception as exc:  # a read-only store, say: the lessons still come
            note_error(hook.root, hook.event, f"{type(exc).__name__}: {exc}")
    if not ctx.settings.user_prompt or hook.at is not None:
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


def _first_prompt(ctx: Context, prompt: str) -> bool:
    """False when the same prompt of this session came in seconds ago from another config of
    the same client (Cursor runs Claude Code's hooks beside its own): it is recorded once."""
    from hashlib import blake2b

    turn = ctx.text("turn_id") or ctx.text("generation_id")  # where the agent gives one
    digest = blake2b(f"{turn}\0{prompt}".encode("utf-8", "replace"), digest_size=12).hexdigest()
    return _once(ctx, f"prompt:{digest}", PROMPT_TWIN_S)


def _once(ctx: Context, what: str | None, within: float = TWIN_S) -> bool:
    """False for an event without an id of its own that this client already reported for
    this session `within` seconds ago (two configs of one client: see log.deliveries). An
    import replays a session in moments: its events are its own, never twins."""
    if ctx.hook.at is not None or what is None:  # nothing to tell a twin from a new one by
        return True
    return ctx.book.first_delivery(ctx.hook.source, ctx.session, what, within=within)


def _named(hook: Hook, key: str) -> str:
    """`claude_source`, `claude_reason` for Claude Code (as ever); `client_…` for the others."""
    return f"claude_{key}" if hook.client == "claude" else f"client_{key}"


# -- capture hooks ---------------------------------------------------------------------------
def _tool_call(hook: Hook, *, failed: bool) -> None:
    ctx = Context(hook)
    if not ctx.settings.capture:
        return
    from .. import tool_summary

    payload = hook.payload
    call = payload.get("tool_use_id")
    if isinstance(call, str) and not ctx.book.first_delivery(hook.source, ctx.session, call):
        return  # the same call reported again (two configs, or another client's hooks)
    # the tool and its telling argument (command, file, pattern...) as first-class fields,
    # each redacted then cut; the clipped input and response beside them
    redact = ctx.book.sanitizer.redact_text
    context: dict[str, Any] = tool_summary(
        ctx.text("tool_name"), payload.get("tool_input"), hook.root, lambda t: redact(t)[0]
    )
    for key, name in (("tool_input", "input"), ("tool_use_id", "tool_use_id"),
                      ("duration_ms", "duration_ms"), ("is_interrupt", "interrupted"),
                      ("client_tool", "client_tool")):  # fmt: skip
        if payload.get(key) is not None:
            context[name] = payload[key]
    if ctx.text("agent_id"):  # made inside a subagent: the id its spawn records too
        context["agent_id"] = ctx.text("agent_id")
    if not failed and "tool_response" in payload:
        context["response"] = payload["tool_response"]  # redacted, then cut, by the log
    duration = payload.get("duration_ms")
    seconds = duration  # not a number, or out of range: clipped by the log
    if isinstance(duration, int | float) and not isinstance(duration, bool):
        seconds = duration / 1000
    error = payload.get("error") if failed else None
    if error is not None:
        error = _error_text(ctx, str(error))
    ctx.log(
        "tool_call",
        outcome="failure" if failed else "success",
        context=context,
        error=error if error is not None else ("tool failed" if failed else None),
        duration_s=seconds,
        meta=ctx.meta(),
    )


def _error_text(ctx: Context, text: str) -> str:
    """A failed call's error as stored: a long one redacted whole, as the log redacts a field
    (its own scan stops near its cut), then cut where it says what failed (`error_digest`);
    a short one as it is (the log redacts it)."""
    from .. import Sanitizer, error_digest

    if len(text) <= ctx.book.config.log.max_value_chars:
        return text
    rules = ctx.book.config.redaction
    whole = Sanitizer(
        extra_secret_keys=rules.extra_secret_keys,
        extra_patterns=rules.extra_patterns,
        max_value_chars=len(text),
    )
    return error_digest(whole.sanitize(text, "error")[0], ctx.book.config.log.max_value_chars)


def post_tool_use(hook: Hook) -> None:
    _tool_call(hook, failed=False)


def post_tool_use_failure(hook: Hook) -> None:
    _tool_call(hook, failed=True)


def subagent_start(hook: Hook) -> None:
    ctx = Context(hook)
    if not _once(ctx, f"spawn:{ctx.text('agent_id')}" if ctx.text("agent_id") else None):
        return
    ctx.log("spawn", outcome="in_progress", context=_agent(ctx), meta=ctx.meta())


def subagent_stop(hook: Hook) -> None:
    """The spawn's outcome, linked to its in_progress action when this session logged one."""
    ctx = Context(hook)
    agent = _agent(ctx)
    if not _once(ctx, f"spawned:{ctx.text('agent_id')}" if ctx.text("agent_id") else None):
        return
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
    if not _once(ctx, "compact"):
        return
    context = {"trigger": ctx.text("trigger") or "auto"}
    if ctx.text("custom_instructions"):
        context["instructions"] = ctx.text("custom_instructions")
    ctx.log("checkpoint", context=context, meta=ctx.meta())


def _end(hook: Hook, reason: str) -> None:
    ctx = Context(hook)
    if not ctx.session or not _once(ctx, _end_key(ctx, reason)):
        return
    word = END_REASONS.get(reason, reason)
    if not re.match(r"^[a-z][a-z0-9_]{0,63}$", word):
        word = "other"
    ctx.book.end_session(
        ctx.session,
        reason=word,
        agent=ctx.agent,
        project=ctx.project,
        meta=ctx.meta(**{_named(hook, "reason"): reason[:64]}),
        now=hook.at,
    )
    # the session is over: its MCP server no longer logs into it (an import binds none)
    if reason != "stop" and hook.at is None:
        ctx.book.release_client(ctx.session)


def _end_key(ctx: Context, reason: str) -> str | None:
    """A turn's stop is one of many in a session: a twin only with the same turn (its id, or
    the answer it ended with); without one, never taken for a twin (a lost stop is worse than
    a second one). A session's end is one per session."""
    if reason != "stop":
        return f"end:{reason}"
    keys = ("turn_id", "generation_id", "last_assistant_message", "prompt_response")
    turn = next((ctx.text(key) for key in keys if ctx.text(key)), "")
    if not turn:
        return None
    from hashlib import blake2b

    return "end:stop:" + blake2b(turn.encode("utf-8", "replace"), digest_size=12).hexdigest()


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
