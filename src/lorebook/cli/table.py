"""The command table: every `lore` command, where its entry lives and its one-line summary.

An entry (`spec.Command` or `spec.Group`) declares the command's arguments, options, help and
body; `parser` builds the one parser from it and `docgen` the reference in docs/cli.md. Entries
are imported only for the command that runs, so `lore log` reads its own entry and no other.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs milliseconds on the append path; mypy still sees it
if TYPE_CHECKING:
    from ..cmdline.spec import Command, Group

# name -> (module under lorebook.cli, attribute holding the entry, summary for `lore --help`)
TABLE: dict[str, tuple[str, str, str]] = {
    "init": ("commands.init_cmd", "INIT", "Create the store in this repository (idempotent)."),
    "log": ("logspec", "LOG", "Append one action to the action log."),
    "session": ("commands.session_cmd", "SESSION", "Start or end a session."),
    "actions": ("queryspec", "ACTIONS", "List actions, newest first, with filters."),
    "sessions": ("commands.query_cmd", "SESSIONS", "List sessions with their status."),
    "resume": (
        "resumespec",
        "RESUME",
        "Where the last session left off and what to do next.",
    ),
    "check": (
        "commands.check_cmd",
        "CHECK",
        "Validate the store: schema, duplicates, torn lines, secrets.",
    ),
    "demo": ("commands.demo_cmd", "DEMO", "Build a realistic sample store and show it."),
    "catalog": ("commands.catalog_cmd", "CATALOG", "Sync (or --rebuild) the action catalog cache."),
    "report": ("queryspec", "REPORT", "Activity report; daily/weekly report files."),
    "export": (
        "commands.export_cmd",
        "EXPORT",
        "Export actions as training data (csv, json, jsonl).",
    ),
    "archive": (
        "commands.archive_cmd",
        "ARCHIVE",
        "Move old shards to actionlog/archive/ as gzip.",
    ),
    "prune": ("commands.archive_cmd", "PRUNE", "Delete archived shards past the second cut-off."),
    "mirror": (
        "commands.mirror_cmd",
        "MIRROR",
        "Mirror the store into PostgreSQL (org scale; never from a hook).",
    ),
    "eval": (
        "commands.eval_cmd",
        "EVAL",
        "Measure search quality on golden queries (recall, MRR).",
    ),
    "index": (
        "commands.index_cmd",
        "INDEX",
        "Bring the search index up to date with learnings/.",
    ),
    "search": ("searchspec", "SEARCH", "Search the learnings (keywords + meaning, ranked)."),
    "watch": (
        "commands.watch_cmd",
        "WATCH",
        "Keep the search index fresh as learnings are saved.",
    ),
    "preflight": ("searchspec", "PREFLIGHT", "What the team learned about a task (for prompts)."),
    "expertise": (
        "commands.expertise_cmd",
        "EXPERTISE",
        "Per-domain expertise files: learn, validate, …",
    ),
    "learn": ("commands.learn_cmd", "LEARN", "Create a learning (a draft unless --publish)."),
    "learnings": (
        "commands.learn_cmd",
        "LEARNINGS",
        "List learnings (status, kind, tag, stale filters).",
    ),
    "show": ("commands.learn_cmd", "SHOW", "Show one learning or draft."),
    "drafts": ("commands.learn_cmd", "DRAFTS", "List drafts awaiting review."),
    "stale": ("commands.learn_cmd", "STALE", "Learnings whose anchored code changed since."),
    "promote": (
        "commands.review_cmd",
        "PROMOTE",
        "Publish a draft in a git commit (or on a new branch).",
    ),
    "reject": (
        "commands.review_cmd",
        "REJECT",
        "Remove a draft in a git commit and log the reason.",
    ),
    "history": (
        "commands.review_cmd",
        "HISTORY",
        "The commits of one learning, draft to published.",
    ),
    "draft": (
        "commands.draft_cmd",
        "DRAFT",
        "Draft a learning from an epic's or an issue's actions.",
    ),
    "pattern": (
        "commands.pattern_cmd",
        "PATTERN",
        "Issue patterns: create one, record an occurrence.",
    ),
    "extract": (
        "commands.pattern_cmd",
        "EXTRACT",
        "Mine a retrospective into pattern drafts.",
    ),
    "apply": (
        "commands.apply_cmd",
        "APPLY",
        "Record that a learning was applied, and the outcome.",
    ),
    "stats": (
        "commands.stats_cmd",
        "STATS",
        "Applications, success rates and pattern figures.",
    ),
    "rca": ("commands.rca_cmd", "RCA", "Add an RCA report as an RCA lesson (idempotent)."),
    "sync": ("commands.sync_cmd", "SYNC", "Commit the store's changes, pull (union merge), push."),
    "otel": (
        "commands.otel_cmd",
        "OTEL",
        "Send the sessions as OpenTelemetry traces (OTLP/HTTP).",
    ),
}

# commands that lorebook.launch hands to another skin before this CLI loads; listed in the help
# as text only (the CLI never imports another skin)
SKIN_COMMANDS = {
    "mcp": "Serve lorebook's tools to agents over MCP (stdio).",
    "hook": "Run one agent hook (reads its JSON on stdin; never blocks).",
    "hooks": "Install, uninstall or show the Claude Code hooks (install claude).",
    "import": "Bring in the sessions Claude Code or Codex already wrote (idempotent).",
    "tui": "Browse sessions, actions, drafts, learnings, reports and expertise (Textual).",
}

INTRO = """lorebook: git-native memory for coding agents.

