"""`lore otel export`: the sessions as OpenTelemetry traces (see lorebook.otel)."""

from __future__ import annotations

from typing import Any

from ... import Lorebook
from ...cmdline.spec import JSON, Command, Group, Opt
from ...render.otel import otel_exported
from ..output import to_json

OTEL = Group(
    "otel",
    (
        Command(
            "export",
            "commands.otel_cmd:export",
            summary="Send each session as a trace over OTLP/HTTP (GenAI conventions).",
            options=(
                Opt(
                    "--endpoint",
                    "endpoint",
                    "OTLP/HTTP receiver (else OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, "
                    "OTEL_EXPORTER_OTLP_ENDPOINT, otel.endpoint in the config); /v1/traces "
                    "is added to a base URL.",
                    metavar="URL",
                ),
                Opt(
                    "--since-last",
                    "since_last",
                    "Only sessions that grew since this endpoint last accepted them.",
                    kind="flag",
                ),
                Opt(
                    "--content",
                    "content",
                    "none: no prompts, commands, paths or output; redacted: them too, "
                    "redacted, then cut.",
                    choices=("none", "redacted"),
                    default="none",
                ),
                Opt("--dry-run", "dry_run", "Say what would be sent; send nothing.", kind="flag"),
                JSON,
            ),
        ),
    ),
    help="""Feed the action log to any OpenTelemetry backend (Jaeger, Tempo, Phoenix, ...).

Each session becomes one trace: an invoke_agent span for the session, execute_tool spans
for tool calls, child actions under their parent, failures as exception events. Ids derive
from record ids, so a resend is the same trace. Headers (e.g. a token) come from
OTEL_EXPORTER_OTLP_HEADERS and are never printed. Needs pip install 'lorebook[otel]'.
Run it from CI, never from a hook.

Examples:
  lore otel export --endpoint http://127.0.0.1:4318 --dry-run
  OTEL_EXPORTER_OTLP_ENDPOINT=https://otel.example.com lore otel export --since-last
""",
)


def export(book: Lorebook, values: dict[str, Any]) -> str:
    result = book.otel_export(
        values["endpoint"],
        since_last=values["since_last"],
        content=values["content"],
        dry_run=values["dry_run"],
    )
    return to_json(result) if values["as_json"] else otel_exported(result)
