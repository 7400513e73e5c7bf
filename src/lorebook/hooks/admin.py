"""The `lore hooks` command: install, uninstall and status for every client.

Each client's installer is a module `wire_<client>.py` answering `plan(action, scope, root,
home, machine) -> [Edit]` (reads files, writes nothing) and `status(scope, root, home) ->
Wired`; this skin shows (`--dry-run`) or applies their edits, and keeps the committed launcher
`.lore/bin/lore` while any client's project config runs it.
"""

from __future__ import annotations

import difflib
import importlib
import json
import os
import shlex
import sys
import tempfile
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

from .. import LoreError, error_line, store_sanitizer
from ..cmdline.parser import Shown, no_subcommand, parse, split_group
from ..cmdline.spec import Arg, Command, Group, Opt
from . import launcher as L
from . import wire_claude as C
from . import wirekit as K
from .wiring import Edit, Wired

# client -> its installer module
WIRES = {
    "claude": "wire_claude",
    "codex": "wire_codex",
    "gemini": "wire_gemini",
    "copilot": "wire_copilot",
    "cursor": "wire_cursor",
    "cline": "wire_cline",
    "opencode": "wire_opencode",
}
CLIENTS = tuple(WIRES)
SCOPES = ("project", "user")
HOMES = ("CODEX_HOME", "COPILOT_HOME", "GEMINI_CLI_HOME")  # a client's own home, when set


_SCOPE = Opt(
    "--scope",
    "scope",
    "project: this repository's config files (committed); user: your own, for every project.",
    choices=SCOPES,
    default="project",
)
_DRY_RUN = Opt("--dry-run", "dry_run", "Print the diff; write nothing.", kind="flag")
_CLIENT = Arg("client", "The agent to wire.", choices=CLIENTS)

HOOKS = Group(
    "hooks",
    (
        Command(
            "install",
            "",  # served by this skin, as every `lore hooks` command
            summary="Merge lorebook's hooks and its MCP server into an agent's config files.",
            args=(_CLIENT,),
            options=(
                _SCOPE,
                _DRY_RUN,
                Opt(
                    "--command",
                    "command",
                    "How this machine runs lore (default: this lore, absolute).",
                    metavar="CMD",
                ),
            ),
            book=False,
        ),
        Command(
            "uninstall",
            "",
            summary="Remove exactly the entries install added.",
            args=(_CLIENT,),
            options=(_SCOPE, _DRY_RUN),
            book=False,
        ),
        Command(
            "status",
            "",
            summary="Show what is wired, for every agent (or one) in both scopes.",
            args=(Arg("client", "Only this agent.", choices=CLIENTS, nargs="?"),),
            options=(Opt("--json", "json", "Machine-readable output.", kind="flag"),),
            book=False,
        ),
    ),
    help="Wire lorebook into coding agents: Claude Code, Codex, Gemini CLI, Copilot CLI, Cursor.",
)

HOOK = Command(
    "hook",
    "",  # `lore hook EVENT` is checked by hand in `entry.hook`: no parser on the capture path
    # the events `install` wires, in its order (`entry.EVENTS` checks the same names by hand)
    args=(
        Arg(
            "event",
            "The hook event; its JSON payload comes on stdin.",
            choices=tuple(ours for _, ours, _, _ in C.EVENTS),
        ),
    ),
    help="Run one agent hook (`lore hook EVENT` for Claude Code, `lore hook CLIENT EVENT` for"
    " the others): reads its JSON on stdin; never blocks the agent.",
    book=False,
)


def parse_args(argv: list[str]) -> SimpleNamespace:
    """`lore hooks ARGS` parsed from `HOOKS`: the subcommand as `action`, then its values."""
    command, words = split_group(HOOKS, argv)
    if command is None:
        no_subcommand(HOOKS, words, HOOKS.help)
    prog = f"lore hooks {command.name}"
    values = parse(command, words, prog, command.summary)
    return SimpleNamespace(action=command.name, **values)


def wire(client: str) -> ModuleType:
    return importlib.import_module(f".{WIRES[client]}", __package__)


