"""The `lore hooks` command: install, uninstall and status for Claude Code."""

from __future__ import annotations

import difflib
import json
import os
import shlex
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from .. import LoreError, error_line, store_sanitizer
from ..cmdline.parser import Shown, no_subcommand, parse, split_group
from ..cmdline.spec import Arg, Command, Group, Opt
from . import install as I
from . import launcher as L

CLIENTS = ("claude",)


_SCOPE = Opt(
    "--scope",
    "scope",
    "project: .claude/settings.json here; user: ~/.claude/settings.json.",
    choices=("project", "user"),
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
            summary="Merge lorebook's hooks (and its MCP server) into Claude Code's settings.",
            args=(_CLIENT,),
            options=(
                _SCOPE,
                _DRY_RUN,
                Opt(
                    "--command",
                    "command",
                    "How Claude Code runs lore (default: this lore).",
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
            summary="Show what is wired.",
            options=(Opt("--json", "json", "Machine-readable output.", kind="flag"),),
            book=False,
        ),
    ),
    help="Wire lorebook into Claude Code.",
)

HOOK = Command(
    "hook",
    "",  # `lore hook EVENT` is checked by hand in `entry.hook`: no parser on the capture path
    # the events `install` wires, in its order (`entry.EVENTS` checks the same names by hand)
    args=(
        Arg(
            "event",
            "The hook event; its JSON payload comes on stdin.",
            choices=tuple(ours for _, ours, _, _ in I.EVENTS),
        ),
    ),
    help="Run one Claude Code hook: reads its JSON on stdin; never blocks the agent.",
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


def project_root(env: Any) -> Path:
    from .. import find_root

    return find_root(env=dict(env))


def targets(scope: str, root: Path, env: Any) -> tuple[Path, Path | None]:
    """(settings.json, .mcp.json or None) for the scope."""
    if scope == "user":
        home = Path(env.get("HOME") or Path.home())
        return home / ".claude" / "settings.json", None
    return root / ".claude" / "settings.json", root / ".mcp.json"


def diff(path: Path, old: dict[str, Any] | None, new: dict[str, Any] | None) -> str:
    return diff_text(path, I.render(old), I.render(new or None))


def diff_text(path: Path, before: str, after: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), str(path), str(path)
    )
    return "".join(lines)


def change(args: SimpleNamespace, env: Any) -> int:
    root = project_root(env)
    settings_path, mcp_path = targets(args.scope, root, env)
    installing = args.action == "install"
    given = getattr(args, "command", None)
    command = shlex.split(given) if given else I.lore_command(args.scope)
    # project hooks without --command run the committed launcher (lore found per machine)
    launched = installing and args.scope == "project" and not given
    prefix = L.HOOK_PREFIX if launched else shlex.join(command)
    if launched:
        L.refuse_links(root)
    plan: list[tuple[Path, dict[str, Any] | None, dict[str, Any] | None]] = []
    old = I.read_json(settings_path)  # every file is read (and refused) before any is written
    new: dict[str, Any] | None
    if installing:
        new = I.with_hooks(old or {}, settings_path, prefix)
    else:
        new = I.without_hooks(old, settings_path) if old is not None else None
    plan.append((settings_path, old, new))
    if mcp_path is not None:
        old_mcp = I.read_json(mcp_path)
        new_mcp: dict[str, Any] | None
        if installing:
            new_mcp = I.with_server(old_mcp or {}, mcp_path, command)
        else:
            new_mcp = I.without_server(old_mcp, mcp_path) if old_mcp is not None else None
        plan.append((mcp_path, old_mcp, new_mcp))
    changed = [(p, o, n) for p, o, n in plan if (o or None) != (n or None)]
    for path, before, after in changed:
        if args.dry_run:
            sys.stdout.write(diff(path, before, after))
        else:
            I.write(path, after)
            print(f"{'updated' if after else 'removed'} {path}")
    if launched and args.dry_run and L.current(root) != L.SCRIPT:
        sys.stdout.write(diff_text(root / L.LAUNCHER, L.current(root) or "", L.SCRIPT))
    if launched and args.dry_run:
        print(f"would record {' '.join(L.machine_command())} in {root / L.RECORD}")
    if not changed:
        print(f"nothing to change: lorebook's hooks are {'already' if installing else 'not'} "
              f"in {settings_path}")  # fmt: skip
    # uninstall: the launcher goes with the last handler that runs it
    if not installing and args.scope == "project" and not L.in_use(new):
        if not args.dry_run:
            for line in L.uninstall(root):
                print(line)
        elif L.current(root) is not None:
            print(f"would remove {root / L.LAUNCHER} and {root / L.RECORD}")
    if installing and not args.dry_run:
        if args.scope == "project" and not (root / ".lore").is_dir():
            from .. import Lorebook

            Lorebook.init(root)
            print(f"created the lorebook store in {root}")
        if launched:
            for line in L.install(root, L.machine_command()):
                print(line)
        if mcp_path is None:
            print(f"MCP server: run `claude mcp add --scope user {I.SERVER} -- "
                  f"{shlex.join([*command, 'mcp'])}` to use it in every project")  # fmt: skip
    return 0


