"""`lore otel export`: each session of the action log as one OpenTelemetry trace (GenAI
semantic conventions), sent over OTLP/HTTP to any receiver, incrementally and idempotently.

Split so each part is tested alone: `spans` maps one session's records to plain span data
(pure), `send` turns them into the SDK's `ReadableSpan`s and posts them in batches with the
official OTLP/HTTP exporter (the optional `otel` extra, imported only there), `watermark`
remembers per endpoint what a receiver accepted, and `run` composes them over a store.
Never imported by a hook or the append path.
"""

from __future__ import annotations

SEMCONV = "1.41.0"  # the OpenTelemetry semantic conventions version the attributes follow
SCHEMA_URL = f"https://opentelemetry.io/schemas/{SEMCONV}"
CONTENT_MODES = ("none", "redacted")