def project_root(env: Any) -> Path:
    from .. import find_root

    return find_root(env=dict(env))


def home_of(env: Any) -> Path:
    return Path(env.get("HOME") or Path.home())


# -- applying edits --------------------------------------------------------------------------
def diff_text(path: Path, before: str, after: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), str(path), str(path)
    )
    return "".join(lines)


def refuse_links(edit: Edit, bases: set[Path]) -> None:
    """LoreError when the file or a folder on its way (below the repository or a home) is a
    symlink: lorebook never writes through one."""
    for path in (edit.path, *edit.path.parents):
        if path in bases:
            return
        if path.is_symlink():
            raise LoreError("{}: is a symlink; lorebook does not write through symlinks", path)


def put(edit: Edit, bases: set[Path]) -> None:
    """Apply one edit: atomically (a temp file renamed over it), or remove the file (and the
    folders that leaves empty, up to but never the repository or a home)."""
    path = edit.path
    if edit.after is None:
        path.unlink(missing_ok=True)
        folder = path.parent
        while folder not in bases and any(base in folder.parents for base in bases):
            try:  # the folders install made, as they are left empty; never a base
                folder.rmdir()
            except OSError:  # not empty: something else lives there
                break
            folder = folder.parent
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    mask = os.umask(0)
    os.umask(mask)
    if edit.executable:
        mode = 0o777 & ~mask
    else:
        mode = path.stat().st_mode & 0o7777 if path.exists() else 0o666 & ~mask
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(edit.after)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def launcher_edits(
    client: str, action: str, scope: str, root: Path, home: Path, machine: list[str]
) -> list[Edit]:
    """The launcher with a project install; without it when no other client's project config
    runs it any more (a config that cannot be read keeps it)."""
    if scope != "project":
        return []
    if action == "install":
        return L.edits(root, machine)
    for other in CLIENTS:
        if other != client:
            found = wire(other).status("project", root, home)
            if found.hooks or found.mcp or found.problems:
                return []
    return L.removals(root)


def planned(
    client: str, action: str, scope: str, root: Path, home: Path, machine: list[str]
) -> tuple[list[Edit], list[Edit]]:
    """(the client's own edits, the launcher's) for `lore hooks install|uninstall CLIENT`."""
    ours = wire(client).plan(action, scope, root, home, machine)
    return ours, launcher_edits(client, action, scope, root, home, machine)


def say(edit: Edit, root: Path, dry_run: bool) -> str:
    if edit.path == root / L.RECORD and edit.after is not None:
        words = " ".join(edit.after.split())
        return (f"would record {words} in {edit.path}" if dry_run
                else f"recorded {words} in {edit.path} (this machine only)")  # fmt: skip
    if dry_run:
        if edit.after is None:
            return f"would remove {edit.path}"
        shown = diff_text(edit.path, edit.before or "", edit.after).rstrip("\n")
        return f"# {edit.path}: mode 755\n{shown}" if edit.executable else shown
    if edit.after is None:
        return f"removed {edit.path}"
    return f"{'updated' if edit.before is not None else 'wrote'} {edit.path}"


def change(args: SimpleNamespace, env: Any) -> int:
    root, home = project_root(env), home_of(env)
    given = getattr(args, "command", None)
    machine = shlex.split(given) if given else L.machine_command()
    ours, launcher = planned(args.client, args.action, args.scope, root, home, machine)
    edits = ours + launcher
    bases = {root, home, *(Path(env[v]) for v in HOMES if env.get(v))}
    for edit in edits:  # every path is checked before anything is written
        refuse_links(edit, bases)
    installing = args.action == "install"
    fresh = not (root / ".lore").is_dir()
    if installing and not args.dry_run and args.scope == "project" and fresh:
        from .. import Lorebook

        Lorebook.init(root)
        print(f"created the lorebook store in {root}")
    for edit in edits:
        if not args.dry_run:
            put(edit, bases)
        print(say(edit, root, args.dry_run))
    if not ours:
        state = "already" if installing else "not"
        print(f"nothing to change: lorebook's {args.client} hooks are {state} in the "
              f"{args.scope} config")  # fmt: skip
    note = getattr(wire(args.client), "note", None)
    if installing and note is not None and (line := note(args.scope, machine)):
        print(line)
    return 0


