"""One record per tool call, however many ways it reaches the log.

A call can arrive twice: Cursor and Copilot CLI run Claude Code's hooks beside their own, a
repository may wire a client both per project and per user, and `lore import` reads sessions
the hooks already logged. The key is (client, session, tool-use id). Hooks claim it in a
ledger under `.lore/cache/deliveries/` (one file per client session, one id per line, read and
appended under an exclusive lock, so two deliveries at the same instant cannot both win);
`lore import` also checks the log itself, since the cache is not committed.

Invariants:
1. A key is claimed at most once: the second claim, concurrent or later, answers False.
2. A call without an id, or a session without one, is never refused (nothing to key on).
3. The ledger is never written through a symbolic link; one it cannot use claims nothing
   and refuses nothing (a lost dedupe, never a lost record).
4. Ledgers untouched for two days are removed when a new session starts one: the folder
   holds the sessions of the last days, not of the repository's life.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import os
import time

TYPE_CHECKING = False  # typing costs milliseconds on the hook path; mypy still sees it
if TYPE_CHECKING:
    from pathlib import Path

FOLDER = "deliveries"
MAX_ID = 200  # characters of a tool-use id kept as the key (ids are far shorter)
KEEP_S = 2 * 86400  # a ledger untouched this long is of a session that is over


def ledger(cache: Path, client: str, session: str) -> str:
    """The ledger's path for one client session (its name a hash: ids are not file names)."""
    from hashlib import blake2b

    name = blake2b(f"{client}\0{session}".encode(), digest_size=12).hexdigest()
    return os.path.join(str(cache), FOLDER, name)


def claim(
    cache: Path, client: str, session: str | None, call: str | None, within: float | None = None
) -> bool:
    """True when this delivery of the call is the first (log it); False for a repeat.
    `within` seconds: a repeat only that close to the first (a prompt has no id of its own,
    and a user may well type the same one again later)."""
    if not session or not call:
        return True
    key = "_".join(call.split())[:MAX_ID]
    if not key:
        return True
    from ..errors import LoreError
    from ..store import refuse_symlinks

    path = ledger(cache, client, session)
    try:
        refuse_symlinks(path)  # a linked cache or folder must not take our writes elsewhere
        folder = os.path.dirname(path)
        os.makedirs(folder, exist_ok=True)
        if not os.path.exists(path):  # a new session: ledgers of sessions long over go
            _prune(folder, time.time() - KEEP_S)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o644)
    except (OSError, LoreError):
        return True
    try:
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_EX)
        seen = b""
        while chunk := os.read(fd, 1 << 16):
            seen += chunk
        now = time.time()
        if _seen(seen, key.encode(), now, within):
            return False
        os.write(fd, (f"{key}\t{now:.3f}" if within is not None else key).encode() + b"\n")
        return True
    except OSError:
        return True
    finally:
        os.close(fd)


def _seen(lines: bytes, key: bytes, now: float, within: float | None) -> bool:
    """Whether the ledger holds `key` (within `within` seconds of now, for a timed one): a
    byte search, since a long session's ledger holds thousands of ids."""
    text = b"\n" + lines
    if within is None:
        return b"\n" + key + b"\n" in text
    start, head = 0, b"\n" + key + b"\t"
    while (found := text.find(head, start)) >= 0:
        start = found + len(head)
        stamp = text[start : text.find(b"\n", start) if b"\n" in text[start:] else None]
        try:
            if abs(now - float(stamp)) <= within:
                return True
        except ValueError:
            continue
    return False


def _prune(folder: str, before: float) -> None:
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                try:
                    if entry.is_file(follow_symlinks=False) and entry.stat().st_mtime < before:
                        os.unlink(entry.path)
                except OSError:
                    continue  # another hook removed it first, or it is not ours to remove
    except OSError:
        return