Start here:
  lore init                      create the store in this repository
  lore log commit --epic e-1     append an action (fast; secrets redacted)
  lore sessions                  who did what, which sessions disconnected
  lore resume                    where the last session left off, and what to do next
  lore demo /tmp/lore-demo       a realistic sample store to explore
"""

GLOBAL_OPTIONS = (
    ("--root DIR", "Store root (default: LORE_ROOT, else the nearest folder with .lore/, else "
     "the git top level)."),
    ("--version", "Show the version and exit."),
    ("-h, --help", "Show this message and exit."),
)  # fmt: skip


def entry(name: str) -> Command | Group | None:
    """The table's entry for `name` (its module imported now), or None."""
    found = TABLE.get(name)
    if found is None:
        return None
    module, attribute, _ = found
    value: Command | Group = getattr(load(module), attribute)
    return value


def load(module: str) -> object:
    """The module `lorebook.cli.MODULE`, imported by the import statement's own machinery
    (`importlib.import_module` bypasses it, and `python -X importtime` would not see it)."""
    return __import__(f"lorebook.cli.{module}", fromlist=("_",))


def summary(name: str) -> str:
    return TABLE[name][2] if name in TABLE else SKIN_COMMANDS.get(name, "")


def top_help(width: int = 80) -> str:
    """`lore --help`: what lorebook is, the global options and every command."""
    lines = ["usage: lore [--root DIR] COMMAND [ARGS]...", "", INTRO.rstrip(), "", "options:"]
    lines += _rows(GLOBAL_OPTIONS, width)
    rows = sorted([(name, entry[2]) for name, entry in TABLE.items()] + list(SKIN_COMMANDS.items()))
    lines += ["", "commands:", *_rows(tuple(rows), width)]
    lines += ["", "`lore COMMAND --help` shows a command's options and examples."]
    return "\n".join(lines) + "\n"


def _rows(rows: tuple[tuple[str, str], ...], width: int) -> list[str]:
    """Two columns, the second wrapped to `width`."""
    import textwrap

    left = max(len(name) for name, _ in rows) + 4
    out = []
    for name, text in rows:
        wrapped = textwrap.wrap(text, max(20, width - left)) or [""]
        out.append(f"  {name.ljust(left - 2)}{wrapped[0]}")
        out.extend(" " * left + more for more in wrapped[1:])
    return out