# -- status ------------------------------------------------------------------------------------
def legacy_settings(path: Path) -> dict[str, Any]:
    """What one Claude Code settings file wires (the `settings` of `--json`, kept stable)."""
    try:
        settings = K.load_json(path, K.read(path))
    except LoreError as exc:
        return {"path": str(path), "error": str(exc), "events": []}
    if not path.exists():
        return {"path": str(path), "exists": False, "events": []}
    hooks = settings.get("hooks") if isinstance(settings.get("hooks"), dict) else {}
    events = []
    for event, groups in (hooks or {}).items():
        for group in groups if isinstance(groups, list) else []:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for handler in handlers if isinstance(handlers, list) else []:
                if C.ours(handler):
                    events.append({"event": event, "command": handler["command"],
                                   "async": bool(handler.get("async"))})  # fmt: skip
    return {"path": str(path), "exists": True, "events": events,
            "disabled": settings.get("disableAllHooks") is True}  # fmt: skip


def describe(found: Wired) -> str:
    """One client in one scope, as a line."""
    what = [", ".join(found.hooks) if found.hooks else "no lorebook hooks"]
    what.append("MCP server lore registered" if found.mcp else "no lore MCP server")
    line = f"{found.client} ({found.scope}): " + "; ".join(what)
    if found.files:
        line += " — " + ", ".join(str(f) for f in found.files)
    return "\n".join([line, *(f"  problem: {p}" for p in found.problems)])


def status(args: SimpleNamespace, env: Any) -> int:
    root, home = project_root(env), home_of(env)
    clients = [args.client] if getattr(args, "client", None) else list(CLIENTS)
    wired = [wire(c).status(scope, root, home) for c in clients for scope in SCOPES]
    claude = [legacy_settings(C.files(scope, root, home)[0]) for scope in SCOPES]
    mcp: dict[str, Any] = {"path": str(root / ".mcp.json"), "registered": False}
    try:
        mcp["registered"] = K.has_server(K.load_json(root / ".mcp.json",
                                                     K.read(root / ".mcp.json")))  # fmt: skip
    except LoreError as exc:
        mcp["error"] = str(exc)
    log = root / ".lore" / "cache" / "hooks.log"
    errors = log.read_text(encoding="utf-8", errors="replace").splitlines() if log.is_file() else []
    found: dict[str, Any] = {
             "root": str(root), "store": (root / ".lore").is_dir(),
             "clients": [w.to_dict() for w in wired], "settings": claude, "mcp": mcp,
             "hook_errors": len(errors), "last_error": errors[-1] if errors else None,
             "launcher": L.resolves(root, env)}  # fmt: skip
    if args.json:
        print(json.dumps(found, indent=2))
        return 0
    print(f"store: {root / '.lore'} ({'present' if found['store'] else 'missing: run lore init'})")
    for item in wired:
        print(describe(item))
    launcher = found["launcher"]
    if launcher["present"]:
        runs = launcher["runs"]
        print(f"launcher {launcher['path']}: runs " + (f"{runs} ({launcher['via']})" if runs else
              "python3 -m lorebook if python3 can import it, else nothing: activate the virtual "
              "environment or run `lore hooks install CLIENT` here"))  # fmt: skip
    print(f"hook errors in {log}: {len(errors)}" + (f"; last: {errors[-1]}" if errors else ""))
    return 0


def main(argv: list[str], env: Any = None) -> int:
    environ = os.environ if env is None else env
    try:
        args = parse_args(argv)
        return status(args, environ) if args.action == "status" else change(args, environ)
    except Shown as shown:  # --help
        return shown.code
    except LoreError as exc:  # redacted with the store's rules (its extra patterns too)
        print(error_line(exc, sanitizer=store_sanitizer(None, environ)), file=sys.stderr)
        return 1