def wired(path: Path) -> dict[str, Any]:
    """What one settings file wires to lorebook."""
    try:
        settings = I.read_json(path)
    except LoreError as exc:
        return {"path": str(path), "error": str(exc), "events": []}
    if settings is None:
        return {"path": str(path), "exists": False, "events": []}
    hooks = settings.get("hooks") if isinstance(settings.get("hooks"), dict) else {}
    events = []
    for event, groups in (hooks or {}).items():
        for group in groups if isinstance(groups, list) else []:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for handler in handlers if isinstance(handlers, list) else []:
                if I.is_ours(handler):
                    events.append({"event": event, "command": handler["command"],
                                   "async": bool(handler.get("async"))})  # fmt: skip
    return {"path": str(path), "exists": True, "events": events,
            "disabled": settings.get("disableAllHooks") is True}  # fmt: skip


def status(args: SimpleNamespace, env: Any) -> int:
    root = project_root(env)
    files = [wired(targets(scope, root, env)[0]) for scope in ("project", "user")]
    mcp: dict[str, Any] = {"path": str(root / ".mcp.json"), "registered": False}
    try:
        config = I.read_json(root / ".mcp.json") or {}
        servers = config.get("mcpServers")
        mcp["registered"] = isinstance(servers, dict) and I.is_our_server(servers.get(I.SERVER))
    except LoreError as exc:
        mcp["error"] = str(exc)
    log = root / ".lore" / "cache" / "hooks.log"
    errors = log.read_text(encoding="utf-8", errors="replace").splitlines() if log.is_file() else []
    found: dict[str, Any] = {
             "root": str(root), "store": (root / ".lore").is_dir(), "settings": files, "mcp": mcp,
             "hook_errors": len(errors), "last_error": errors[-1] if errors else None,
             "launcher": L.resolves(root, env)}  # fmt: skip
    if args.json:
        print(json.dumps(found, indent=2))
        return 0
    print(f"store: {root / '.lore'} ({'present' if found['store'] else 'missing: run lore init'})")
    for item in files:
        events = ", ".join(e["event"] + (" (async)" if e["async"] else "") for e in item["events"])
        state = item.get("error") or (events if events else "no lorebook hooks")
        if item.get("disabled"):
            state += " — but disableAllHooks is true"
        print(f"{item['path']}: {state}")
    server = "MCP server lore registered" if mcp["registered"] else "no lore MCP server"
    print(f"{mcp['path']}: {mcp.get('error') or server}")
    launcher = found["launcher"]
    if launcher["present"]:
        runs = launcher["runs"]
        print(f"launcher {launcher['path']}: runs " + (f"{runs} ({launcher['via']})" if runs else
              "python3 -m lorebook if python3 can import it, else nothing: activate the virtual "
              "environment or run `lore hooks install claude` here"))  # fmt: skip
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
