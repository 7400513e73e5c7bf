"""Span data to the receiver: the SDK's `ReadableSpan`s built directly (ids and times are
ours; a Tracer and a batch processor would only add cost) and posted with the official
OTLP/HTTP (protobuf) exporter, one batch at a time, each result checked.

The exporter logs its failures and retries; its log is captured here so that a refused batch
becomes one `LoreError` naming the endpoint and the batch, and nothing else reaches stderr.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ..errors import LoreError
from . import SCHEMA_URL

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from .spans import SpanData

INSTALL = "pip install 'lorebook[otel]'"
_LOGGERS = ("opentelemetry.exporter.otlp.proto.http.trace_exporter",
            "opentelemetry.exporter.otlp.common.http")  # fmt: skip


def refused(shown: str, number: int, count: int, why: str) -> LoreError:
    """The one line for batch `number` (from 1) of `count` spans that `shown` did not take."""
    return LoreError(
        "otel export: {}: batch {} ({} spans) was not accepted: {}", shown, number, count, why
    )


def require() -> None:
    """The extra's modules imported here (so forked workers share them), else one line."""
    try:
        import opentelemetry.exporter.otlp.proto.http.trace_exporter
        import opentelemetry.sdk.trace  # noqa: F401
    except ImportError:
        raise missing() from None


def missing() -> LoreError:
    return LoreError("otel export needs the OpenTelemetry SDK and exporter: {}", INSTALL)


class _Kept(logging.Handler):
    """Keeps the exporter's last error message (why a batch was refused)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.last: str | None = None

    def emit(self, record: logging.LogRecord) -> None:
        self.last = record.getMessage()


def _hashed(kind: Any) -> Any:
    """The SDK's Resource (or InstrumentationScope) with its hash computed once: the encoder
    groups spans by resource and scope, hashing both per span (the resource's hash is a JSON
    dump of its attributes each time: ~7 % of an export)."""

    class Hashed(kind):  # type: ignore[misc]
        def __init__(self, *args: Any) -> None:
            super().__init__(*args)
            self._lore_hash = super().__hash__()

        def __hash__(self) -> int:
            return self._lore_hash  # type: ignore[no-any-return]

        def __eq__(self, other: object) -> bool:
            return self is other or super().__eq__(other)

    return Hashed


class Sender:
    """Posts batches of spans to one OTLP/HTTP traces endpoint; `shown` is the endpoint as
    it may be printed (no credentials), `redact` cleans a receiver's reply before it is."""

    def __init__(self, endpoint: str, shown: str, redact: Callable[[str], str],
                 timeout: float | None = None) -> None:  # fmt: skip
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
            from opentelemetry.sdk.resources import Resource
            from opentelemetry.sdk.trace import Event, ReadableSpan
            from opentelemetry.sdk.util.instrumentation import InstrumentationScope
            from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags
        except ImportError:
            raise missing() from None
        self.shown, self.redact = shown, redact
        self._kept = _Kept()
        for name in _LOGGERS:
            logger = logging.getLogger(name)
            logger.addHandler(self._kept)
            logger.propagate = False  # its retries and errors become our one line
        self.exporter = OTLPSpanExporter(endpoint=endpoint, timeout=timeout)
        # OTEL_RESOURCE_ATTRIBUTES / OTEL_SERVICE_NAME apply, as for any OpenTelemetry SDK
        made = Resource.create({"service.name": "lorebook"}, schema_url=SCHEMA_URL)
        self.resource = _hashed(Resource)(made.attributes, made.schema_url)
        self.scope = _hashed(InstrumentationScope)("lorebook", None, SCHEMA_URL)
        self._types = (ReadableSpan, SpanContext, Event, Status, StatusCode, TraceFlags(1),
                       SpanKind.INTERNAL)  # fmt: skip

    def build(self, spans: Sequence[SpanData]) -> list[Any]:
        """`ReadableSpan`s for `spans`, sharing what they can: one resource and one scope for
        all, one parent context per parent (most spans' is their session's), the attribute
        dicts as mapped, an event list only on a failure."""
        readable, context, event, status, code, sampled, internal = self._types
        ok, resource, scope = status(code.UNSET), self.resource, self.scope
        out: list[Any] = []
        parents: dict[int, Any] = {}
        append = out.append
        for s in spans:
            trace, parent = s.trace_id, None
            if s.parent_id is not None:
                parent = parents.get(s.parent_id)
                if parent is None or parent.trace_id != trace:
                    parent = parents[s.parent_id] = context(trace, s.parent_id, True, sampled)
            append(readable(
                s.name,
                context=context(trace, s.span_id, False, sampled),
                parent=parent,
                resource=resource,
                attributes=s.attributes,
                events=[event(n, a, t) for n, t, a in s.events] if s.events else (),
                kind=internal,
                status=ok if s.error is None else status(code.ERROR, s.error),
                start_time=s.start,
                end_time=s.end,
                instrumentation_scope=scope,
            ))  # fmt: skip
        return out

    def post(self, spans: Sequence[SpanData]) -> str | None:
        """Post one batch: None when the receiver accepted it, else why not (redacted, cut,
        one line)."""
        from opentelemetry.sdk.trace.export import SpanExportResult

        from ..redact.sanitize import clip

        self._kept.last = None
        try:
            result = self.exporter.export(self.build(spans))
        except Exception as exc:  # a transport error the exporter did not catch
            result, self._kept.last = SpanExportResult.FAILURE, f"{type(exc).__name__}: {exc}"
        if result is SpanExportResult.SUCCESS:
            return None
        why = self._kept.last.splitlines()[0] if self._kept.last else "not accepted"
        return clip(self.redact(why), 300)

    def close(self) -> None:
        self.exporter.shutdown()  # type: ignore[no-untyped-call]
        for name in _LOGGERS:
            logging.getLogger(name).removeHandler(self._kept)
