"""One export over a store: which endpoint, which sessions (the watermark), their spans, the
batches, and what was sent. Composes `spans`, `send` and `watermark` with the narrow parts of
a store it needs: the layout, the redaction and the repository."""

from __future__ import annotations

import os
from urllib.parse import urlsplit, urlunsplit

from ..errors import UsageError
from . import CONTENT_MODES, SEMCONV, spans, watermark

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from pathlib import Path
    from typing import Any

    from ..contracts import OtelExport
    from ..paths import Layout
    from ..redact.sanitize import Sanitizer

TRACES = "/v1/traces"
BATCH = 5000  # spans per request (~1 MB of protobuf): whole sessions are kept together


def resolve_endpoint(
    option: str | None, environ: Mapping[str, str], configured: object
) -> tuple[str, str]:
    """(the traces URL, the URL as it may be printed: no credentials, query or fragment).

    The option, else OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (used as it is), else
    OTEL_EXPORTER_OTLP_ENDPOINT, else `otel.endpoint` in the config; a base URL (no path
    ending in /v1/traces) gets /v1/traces added, as the OTLP specification says for the
    generic variable."""
    traces = environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or None
    url = option or traces or environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or None
    if url is None and configured is not None:
        if not isinstance(configured, str):
            raise UsageError("otel.endpoint in .lore/config.yaml: expected a URL (a string)")
        url = configured
    if not url:
        raise UsageError(
            "otel export: no endpoint: give --endpoint URL, set "
            "OTEL_EXPORTER_OTLP_ENDPOINT, or otel.endpoint in .lore/config.yaml"
        )
    try:
        parts = urlsplit(url.strip())
        good = parts.scheme in ("http", "https") and bool(parts.hostname)
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError:
        good = False
    if not good:
        raise UsageError("otel export: {}: not an http(s) URL", _shown(url))
    full = url.strip()
    if not (url == traces and not option) and not parts.path.rstrip("/").endswith(TRACES):
        full = urlunsplit(parts._replace(path=parts.path.rstrip("/") + TRACES))
    return full, _shown(full)


def _shown(url: str) -> str:
    """`url` without credentials, query or fragment (what may be printed)."""
    try:
        parts = urlsplit(url)
        netloc = parts.netloc.rpartition("@")[2]
        return urlunsplit((parts.scheme, netloc, parts.path, "", ""))
    except ValueError:
        return "<unparsable URL>"


def repository(root: Path) -> spans.Repository:
    """The store's repository: its identity (the normalised remote, else the root commit,
    else the folder), its remote URL and the commit HEAD names."""
    from ..git.binary import head, root_commit
    from ..repoid import repo_of

    repo = repo_of(str(root))
    url = f"https://{repo.key}" if repo is not None and repo.key else None
    key = (repo.key if repo is not None else None) or root_commit(root) or str(root)
    return spans.Repository(key, url, head(root))


def shards_by_session(actionlog: Path) -> dict[str, list[tuple[str, Path, int]]]:
    """session (a shard's name) -> its live shards as (relative path, path, size now)."""
    from ..log.reader import shard_files, walk_days

    found: dict[str, list[tuple[str, Path, int]]] = {}
    for _, day in walk_days(actionlog):
        for path in shard_files(day):
            try:
                size = os.stat(path).st_size
            except OSError:
                continue  # gone since listed: read next time
            rel = path.relative_to(actionlog).as_posix()
            found.setdefault(path.name[:-6].split("~")[0], []).append((rel, path, size))
    return found


def export(
    layout: Layout,
    sanitizer: Sanitizer,
    repo: spans.Repository,
    endpoint: str | None = None,
    *,
    since_last: bool = False,
    content: str = "none",
    dry_run: bool = False,
    configured: object = None,
    environ: Mapping[str, str] | None = None,
    on_batch: Callable[[int, int], None] | None = None,
) -> OtelExport:
    """Send the sessions of the log under `layout` (with `since_last`, those that grew since
    the receiver last accepted them) as traces; return what was sent (see `lore otel
    export --json`). Nothing is sent with `dry_run`; the watermark moves only past batches the
    receiver accepted."""
    from ..log.reader import read_shard

    if content not in CONTENT_MODES:
        raise UsageError("--content {!r}: expected none or redacted", content)
    url, shown = resolve_endpoint(endpoint, os.environ if environ is None else environ, configured)

    def clean(value: str) -> str:
        return sanitizer.redact_text(value)[0]

    redact = clean if content == "redacted" else None
    mark = watermark.path_for(layout.cache, url)
    accepted = watermark.load(mark) if since_last else {}
    sender = None
    if not dry_run:
        from .send import Sender

        sender = Sender(url, shown, clean)
    sessions = unchanged = sent_spans = batches = skipped = 0
    pending: list[spans.SpanData] = []
    pending_shards: dict[str, int] = {}
    kept = dict(accepted) if since_last else watermark.load(mark)

    def flush() -> None:
        nonlocal batches, sent_spans
        if not pending:
            return
        batches += 1
        if sender is not None:
            sender.send(pending, batches)
            kept.update(pending_shards)
            watermark.save(mark, kept)
        sent_spans += len(pending)
        if on_batch is not None:
            on_batch(batches, len(pending))
        pending.clear()
        pending_shards.clear()

    def problem(_: object) -> None:
        nonlocal skipped
        skipped += 1

    try:
        for _, shards in sorted(shards_by_session(layout.actionlog).items()):
            if since_last and all(accepted.get(rel) == size for rel, _, size in shards):
                unchanged += 1
                continue
            by_session: dict[str, list[dict[str, Any]]] = {}
            seen: set[str] = set()
            for rel, path, _ in shards:
                for _, record in read_shard(path, rel, problem):
                    if record["id"] not in seen:
                        seen.add(record["id"])
                        by_session.setdefault(str(record.get("session")), []).append(record)
            for session, records in sorted(by_session.items()):
                pending.extend(spans.session_spans(session, records, repo, redact))
                sessions += 1
            pending_shards.update((rel, size) for rel, _, size in shards)
            if len(pending) >= BATCH:
                flush()
        flush()
    finally:
        if sender is not None:
            sender.close()
    return {
        "endpoint": shown,
        "dry_run": dry_run,
        "content": content,
        "semconv": SEMCONV,
        "sessions": sessions,
        "unchanged_sessions": unchanged,
        "spans": sent_spans,
        "batches": batches,
        "skipped_lines": skipped,
    }
