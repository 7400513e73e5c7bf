"""`lore import claude|codex`: served by the hooks' skin (it runs their handlers), declared as
data like every command."""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

from ... import LoreError, error_line, store_sanitizer
from ...cmdline.parser import Shown, parse
from ...cmdline.spec import Arg, Command, Opt

NAMES = {"claude": "Claude Code", "codex": "Codex"}

IMPORT = Command(
    "import",
    "",  # served by the hooks' skin (lorebook.launch hands `lore import` to it)
    args=(Arg("client", "Whose session files to read.", choices=tuple(NAMES)),),
    options=(
        Opt(
            "--since",
            "since",
            "Only sessions written since: 30d, 2w, YYYY-MM-DD (default: all).",
            metavar="WHEN",
        ),
        Opt("--dry-run", "dry_run", "Count what would be imported; write nothing.", kind="flag"),
        Opt("--json", "json", "Machine-readable output.", kind="flag"),
    ),
    summary="Bring in the sessions Claude Code or Codex already wrote (idempotent).",
    help="""Bring in the sessions an agent already wrote.

Reads Claude Code's sessions (~/.claude/projects/, or CLAUDE_CONFIG_DIR) or
Codex's (~/.codex/sessions/, or CODEX_HOME) whose working directory is in this repository,
and logs them as lorebook's hooks would have, at the times they happened, redacted. Run it
again at any time: what the log already holds is skipped (tool calls by their id; a session
already logged is only completed).

examples:
  lore import claude
  lore import codex --since 30d
  lore import claude --dry-run --json""",
    book=False,
)


def main(argv: list[str], env: Any = None) -> int:
    """`lore import ARGS`; the exit code (1 when a file or line could not be imported)."""
    environ = os.environ if env is None else env
    try:
        values = parse(IMPORT, argv, "lore import", IMPORT.help)
        return run(values, environ)
    except Shown as shown:  # --help
        return shown.code
    except LoreError as exc:
        print(error_line(exc, sanitizer=store_sanitizer(None, environ)), file=sys.stderr)
        return 1


def run(values: dict[str, Any], env: Any) -> int:
    from ... import find_root, parse_when
    from .run import import_sessions

    root = find_root(env=dict(env))
    if not (root / ".lore").is_dir():
        raise LoreError("no lorebook store in {}: run `lore init` first", str(root))
    since = parse_when(values["since"]) if values.get("since") else None
    line = _Line() if not values["json"] and _watched() else None
    try:
        result = import_sessions(
            root,
            values["client"],
            since=since,
            dry_run=values["dry_run"],
            progress=line,
            env=env,
        )
    finally:
        if line is not None:
            line.close()
    problems = result.problems  # redacted by the store's rules
    if values["json"]:
        print(json.dumps(result.to_dict(), indent=2))
    else:
        for problem in problems:
            print(f"lore import: {problem}", file=sys.stderr)
        print(summary(result.to_dict(), NAMES[result.client]))
    return 1 if problems else 0


def summary(found: dict[str, Any], name: str) -> str:
    """One line: what was (or would be) imported."""
    verb = "would import" if found["dry_run"] else "imported"
    return (
        f"{verb} {found['sessions_imported']} of {found['sessions_seen']} {name} sessions of "
        f"this repository: {found['actions_written']} records; "
        f"{found['duplicates_skipped']} already in the log"
    )


def _watched() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


class _Line:
    """The import's progress, redrawn on one stderr line; cleared when done."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.drawn = False

    def __call__(self, task: str, done: int, total: int) -> None:
        from ...render.progress import progress_line

        try:
            width = os.get_terminal_size(sys.stderr.fileno()).columns or 80
        except (OSError, ValueError):
            width = 80
        text = progress_line(task, done, total, time.monotonic() - self.started, width=width)
        sys.stderr.write("\r\x1b[2K" + text)
        sys.stderr.flush()
        self.drawn = True

    def close(self) -> None:
        if self.drawn:
            sys.stderr.write("\r\x1b[2K")
            sys.stderr.flush()
