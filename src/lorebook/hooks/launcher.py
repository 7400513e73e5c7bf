"""The project's committed launcher, `.lore/bin/lore`: how a hook finds this machine's lore.

A committed `.claude/settings.json` can name neither one person's absolute path (teammates
differ) nor a bare `lore` (Claude Code started without the virtual environment finds none,
and every capture is lost). So project hooks run `.lore/bin/lore` through `sh`, found from the
client's project directory (`wirekit.project_script`): a small POSIX-sh script that tries, in
order: a lorebook `lore` on PATH; the command this machine recorded in `.lore/cache/lore-command`
(gitignored: per machine) at install; `python3 -m lorebook`. With none it says once what is
wrong (stderr, Claude Code's `systemMessage`, `.lore/cache/hooks.log`), reads its payload and
exits 0: a hook never blocks the agent."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from .. import LoreError
from .wiring import Edit

LAUNCHER = Path(".lore") / "bin" / "lore"
RECORD = Path(".lore") / "cache" / "lore-command"  # one word per line: program, then arguments
WARNED = Path(".lore") / "cache" / "launcher-warned"
HEADER = "# lorebook launcher"  # how uninstall knows the file is ours

FIX = (
    "lorebook: cannot run lore on this machine (no lorebook lore on PATH, none recorded in"
    " .lore/cache/lore-command, python3 cannot import lorebook); its hooks capture nothing"
    " until you activate the virtual environment lorebook is installed in before starting"
    " the agent, or run `lore hooks install CLIENT` here (said once)"
)

SCRIPT = f"""#!/bin/sh
{HEADER}, written by `lore hooks install` (commit it; edits are overwritten).
# Runs, in order: a lorebook `lore` on PATH; the command `lore hooks install` recorded for
# this machine in .lore/cache/lore-command (gitignored); `python3 -m lorebook`. With none it
# says once what is wrong, reads the hook's payload and exits 0: a hook never blocks the agent.
set -f  # no globbing: PATH entries and recorded words are taken as they are
case $0 in */bin/*) store=${{0%/bin/*}} ;; *) store=.lore ;; esac
resolve=
if [ "${{1-}}" = --which ]; then resolve=1; shift; fi
run() {{
  if [ -n "$resolve" ]; then printf '%s\\n' "$*"; exit 0; fi
  exec "$@"
}}
ifs=$IFS; IFS=:; found=
for dir in $PATH; do
  [ -n "$dir" ] && [ -f "$dir/lore" ] && [ -x "$dir/lore" ] || continue
  n=0
  while [ "$n" -lt 8 ] && IFS= read -r line; do
    case $line in "from lorebook."*) found=$dir/lore; break ;; esac
    n=$((n + 1))
  done < "$dir/lore"
  [ -n "$found" ] && break
done
IFS=$ifs
[ -n "$found" ] && run "$found" "$@"
record=$store/cache/lore-command
if [ -f "$record" ] && [ ! -L "$record" ]; then
  {{ IFS= read -r prog; IFS= read -r a1; IFS= read -r a2; }} < "$record"
  case $prog in
    /*) if [ -f "$prog" ] && [ -x "$prog" ]; then
          if [ -n "$a2" ]; then run "$prog" "$a1" "$a2" "$@"; fi
          if [ -n "$a1" ]; then run "$prog" "$a1" "$@"; fi
          run "$prog" "$@"
        fi ;;
  esac
fi
if command -v python3 >/dev/null 2>&1 && python3 -c 'import importlib.util as u, sys
sys.exit(u.find_spec("lorebook") is None)' </dev/null >/dev/null 2>&1; then
  run python3 -m lorebook "$@"
fi
[ -n "$resolve" ] && exit 1
msg='{FIX}'
if [ "${{1-}}" = hook ]; then
  cat >/dev/null 2>&1
  cache=$store/cache
  if [ -d "$cache" ] && [ ! -L "$cache" ] && [ ! -e "$cache/launcher-warned" ] \\
      && [ ! -L "$cache/launcher-warned" ]; then
    : > "$cache/launcher-warned"
    printf '%s\\n' "$msg" >&2
    [ -L "$cache/hooks.log" ] || printf '%s\\n' "$msg" >> "$cache/hooks.log"
    printf '{{"systemMessage": "%s"}}\\n' "$msg"
  fi
  exit 0
fi
printf '%s\\n' "$msg" >&2
exit 127
"""


def _refuse_links(root: Path, rel: Path) -> None:
    """LoreError when `rel` or a folder on the way to it under `root` is a symlink."""
    current = root
    for part in rel.parts:
        current = current / part
        if current.is_symlink():
            raise LoreError("{}: is a symlink; lorebook does not write through symlinks", current)


def _put(root: Path, rel: Path, text: str, mode: int) -> None:
    """Write `root/rel` atomically (a temp file renamed over it), never through a link."""
    _refuse_links(root, rel)
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    _refuse_links(root, rel)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def recorded_words(command: list[str]) -> str:
    """The record's text for `command` (a program and at most two arguments)."""
    return "".join(f"{word}\n" for word in command[:3])


def machine_command() -> list[str]:
    """This very install, absolute: its `lore` script, else this Python with `-m lorebook`."""
    argv0 = Path(sys.argv[0])
    if argv0.name == "lore" and argv0.is_file():
        return [str(argv0.absolute())]
    return [sys.executable, "-m", "lorebook"]


def current(root: Path) -> str | None:
    path = root / LAUNCHER
    if path.is_symlink() or not path.is_file():
        return None
    return path.read_text(encoding="utf-8", errors="replace")


def edits(root: Path, command: list[str]) -> list[Edit]:
    """What install changes: the launcher (when it differs), this machine's record, and the
    marker of a failure already said (removed: a later failure is said again)."""
    found: list[Edit] = []
    for rel in (LAUNCHER, RECORD):
        _refuse_links(root, rel)
    if current(root) != SCRIPT:
        found.append(Edit(root / LAUNCHER, current(root), SCRIPT, executable=True))
    record, path = recorded_words(command), root / RECORD
    before = path.read_text(encoding="utf-8") if path.is_file() else None
    if before != record:
        found.append(Edit(path, before, record))
    if (root / WARNED).is_file():
        found.append(Edit(root / WARNED, "", None))
    return found


def removals(root: Path) -> list[Edit]:
    """What uninstall removes: the launcher (only when it is ours) and this machine's record."""
    found = []
    text = current(root)
    if text is not None and text.splitlines()[1:2] and text.splitlines()[1].startswith(HEADER):
        found.append(Edit(root / LAUNCHER, text, None, executable=True))
    for rel in (RECORD, WARNED):
        if (root / rel).is_file() and not (root / rel).is_symlink():
            found.append(Edit(root / rel, (root / rel).read_text(encoding="utf-8"), None))
    return found


def install(root: Path, command: list[str]) -> list[str]:
    """Write the launcher (when it differs) and this machine's record; what changed, said."""
    said = []
    if current(root) != SCRIPT:
        _put(root, LAUNCHER, SCRIPT, 0o755)
        said.append(f"wrote {root / LAUNCHER}")
    record = recorded_words(command)
    path = root / RECORD
    if path.is_symlink() or not path.is_file() or path.read_text(encoding="utf-8") != record:
        _put(root, RECORD, record, 0o644)
        said.append(f"recorded {' '.join(command[:3])} in {path} (this machine only)")
    (root / WARNED).unlink(missing_ok=True)  # a later failure is said again
    return said


def resolves(root: Path, env: dict[str, str] | os._Environ[str]) -> dict[str, object]:
    """What the launcher would run here, found as it finds it (status; no program is run)."""
    found: dict[str, object] = {"path": str(root / LAUNCHER), "present": current(root) == SCRIPT}
    for folder in env.get("PATH", "").split(os.pathsep):
        candidate = Path(folder) / "lore"
        if folder and candidate.is_file() and os.access(candidate, os.X_OK):
            with candidate.open(encoding="utf-8", errors="replace") as lines:
                head = [next(lines, "") for _ in range(8)]
            if any(line.startswith("from lorebook.") for line in head):
                return {**found, "runs": str(candidate), "via": "PATH"}
    record = root / RECORD
    if record.is_file() and not record.is_symlink():
        words = record.read_text(encoding="utf-8").splitlines()
        prog = Path(words[0]) if words else None
        if prog and prog.is_absolute() and prog.is_file() and os.access(prog, os.X_OK):
            return {**found, "runs": " ".join(words), "via": "recorded"}
        found["recorded"] = " ".join(words)
    return {**found, "runs": None, "via": None}
