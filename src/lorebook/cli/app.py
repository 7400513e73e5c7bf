"""The click application: a lazily loaded command group, errors as one line, exit 1."""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from .. import LoreError
from .output import closed_pipe, report_error, store_sanitizer

# name -> (module under lorebook.cli.commands, attribute, one-line help for `lore --help`)
COMMANDS = {
    "init": ("init_cmd", "init", "Create the store in this repository (idempotent)."),
    "log": ("log_cmd", "log", "Append one action to the action log (fast path)."),
    "session": ("session_cmd", "session", "Start or end a session."),
    "actions": ("query_cmd", "actions", "List actions, newest first, with filters."),
    "sessions": ("query_cmd", "sessions", "List sessions with their status."),
    "resume": ("resume_cmd", "resume", "Where the last session left off and what to do next."),
    "check": ("check_cmd", "check", "Validate the store: schema, duplicates, torn lines, secrets."),
    "demo": ("demo_cmd", "demo", "Build a realistic sample store and show it."),
    "catalog": ("catalog_cmd", "catalog", "Sync (or --rebuild) the action catalog cache."),
    "report": ("report_cmd", "report", "Activity report; daily/weekly report files."),
    "export": ("export_cmd", "export_cmd", "Export actions as training data (csv, json, jsonl)."),
    "archive": ("archive_cmd", "archive", "Move old shards to actionlog/archive/ as gzip."),
    "prune": ("archive_cmd", "prune", "Delete archived shards past the second cut-off."),
    "eval": ("eval_cmd", "eval_", "Measure search quality on golden queries (recall, MRR)."),
    "index": ("index_cmd", "index", "Bring the search index up to date with learnings/."),
    "search": ("search_cmd", "search", "Search the learnings (keywords + meaning, ranked)."),
    "watch": ("watch_cmd", "watch", "Keep the search index fresh as learnings are saved."),
    "preflight": (
        "preflight_cmd",
        "preflight",
        "What the team learned about a task (for prompts).",
    ),
    "expertise": ("expertise_cmd", "expertise", "Per-domain expertise files: learn, validate, …"),
    "learn": ("learn_cmd", "learn", "Create a learning (a draft unless --publish)."),
    "learnings": ("learn_cmd", "learnings", "List learnings (status, kind, tag, stale filters)."),
    "show": ("learn_cmd", "show", "Show one learning or draft."),
    "drafts": ("learn_cmd", "drafts", "List drafts awaiting review."),
    "stale": ("learn_cmd", "stale", "Learnings whose anchored code changed since."),
    "promote": ("review_cmd", "promote", "Publish a draft in a git commit (or on a new branch)."),
    "reject": ("review_cmd", "reject", "Remove a draft in a git commit and log the reason."),
    "history": ("review_cmd", "history", "The commits of one learning, draft to published."),
    "draft": ("draft_cmd", "draft", "Draft a learning from an epic's or an issue's actions."),
    "pattern": ("pattern_cmd", "pattern", "Issue patterns: create one, record an occurrence."),
    "extract": ("pattern_cmd", "extract", "Mine a retrospective into pattern drafts."),
    "apply": ("apply_cmd", "apply", "Record that a learning was applied, and the outcome."),
    "stats": ("stats_cmd", "stats", "Applications, success rates and pattern figures."),
    "rca": ("rca_cmd", "rca", "Add an RCA report as an RCA lesson (idempotent)."),
    "sync": ("sync_cmd", "sync", "Commit the store's changes, pull (union merge), push."),
}

# commands that lorebook.launch hands to another skin before click loads; listed in the help
# as text only (the CLI never imports another skin)
SKIN_COMMANDS = {
    "mcp": "Serve lorebook's tools to agents over MCP (stdio).",
    "hook": "Run one Claude Code hook (reads its JSON on stdin; never blocks).",
    "hooks": "Install, uninstall or show the Claude Code hooks (install claude).",
    "tui": "Browse sessions, actions, drafts, learnings, reports and expertise (Textual).",
}


class LazyGroup(click.Group):
    """Imports a subcommand's module only when that subcommand runs (or help lists it)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module, attr, _ = COMMANDS[cmd_name]
        command = getattr(importlib.import_module(f"lorebook.cli.commands.{module}"), attr)
        assert isinstance(command, click.Command)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        help_of = {name: entry[2] for name, entry in COMMANDS.items()} | SKIN_COMMANDS
        rows = sorted(help_of.items())
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="lorebook", prog_name="lore")
@click.option(
    "--root",
    type=click.Path(file_okay=False),
    envvar="LORE_ROOT",
    help="Store root (default: nearest folder with .lore/, else the git top level).",
)
@click.pass_context
def cli(ctx: click.Context, root: str | None) -> None:
    """lorebook: git-native memory for coding agents.

    \b
    Start here:
      lore init                      create the store in this repository
      lore log commit --epic e-1     append an action (fast; secrets redacted)
      lore sessions                  who did what, which sessions disconnected
      lore resume                    where the last session left off, and what to do next
      lore demo /tmp/lore-demo       a realistic sample store to explore
    """
    ctx.obj = {"root": root}


def run(args: list[str]) -> int:
    """Run the CLI; LoreError becomes one stderr line and exit 1."""
    as_json = "--json" in args
    try:
        result = cli.main(args=args, prog_name="lore", standalone_mode=False)
        if isinstance(result, int):  # ctx.exit(code) comes back as the return value
            return result
    except LoreError as exc:
        return report_error(exc, as_json=as_json, sanitizer=store_sanitizer(_root(args)))
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.Abort:
        print("lore: aborted", file=sys.stderr)
        return 1
    except click.exceptions.NoArgsIsHelpError as exc:  # plain `lore` or `lore session`
        print(exc.ctx.get_help() if exc.ctx else exc.format_message())
        return 0
    except click.ClickException as exc:
        # usage errors too: one line and exit 1, like every other failure
        message = exc.format_message().replace("\n", " ")
        hint = ""
        if isinstance(exc, click.UsageError) and exc.ctx is not None:
            hint = f" (see `{exc.ctx.command_path} --help`)"
        return report_error(message + hint, as_json=as_json, sanitizer=store_sanitizer(_root(args)))
    except BrokenPipeError:
        return closed_pipe()
    return 0


def _root(args: list[str]) -> str | None:
    """The group's `--root` in `args` (before the command name), for the error printer: the
    click context that parsed it is gone by the time an error is printed."""
    for i, arg in enumerate(args):
        if arg == "--root" and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith("--root="):
            return arg.split("=", 1)[1]
        if not arg.startswith("-"):  # the command: its own options are not the group's
            break
    return None


def root_of(ctx: click.Context) -> Any:
    obj = ctx.find_root().obj or {}
    return obj.get("root")
