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
from collections.abc import Callable, Mapping
from pathlib import Path

Progress = Callable[[str, int, int], None]  # lorebook.progress's (task, done, total)

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
# the build's progress, one `task<TAB>done<TAB>total` line a step on stdout (`run_child`)
BUILD_CATALOG = _OPEN.format(
    work='book.on_progress(lambda *step: print(*step, sep="\\t", flush=True))\n'
    "    book.sync_catalog()"
)
BUILD_INDEX = _OPEN.format(work="book.index.update()")


def run_child(
    script: str, root: Path, env: Mapping[str, str], progress: Progress | None = None
) -> str | None:
    """Run `script` on the store at `root` in a child process, to its end: None when it
    succeeded, else the last line it wrote on stderr (not redacted: the caller does that).
    The progress lines it writes on stdout go to `progress` as they come."""
    try:
        child = subprocess.Popen(
            [sys.executable, "-c", script, str(root)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, **env},  # the interpreter's paths, the store's settings
            cwd=root,
        )
    except OSError as exc:
        return str(exc.strerror or exc)
    with child:
        assert child.stdout is not None and child.stderr is not None
        for line in child.stdout:  # the stderr pipe holds a line or a traceback: no deadlock
            step = line.decode("utf-8", "replace").rstrip("\n").split("\t")
            if progress is not None and len(step) == 3 and step[1].isdigit() and step[2].isdigit():
                progress(step[0], int(step[1]), int(step[2]))
        errors = child.stderr.read()
    if child.returncode == 0:
        return None
    text = errors.decode("utf-8", "replace").strip()
    return text.splitlines()[-1] if text else f"exit status {child.returncode}"
