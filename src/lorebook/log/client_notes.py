"""Which client session an MCP server serves, so that its calls land in that session.

Claude Code starts its MCP servers without telling them its session id, and starts them before
its SessionStart hook runs. Both are children of the same client process, though. So the
session-start hook leaves a note under `.lore/cache/clients/`, named after the client process
(its pid and start time, so a reused pid never matches), saying which session that client is
in; the server looks for a note named after one of its own nearest ancestors. A new session of
the same client (`/clear`) replaces the note; the session's end removes it. Where processes
cannot be told apart (no `/proc`), only the parent's pid is used. Nothing found: the server
keeps a session of its own, as before.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import contextlib
import json
import os

from ..model import SESSION_ID_RE

TYPE_CHECKING = False  # typing costs milliseconds on the hook path; mypy still sees it
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

FOLDER = "clients"
# how hooks are run: through a shell, which is not the client
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "fish", "ksh", "ash", "busybox"})
DEPTH = 3  # ancestors looked at: a launcher (uvx, npx) may stand between client and server


def _stat(pid: int) -> tuple[int, str, str] | None:
    """(parent pid, start time, command name) from /proc; None where there is none."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read().decode("utf-8", "replace")
        head, rest = data.rsplit(")", 1)
        fields = rest.split()
        return int(fields[1]), fields[19], head.split("(", 1)[1]
    except (OSError, ValueError, IndexError):
        return None


def ancestors(depth: int = DEPTH) -> list[tuple[int, str, str]]:
    """(pid, start time, name) of this process's nearest ancestors, the parent first."""
    found: list[tuple[int, str, str]] = []
    pid = os.getpid()
    if _stat(pid) is None:  # no /proc: the parent alone, by pid
        parent = os.getppid()
        return [(parent, "", "")] if parent > 1 else []
    while len(found) < depth:
        mine = _stat(pid)
        if mine is None or mine[0] <= 1:
            break
        above = _stat(mine[0])
        if above is None:
            break
        found.append((mine[0], above[1], above[2]))
        pid = mine[0]
    return found


def _name(pid: int, start: str) -> str:
    return f"{pid}-{start}.json" if start else f"{pid}.json"


def _alive(name: str) -> bool:
    pid, _, start = name.removesuffix(".json").partition("-")
    if not pid.isdigit():
        return False
    if not start:
        return True  # cannot be told without /proc: kept
    found = _stat(int(pid))
    return found is not None and found[1] == start


def bind(cache: Path, session: str, *, capture: bool) -> None:
    """Note that the client running this hook (its nearest ancestor that is not a shell) is in
    `session`; notes of clients that are gone are removed. Never through a symlink."""
    client = next((a for a in ancestors() if a[2] not in SHELLS), None)
    if client is None:
        return
    folder = cache / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    if folder.is_symlink():
        return
    with os.scandir(folder) as entries:
        gone = [e.name for e in entries if e.name.endswith(".json") and not _alive(e.name)]
    for name in gone:
        _remove(folder / name)
    target = folder / _name(client[0], client[1])
    temp = folder / f".{target.name}.{os.getpid()}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(temp, flags, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump({"session": session, "capture": capture}, out)
    os.replace(temp, target)


def find(cache: Path) -> dict[str, Any] | None:
    """The note of the nearest ancestor that left one: {"session", "capture"}; else None."""
    folder = cache / FOLDER
    for pid, start, _ in ancestors():
        path = folder / _name(pid, start)
        try:
            if path.is_symlink():
                continue
            note = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        session = note.get("session") if isinstance(note, dict) else None
        if isinstance(session, str) and SESSION_ID_RE.match(session):
            return {"session": session, "capture": note.get("capture") is True}
    return None


def release(cache: Path, session: str) -> None:
    """Remove the notes that name `session` (it ended)."""
    folder = cache / FOLDER
    try:
        entries = [e.name for e in os.scandir(folder) if e.name.endswith(".json")]
    except OSError:
        return
    for name in entries:
        path = folder / name
        try:
            if not path.is_symlink() and json.loads(path.read_text()).get("session") == session:
                _remove(path)
        except (OSError, ValueError, AttributeError):
            continue


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()
