"""Long work for a server that must answer at once, done by a child process.

On a fresh clone there is neither an action catalog nor a search index, and building them
reads every shard and embeds every learning: seconds to minutes of Python that, in a thread of
`lore mcp`, would hold the GIL while the server answers its calls. A child process (the same
interpreter and `lorebook`: `python -c SCRIPT ROOT`) does it instead; the caller waits for it
in a thread of its own, which only sleeps.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

# each script yields the CPU to the server's calls (a lower priority), opens the store at
# argv[1] and does its work; a `LoreError` is one line on stderr and exit 1 (the message is the
# library's), anything else a traceback, of which the last line is kept
_OPEN = """\
import os, sys
if hasattr(os, "nice"):
    os.nice(10)
from lorebook import Lorebook, LoreError
try:
    book = Lorebook.open(sys.argv[1])
    {work}
except LoreError as exc:
    sys.exit(str(exc))
"""
BUILD_CATALOG = _OPEN.format(work="book.sync_catalog()")
BUILD_INDEX = _OPEN.format(work="book.index.update()")


def run_child(script: str, root: Path, env: Mapping[str, str]) -> str | None:
    """Run `script` on the store at `root` in a child process, to its end: None when it
    succeeded, else the last line it wrote on stderr (not redacted: the caller does that)."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", script, str(root)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env={**os.environ, **env},  # the interpreter's paths, the store's settings
            cwd=root,
            check=False,
        )
    except OSError as exc:
        return str(exc.strerror or exc)
    if done.returncode == 0:
        return None
    text = done.stderr.decode("utf-8", "replace").strip()
    return text.splitlines()[-1] if text else f"exit status {done.returncode}"
