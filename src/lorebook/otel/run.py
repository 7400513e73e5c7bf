"""One export over a store: which endpoint, which sessions (the watermark), their spans, the
batches, and what was sent. Composes `spans`, `send` and `watermark` with the narrow parts of
a store it needs: the layout, the redaction and the repository."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

from ..errors import LoreError, UsageError
from . import CONTENT_MODES, SEMCONV, batches, spans, watermark

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path
    from typing import Any

    from ..contracts import OtelExport
    from ..paths import Layout
    from ..redact.sanitize import Sanitizer

TRACES = "/v1/traces"


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
    workers: int | None = None,
) -> OtelExport:
    """Send the sessions of the log under `layout` (with `since_last`, those that grew since
    the receiver last accepted them) as traces; return what was sent (see `lore otel
    export --json`). Nothing is sent with `dry_run`; the watermark records exactly the batches
    the receiver accepted. `workers`: processes posting batches (default: one per core, at
    most WORKERS; 1 runs everything here)."""
    if content not in CONTENT_MODES:
        raise UsageError("--content {!r}: expected none or redacted", content)
    url, shown = resolve_endpoint(endpoint, os.environ if environ is None else environ, configured)

    def clean(value: str) -> str:
        return sanitizer.redact_text(value)[0]

    redact = clean if content == "redacted" else None
    mark = watermark.path_for(layout.cache, url)
    kept = watermark.load(mark)
    planned, unchanged = batches.plan(
        shards_by_session(layout.actionlog), kept if since_last else None
    )
    result: OtelExport = {
        "endpoint": shown, "dry_run": dry_run, "content": content, "semconv": SEMCONV,
        "sessions": 0, "unchanged_sessions": unchanged, "spans": 0, "batches": 0,
        "skipped_lines": 0,
    }  # fmt: skip
    if dry_run:
        for batch in planned:
            made, sessions, skipped = batches.map_batch(batch, repo, redact)
            _count(result, (len(made), sessions, skipped))
        result["batches"] = len(planned)
        return result
    from .send import require

    require()
    count = min(workers or os.cpu_count() or 1, WORKERS, len(planned))
    start = (url, shown, clean, redact is not None, repo)
    if count <= 1:
        batches.start(*start)
        try:
            for number, batch in enumerate(planned, 1):
                _accepted(result, batch, batches.send_batch(batch), number, kept, mark)
        finally:
            batches.stop()
        return result
    _in_pool(planned, count, start, result, kept, mark)
    return result


WORKERS = 2  # the machine this is tuned on has 2 cores; more adds processes, not speed


def _in_pool(
    planned: list[batches.Batch],
    count: int,
    start: tuple[Any, ...],
    result: OtelExport,
    kept: dict[str, int],
    mark: Path,
) -> None:
    """The batches posted by `count` forked workers; each accepted one recorded as it comes
    back, the first refusal raised once the others in flight have come back."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    context = multiprocessing.get_context("fork")  # the closures and the sanitizer go as they are
    failure: LoreError | None = None
    with ProcessPoolExecutor(count, context, initializer=batches.start, initargs=start) as pool:
        futures = {pool.submit(batches.send_batch, b): (n, b) for n, b in enumerate(planned, 1)}
        for future in as_completed(futures):
            number, batch = futures[future]
            try:
                _accepted(result, batch, future.result(), number, kept, mark)
            except (LoreError, BrokenProcessPool) as exc:
                if failure is None:
                    failure = (
                        exc
                        if isinstance(exc, LoreError)
                        else LoreError(
                            "otel export: the worker posting batch {} stopped: {}", number, exc
                        )
                    )
                    for waiting in futures:
                        waiting.cancel()
    if failure is not None:
        raise failure


def _count(result: OtelExport, sent: tuple[int, int, int]) -> None:
    result["spans"] += sent[0]
    result["sessions"] += sent[1]
    result["skipped_lines"] += sent[2]


def _accepted(
    result: OtelExport,
    batch: batches.Batch,
    outcome: tuple[int, int, int, str | None],
    number: int,
    kept: dict[str, int],
    mark: Path,
) -> None:
    """Record batch `number` as sent and its shards in the watermark, or raise its refusal."""
    from .send import refused

    if outcome[3] is not None:
        raise refused(str(result["endpoint"]), number, outcome[0], outcome[3])
    _count(result, outcome[:3])
    result["batches"] += 1
    kept.update((rel, size) for shards in batch for rel, _, size in shards)
    watermark.save(mark, kept)
