"""`lore init`: create (or complete) the store layout; every step is idempotent."""

from __future__ import annotations

import os
from pathlib import Path

from .errors import LoreError
from .paths import STORE_DIR, UNION_COMMENT, Layout
from .store import atomic_write

CONFIG_TEMPLATE = """\
# lorebook settings. Everything is optional: the defaults below apply when a key is absent.
# agent: PS                      # default --agent for `lore log` (else LORE_AGENT, else "agent")
# project: my-project            # default --project (else LORE_PROJECT, else the repository name)
# log:
#   durability: flush            # flush (default) or fsync after every appended line
#   max_line_bytes: 65536        # larger records keep their ids and drop bulky context
#   max_value_chars: 1000        # longer strings are truncated with a visible marker
# sessions:
#   idle_minutes: 30             # no end event and silent this long -> disconnected
# resume:
#   lookback_sessions: 50        # how many recent sessions resume considers
# redaction:
#   extra_secret_keys: [vault_ref]
#   extra_patterns: {internal_token: "itk_[A-Za-z0-9]{32}"}
# catalog:
#   enabled: true                # false: queries scan the shards instead of .lore/cache/
#   verify: recent               # all: stat every shard on every query
#   auto_build_days: 60          # longer logs: `lore catalog` builds the catalog once
# retention:
#   archive_days: 90             # `lore archive` moves older shards to actionlog/archive/
#   prune_days: 365              # `lore prune` deletes older archives
# expertise:
#   max_lines: 1000              # .expertise/<domain>.yaml is pruned past this
#   failure_max_age_days: 30     # `lore expertise validate` drops older failure lessons
#   learn_on_session_end: false  # learn from each session when it ends
#   commit: true                 # commit every expertise update (false: write only)
#   domains: {mobile: {keywords: [ios, android], globs: ["**/*.swift"]}}
# embedding:
#   model: all-MiniLM-L6-v2      # the packaged model, or a local sentence-transformers folder
# index:
#   chroma_url: null             # a shared `chroma run` server (else LORE_CHROMA_URL, else local)
# search:
#   threshold: 0.15              # minimum similarity of a result (0..1)
#   weights: {similarity: 0.4, success: 0.3, recency: 0.2, specificity: 0.1}
#   synonyms: [[pg, postgres, postgresql]]   # added to the built-in table
# watch:
#   debounce_seconds: 2          # quiet time before `lore watch` indexes
# drafts:
#   auto: true                   # draft learnings from the log (see docs/patterns.md)
#   lookback_days: 90            # how far back an epic's actions are read
#   validate_failures: 3         # the Nth failed validate of an epic drafts
#   validate_lookback_days: 14   # how far back failed validations are counted
#   issue_min_chars: 200         # a bug's resolution must be longer than this
# rca:
#   publish: false               # true: RCA lessons are published directly, not drafted
"""


def create_store(root: Path) -> list[str]:
    """Create what is missing; return the paths created (relative to `root`)."""
    if not root.exists():
        raise LoreError("cannot create a store in {}: the directory does not exist", root)
    if not root.is_dir():
        raise LoreError("cannot create a store in {}: not a directory", root)
    if not os.access(root, os.W_OK | os.X_OK):
        raise LoreError("cannot create a store in {}: the directory is not writable", root)
    from .config import load_config

    layout = load_config(root).layout(root) if (root / STORE_DIR).is_dir() else Layout.at(root)
    created: list[str] = []

    def ensure_file(path: Path, text: str) -> None:
        if not path.exists():
            atomic_write(path, text.encode())
            created.append(layout.rel(path))

    for directory in (
        layout.store,
        layout.actionlog,
        layout.learnings,
        layout.drafts,
        layout.expertise,
    ):
        if not directory.is_dir():
            try:
                directory.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise LoreError("cannot create {}: {}", directory, exc.strerror) from None
            created.append(layout.rel(directory) + "/")
    ensure_file(layout.store / ".gitignore", "cache/\n")
    ensure_file(layout.config_file, CONFIG_TEMPLATE)
    for keep in (layout.actionlog, layout.drafts, layout.expertise):
        if not any(keep.iterdir()):
            ensure_file(keep / ".gitkeep", "")
    attributes = layout.attributes
    rule = layout.union_rule
    existing = attributes.read_text(encoding="utf-8") if attributes.exists() else ""
    if rule not in existing.splitlines():
        prefix = "" if not existing or existing.endswith("\n") else "\n"
        text = f"{existing}{prefix}{UNION_COMMENT}\n{rule}\n"
        atomic_write(attributes, text.encode())
        created.append(".gitattributes")
    return created
