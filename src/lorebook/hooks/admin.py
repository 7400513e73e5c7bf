"""The `lore hooks` command: install, uninstall and status for Claude Code."""

from __future__ import annotations

import argparse
import difflib
import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any, NoReturn

from .. import LoreError, UsageError, error_line, store_sanitizer
from . import install as I

CLIENTS = ("claude",)


class Parser(argparse.ArgumentParser):
    """Usage errors as one line and exit 1, like every other lore command."""

    def error(self, message: str) -> NoReturn:
        raise UsageError("{} (see `lore hooks --help`)", message)


def parser() -> Parser:
    top = Parser(prog="lore hooks", description="Wire lorebook into Claude Code.")
    sub = top.add_subparsers(dest="action", required=True, parser_class=Parser)
    for name, text in (
        ("install", "Merge lorebook's hooks (and its MCP server) into Claude Code's settings."),
        ("uninstall", "Remove exactly the entries install added."),
    ):
        cmd = sub.add_parser(name, help=text, description=text)
        cmd.add_argument("client", choices=CLIENTS)
        where = "project: .claude/settings.json here; user: ~/.claude/settings.json"
        cmd.add_argument("--scope", choices=("project", "user"), default="project", help=where)
        cmd.add_argument("--dry-run", action="store_true", help="Print the diff; write nothing.")
        if name == "install":
            cmd.add_argument("--command", metavar="CMD",
                             help="How Claude Code runs lore (default: this lore).")  # fmt: skip
    status = sub.add_parser("status", help="Show what is wired.", description="Show what is wired.")
    status.add_argument("--json", action="store_true", help="Machine-readable output.")
    return top


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
    before, after = I.render(old), I.render(new or None)
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), str(path), str(path)
    )
    return "".join(lines)


def change(args: argparse.Namespace, env: Any) -> int:
    root = project_root(env)
    settings_path, mcp_path = targets(args.scope, root, env)
    installing = args.action == "install"
    command = (
        shlex.split(args.command) if getattr(args, "command", None) else I.lore_command(args.scope)
    )
    plan: list[tuple[Path, dict[str, Any] | None, dict[str, Any] | None]] = []
    old = I.read_json(settings_path)  # every file is read (and refused) before any is written
    new: dict[str, Any] | None
    if installing:
        new = I.with_hooks(old or {}, settings_path, command)
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
    if not changed:
        print(f"nothing to change: lorebook's hooks are {'already' if installing else 'not'} "
              f"in {settings_path}")  # fmt: skip
    if installing and not args.dry_run:
        if args.scope == "project" and not (root / ".lore").is_dir():
            from .. import Lorebook

            Lorebook.init(root)
            print(f"created the lorebook store in {root}")
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


def status(args: argparse.Namespace, env: Any) -> int:
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
    found = {"root": str(root), "store": (root / ".lore").is_dir(), "settings": files, "mcp": mcp,
             "hook_errors": len(errors), "last_error": errors[-1] if errors else None}  # fmt: skip
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
    print(f"hook errors in {log}: {len(errors)}" + (f"; last: {errors[-1]}" if errors else ""))
    return 0


def main(argv: list[str], env: Any = None) -> int:
    environ = os.environ if env is None else env
    try:
        args = parser().parse_args(argv)
        return status(args, environ) if args.action == "status" else change(args, environ)
    except LoreError as exc:  # redacted with the store's rules (its extra patterns too)
        print(error_line(exc, sanitizer=store_sanitizer(None, environ)), file=sys.stderr)
        return 1
