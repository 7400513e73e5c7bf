"""Running one hook so that it can never hurt the session it serves.

Claude Code blocks on exit code 2 and shows other failures to the user, so every internal
error ends here: exit 0, nothing on stdout, and one redacted line in `.lore/cache/hooks.log`.
Capture hooks answer nothing, so the agent waits only for them to read their payload: they
fork, and the child (in its own session, stdio on /dev/null) does the work. Until then only
`os`, `sys` and `time` are loaded.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import os
import sys
import time

TYPE_CHECKING = False  # typing costs milliseconds on the capture path; mypy still sees it
if TYPE_CHECKING:
    from collections.abc import Callable
    from datetime import datetime
    from pathlib import Path
    from typing import Any

    from .. import Lorebook

STORE_DIR = ".lore"
MAX_STDIN = 64 << 20  # a payload above this is not parsed at all
PAYLOAD_DEPTH = 200  # levels of a payload decoded past the decoder's own limit; the log keeps fewer
LOG_MAX_BYTES = 1 << 20  # hooks.log is cut back to its newest half past this
# capture hooks: they return at once and write from a detached child, because Claude Code
# cancels its async hooks when a headless session ends (the last tool call of a session would
# be lost) and a synchronous hook would block the agent for the whole write
DETACHED = frozenset(
    {"post-tool-use", "post-tool-use-failure", "subagent-start", "subagent-stop",
     "pre-compact", "stop", "session-end"}
)  # fmt: skip
EVENT_NAMES = {"session-start": "SessionStart", "user-prompt-submit": "UserPromptSubmit"}
CONTEXT_CHARS = 9_500  # the most additionalContext a hook answers with (handlers frame within it)


class BudgetSpent(Exception):
    """The hook's time budget ran out while it gathered context."""


class Hook:
    """One hook run: its payload, store root and time budget."""

    def __init__(self, event: str, payload: dict[str, Any], root: Path, started: float) -> None:
        self.event = event
        self.payload = payload
        self.root = root
        self.started = started
        self.budget = 1.0
        self.detached = False  # the work goes on in a child after the agent moved on
        self.waited_ms: int | None = None  # what the agent waited for, when detached
        self.client = "claude"  # hooks.clients: the agent that sent the payload
        self.source = "claude-code"  # its name in meta.source
        # set by `lore import` (hooks.importer): when the event happened (records carry it and
        # say they were imported; no brief, no lessons), and the store it opened once
        self.at: datetime | None = None
        self.book: Lorebook | None = None

    def elapsed_ms(self) -> int:
        return round((time.perf_counter() - self.started) * 1000)

    def left(self) -> float:
        return self.budget - (time.perf_counter() - self.started)

    def guarded(self) -> _Guard:
        """A block in which BudgetSpent is raised when the budget runs out (reads only: a
        write is never interrupted half-way)."""
        return _Guard(self.left())


class _Guard:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.previous: Any = None

    def __enter__(self) -> None:
        import signal

        if self.seconds <= 0:
            raise BudgetSpent
        self.previous = signal.signal(signal.SIGALRM, _spent)
        signal.setitimer(signal.ITIMER_REAL, self.seconds)

    def __exit__(self, *exc: object) -> None:
        import signal

        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, self.previous)


def _spent(signum: int, frame: object) -> None:
    raise BudgetSpent


def read_stdin(stream: Any) -> bytes:
    """All of stdin (Claude Code's write must never block on us), at most MAX_STDIN + 1."""
    source = stream.buffer if hasattr(stream, "buffer") else stream
    data = source.read(MAX_STDIN + 1)
    return data.encode() if isinstance(data, str) else data


def parse(data: bytes) -> dict[str, Any] | None:
    """The hook's JSON object; None for empty, oversized or non-object input."""
    if not data or len(data) > MAX_STDIN:
        return None
    import json

    try:
        value = json.loads(data)
    except RecursionError:  # nested past the decoder: the deep parts cut, the record kept
        from .. import clip_json_text

        try:
            value = json.loads(clip_json_text(data.decode("utf-8", "replace"), PAYLOAD_DEPTH))
        except (ValueError, RecursionError):
            return None
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def find_store(payload: dict[str, Any], env: Any) -> Path | None:
    """The store for this hook: LORE_ROOT, else the nearest `.lore/` above the session's cwd
    (the payload's, else CLAUDE_PROJECT_DIR, else ours). None: no store, so stay silent."""
    from pathlib import Path

    if env.get("LORE_ROOT"):
        root = Path(env["LORE_ROOT"]).expanduser()
        return root.resolve() if (root / STORE_DIR).is_dir() else None
    cwd = payload.get("cwd")
    start = cwd if isinstance(cwd, str) and os.path.isdir(cwd) else None
    here = Path(start or env.get("CLAUDE_PROJECT_DIR") or os.getcwd()).resolve()
    for candidate in (here, *here.parents):
        if (candidate / STORE_DIR).is_dir():
            return candidate
    return None


