"""What the Cline and OpenCode installers share: reading the files they merge into (refusing a
broken one or a symlink before anything is written), the project launcher as edits, and
applying or showing a plan of `Edit`s.

A project-scope install runs lore through the committed launcher `.lore/bin/lore`
(`launcher.py`), written here as two edits (the script and this machine's record) so that a
dry run shows them and the caller applies every file the same way; an uninstall removes them
only when no other client's project file still runs the launcher.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from .. import LoreError
from . import launcher as L
from .wiring import Edit

# Project files of every client that may run the launcher (an uninstall keeps it while one does)
LAUNCHER_FILES = (
    ".claude/settings.json", ".mcp.json", ".codex/hooks.json", ".codex/config.toml",
    ".gemini/settings.json", ".cursor/hooks.json", "opencode.json",
)  # fmt: skip
LAUNCHER_FOLDERS = (".github/hooks", ".clinerules/hooks", ".cline/hooks", ".opencode/plugins")
LAUNCHER_TEXT = ".lore/bin/lore"


def refuse_links(base: Path, path: Path) -> None:
    """LoreError when `path` or a folder between `base` and it is a symlink."""
    try:
        rel = path.relative_to(base)
    except ValueError:
        rel = Path(path.name)
        base = path.parent
    current = base
    for part in rel.parts:
        current = current / part
        if current.is_symlink():
            raise LoreError("{}: is a symlink; lorebook does not write through symlinks", current)


def read_text(base: Path, path: Path) -> str | None:
    """The file's text (None: absent); LoreError for a symlink or a file that cannot be read."""
    refuse_links(base, path)
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise LoreError("{}: is a folder, not a file; nothing was changed", path) from None
    except NotADirectoryError:
        raise LoreError(
            "{}: a file is in the way of its folder; nothing was changed", path
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise LoreError("{}: cannot be read ({}); nothing was changed", path, exc) from None


def parse_json(path: Path, text: str | None, *, jsonc: bool = False) -> dict[str, Any] | None:
    """The file's JSON object (None: no file). Invalid JSON is refused with its line; with
    `jsonc`, a file the client reads as JSON with comments is refused too (rewriting it would
    lose them)."""
    if text is None:
        return None
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        if jsonc and _parses_as_jsonc(text):
            raise LoreError(
                "{}: holds comments or trailing commas (JSONC), which rewriting it would lose;"
                " remove them or add lorebook's entry by hand (docs/agents.md), then run again",
                path,
            ) from None
        raise LoreError(
            "{}:{}: invalid JSON ({}); fix it, then run again (nothing was changed)",
            path,
            exc.lineno,
            exc.msg,
        ) from None
    if not isinstance(value, dict):
        raise LoreError("{}: must hold a JSON object; fix it, then run again", path)
    return value


def _parses_as_jsonc(text: str) -> bool:
    """True when `text` is JSON once its // and /* */ comments and trailing commas go."""
    out: list[str] = []
    i, n, quoted = 0, len(text), False
    while i < n:
        c = text[i]
        if quoted:
            out.append(c)
            if c == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 1
            elif c == '"':
                quoted = False
        elif c == '"':
            quoted = True
            out.append(c)
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
            continue
        else:
            out.append(c)
        i += 1
    cleaned = re.sub(r",(\s*[}\]])", r"\1", "".join(out))
    try:
        json.loads(cleaned)
    except ValueError:
        return False
    return True


def render_json(value: dict[str, Any] | None) -> str | None:
    """A JSON file's text as lorebook writes it; None (remove the file) for nothing or `{}`."""
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n" if value else None


def json_edit(
    path: Path, text: str | None, old: dict[str, Any] | None, new: dict[str, Any] | None
) -> list[Edit]:
    """The edit that turns `old` (read from `text`) into `new`; none when the meaning is kept."""
    if (old or None) == (new or None):
        return []
    return [Edit(path, text, render_json(new))]


# -- the project launcher ---------------------------------------------------------------------
def launcher_install(root: Path, machine: list[str]) -> list[Edit]:
    """The launcher script and this machine's record, where they differ from what is there."""
    edits = []
    for rel, after, executable in (
        (L.LAUNCHER, L.SCRIPT, True),
        (L.RECORD, L.recorded_words(machine), False),
    ):
        before = read_text(root, root / rel)
        if before != after:
            edits.append(Edit(root / rel, before, after, executable))
    warned = root / L.WARNED
    if warned.is_file() and not warned.is_symlink():  # a later failure is said again
        edits.append(Edit(warned, read_text(root, warned), None))
    return edits


def launcher_uninstall(root: Path, planned: list[Edit]) -> list[Edit]:
    """Remove the launcher, the record and the warning marker, unless a project file of any
    client (as it will be after `planned`) still runs the launcher."""
    if launcher_needed(root, planned):
        return []
    edits = []
    for rel in (L.LAUNCHER, L.RECORD, L.WARNED):
        path = root / rel
        if path.is_symlink():
            continue  # never ours; left alone
        before = read_text(root, path)
        if before is None or (rel == L.LAUNCHER and not _launcher_is_ours(before)):
            continue  # absent, or someone else's file
        edits.append(Edit(path, before, None))
    return edits


def _launcher_is_ours(text: str) -> bool:
    lines = text.splitlines()
    return len(lines) > 1 and lines[1].startswith(L.HEADER)


def launcher_needed(root: Path, planned: list[Edit]) -> bool:
    """True when a client's project file, after `planned`, names the launcher."""
    after = {edit.path: edit.after for edit in planned}
    candidates = [root / rel for rel in LAUNCHER_FILES]
    for folder in LAUNCHER_FOLDERS:
        where = root / folder
        if where.is_dir() and not where.is_symlink():
            candidates.extend(sorted(where.iterdir()))
    for path in candidates:
        if path in after:
            text = after[path]
        elif path.is_file() and not path.is_symlink():
            text = path.read_text(encoding="utf-8", errors="replace")
        else:
            text = None
        if text and LAUNCHER_TEXT in text:
            return True
    return False


# -- showing and applying a plan --------------------------------------------------------------
def diff(edits: list[Edit]) -> str:
    """The plan as unified diffs (what `--dry-run` prints)."""
    out = []
    for edit in edits:
        before, after = edit.before or "", edit.after or ""
        name = str(edit.path)
        head = [] if edit.after is None or not edit.executable else [f"# {name}: mode 755\n"]
        lines = difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            "/dev/null" if edit.before is None else name,
            "/dev/null" if edit.after is None else name,
        )
        out.append("".join([*head, *lines]))
    return "".join(out)


def apply(edits: list[Edit], base: Path) -> list[str]:
    """Write the plan: each file atomically (never through a symlink), executable ones 0755,
    a removed file's folders up to `base` removed when left empty. What was done, one line
    each."""
    for edit in edits:  # every path checked before the first write
        refuse_links(base, edit.path)
    said = []
    for edit in edits:
        if edit.after is None:
            edit.path.unlink(missing_ok=True)
            said.append(f"removed {edit.path}")
            _prune(edit.path.parent, base)
            continue
        edit.path.parent.mkdir(parents=True, exist_ok=True)
        refuse_links(base, edit.path)
        fd, tmp = tempfile.mkstemp(
            dir=edit.path.parent, prefix=f".{edit.path.name}.", suffix=".tmp"
        )
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(edit.after)
            if edit.executable:
                os.chmod(tmp, 0o755)
            elif edit.path.exists():
                os.chmod(tmp, edit.path.stat().st_mode & 0o7777)
            else:
                os.chmod(tmp, 0o644)
            os.replace(tmp, edit.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        said.append(f"{'wrote' if edit.before is None else 'updated'} {edit.path}")
    return said


def _prune(folder: Path, base: Path) -> None:
    while folder != base and base in folder.parents:
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent
