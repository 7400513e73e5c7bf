"""`lore log`'s table entry: its options, help and body (the append path: standard library only).

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

from ..cmdline.spec import Arg, Command, Opt

LOG_OPTIONS = (
    Opt(
        "--context",
        "context",
        "Action context: a JSON object, @FILE holding one, or - for stdin.",
        metavar="JSON|@FILE|-",
    ),
    Opt(
        "--outcome",
        "outcome",
        "success (default), failure, blocked or in_progress.",
        metavar="OUTCOME",
    ),
    Opt("--epic", "epic", "The epic this action belongs to.", metavar="EPIC"),
    Opt("--issue", "issue", "The issue this action belongs to.", metavar="ISSUE"),
    Opt(
        "--parent",
        "parent",
        "Id of the action this one follows up (e.g. its in_progress start).",
        metavar="ID",
    ),
    Opt(
        "--duration",
        "duration",
        "How long the action took, in seconds.",
        kind="float",
        metavar="SECONDS",
    ),
    Opt("--error", "error", "Error text (redacted before it is written)."),
    Opt("--category", "category", "Category; inferred from TYPE when absent.", metavar="CATEGORY"),
    Opt("--agent", "agent", "Agent name (else LORE_AGENT, config, 'agent').", metavar="AGENT"),
    Opt(
        "--project",
        "project",
        "Project (else LORE_PROJECT, config, repository name).",
        metavar="PROJECT",
    ),
    Opt(
        "--session",
        "session",
        "Session id (else LORE_SESSION, else the automatic session).",
        metavar="ID",
    ),
    Opt("--json", "json", "Print the stored action as JSON instead of its id.", kind="flag"),
)

LOG_HELP = """Append one action of TYPE to the action log and print its id.

TYPE is a lowercase word: commit, push, pr, deploy, plan, validate, spawn, search, tool_call, ...
The context, error text and metadata are redacted (secrets, PII) before they reach disk.

Examples:
  lore log commit --context '{"files": ["src/auth.py"], "commit_hash": "a1b2c3d"}' --epic epic-012
  lore log validate --outcome failure --error "2 acceptance criteria failed" --epic epic-012
  echo '{"agent_id": "abc123"}' | lore log spawn --outcome in_progress --context -
"""


LOG = Command(
    "log",
    "logcore:run_log",
    args=(Arg("type"),),
    options=LOG_OPTIONS,
    help=LOG_HELP,
    book=False,
    quick=True,
)