def note_error(root: Path | None, event: str, message: str) -> None:
    """Append one redacted line to `.lore/cache/hooks.log`; stderr (Claude Code's debug log
    only, on exit 0) when even that cannot be written."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    line = f"{stamp} {event}: {_redacted(message, root)}"
    line = " ".join(line.split())[:2000] + "\n"
    if root is not None:
        path = root / STORE_DIR / "cache" / "hooks.log"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if not path.is_symlink():
                _trim(path)
                with open(path, "a", encoding="utf-8") as out:
                    out.write(line)
                return
        except OSError:
            pass
    from contextlib import suppress

    with suppress(OSError, ValueError):
        sys.stderr.write(f"lore hook: {line}")


def _redacted(message: str, root: Path | None) -> str:
    """`message` redacted with the store's sanitizer (its `redaction` settings), else, when
    the store's config is the very thing that failed, with the default rules."""
    try:
        from .. import Sanitizer, open_appender

        try:
            sanitizer = open_appender(root, {}).sanitizer if root is not None else Sanitizer()
        except Exception:  # no store, or a config that cannot be read
            sanitizer = Sanitizer()
        return sanitizer.redact_text(message)[0]
    except Exception:  # the redactor itself failing: say nothing of the message
        return "(message withheld: it could not be redacted)"


def _trim(path: Path) -> None:
    try:
        size = path.stat().st_size
    except OSError:
        return
    if size > LOG_MAX_BYTES:
        with open(path, "rb") as old:
            old.seek(size - LOG_MAX_BYTES // 2)
            tail = old.read().split(b"\n", 1)[-1]
        path.write_bytes(tail)


def detach() -> bool:
    """Fork: True in the parent (which then exits), False in the child, which carries on in
    its own session with stdio on /dev/null (so Claude Code sees the hook's pipes close).
    False without a fork where there is none (the hook then runs in the foreground)."""
    if not hasattr(os, "fork"):
        return False
    sys.stdout.flush()
    sys.stderr.flush()
    if os.fork():
        return True
    try:
        os.setsid()
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
    except OSError:
        pass
    return False


def process_started() -> float:
    """When this process started, on the `perf_counter` clock (Linux: from /proc, so the
    budget and `overhead_ms` include the interpreter's start-up); else now."""
    now = time.perf_counter()
    try:
        with open("/proc/self/stat", "rb") as stat:
            ticks = int(stat.read().rsplit(b")", 1)[1].split()[19])
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return now
    return now - age if 0 <= age < 60 else now


def run(
    event: str,
    handle: Callable[[Hook], str | None],
    env: Any = None,
    stdin: Any = None,
    *,
    client: str = "claude",
    native: str | None = None,
) -> int:
    """Run `handle` for one hook event; always 0. It returns the additionalContext to inject
    (None: nothing); it is imported by the caller only once the payload says there is work.
    `client` sent the payload (`hooks.clients`), calling the event `native`; the handler sees
    the normalised event and payload."""
    started = process_started()
    environ = os.environ if env is None else env
    root: Path | None = None
    hook: Hook | None = None
    detached = False
    try:
        data = read_stdin(stdin or sys.stdin)
        if event in DETACHED and environ.get("LORE_HOOK_DETACH") != "0":
            if detach():
                return 0  # the parent: Claude Code waited this long, no longer
            detached = True
        waited = round((time.perf_counter() - started) * 1000)
        payload = parse(data)
        if payload is None:
            return _done(detached)
        source = "claude-code"
        if client != "claude" or _maybe_other(payload, environ):
            from .clients import CLIENTS, identify, normalise

            sender = identify(CLIENTS[client], payload, environ)
            event, payload = normalise(sender, event, payload)
            client, source = sender.name, sender.source
        root = find_store(payload, environ)
        if root is None:
            return _done(detached)
        hook = Hook(event, payload, root, started)
        hook.detached, hook.waited_ms = detached, waited if detached else None
        hook.client, hook.source = client, source
        text = handle(hook)
        if text:
            emit(event, text, client, native)
    except BudgetSpent:  # a handler keeps what it gathered itself (see handlers._brief)
        note_error(root, event, f"time budget of {hook.budget if hook else 1:g}s spent")
    except Exception as exc:  # fail open: the session goes on, the error is kept
        note_error(root, event, f"{type(exc).__name__}: {exc}")
    return _done(detached)


def _done(detached: bool) -> int:
    if detached:
        os._exit(0)  # the child: nothing of the parent's (atexit, buffers) to run again
    return 0


def _maybe_other(payload: dict[str, Any], env: Any) -> bool:
    """Another agent running Claude Code's hooks (Cursor, Copilot CLI): see clients.identify."""
    return (
        "cursor_version" in payload
        or "conversation_id" in payload
        or bool(env.get("COPILOT_HOOK_DIR") or env.get("COPILOT_PROJECT_DIR"))
    )


def emit(event: str, text: str, client: str = "claude", native: str | None = None) -> None:
    """Print the hook's JSON answer: added context, in the form `client` reads, for the
    events at which it reads one."""
    import json

    text = text[:CONTEXT_CHARS]
    if client == "claude":
        name = EVENT_NAMES.get(event)
        if name is None:
            return
        out = {"hookSpecificOutput": {"hookEventName": name, "additionalContext": text}}
    else:
        from .clients import CLIENTS

        sender = CLIENTS[client]
        if event not in sender.context:
            return
        out = sender.answer(native or EVENT_NAMES.get(event, event), text)
    sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
    sys.stdout.flush()
