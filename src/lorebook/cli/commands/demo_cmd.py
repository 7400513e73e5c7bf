"""`lore demo`."""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ... import run_demo
from ...cmdline.spec import JSON, Arg, Command
from ...render.demo import demo_text
from ..output import to_json

DEMO = Command(
    "demo",
    "commands.demo_cmd:demo",
    args=(Arg("directory", nargs="?"),),
    options=(JSON,),
    help="Build a realistic sample store in DIRECTORY (new or empty; default: a temp dir) "
    """and show it.

The sample is a git repository where a supervisor agent worked on two epics over four days;
its last session disconnected after a failed validation while a fix subagent was running.
Shown: the sessions, the resume brief an agent would read first, what the finished
session taught its domain's expertise file, a search and a deploy preflight, the drafts
awaiting review, a stale learning and a week's report summary.

Example:
  lore demo /tmp/lore-demo && cd /tmp/lore-demo && lore actions --since 7d
""",
    book=False,
)


def demo(values: dict[str, Any], env: Mapping[str, str], root: str | None = None) -> str:
    directory = values["directory"]
    target = Path(directory) if directory else Path(tempfile.mkdtemp(prefix="lore-demo-"))
    summary = run_demo(target.resolve())
    return to_json(summary) if values["as_json"] else demo_text(summary)
