"""Settings from `.lore/config.yaml`, read once at the entry point.

The parsed file is cached as JSON under `.lore/cache/` (keyed by the file's size and mtime) so the
append path never imports a YAML library. Every value is checked against the type of its default
(`config_check`) before it is used or cached.
"""

from __future__ import annotations

import json
from pathlib import Path

from .config_check import check_types, find_problem
from .errors import LoreError
from .paths import STORE_DIR, Layout

TYPE_CHECKING = False  # typing costs milliseconds on the append path; mypy still sees it
if TYPE_CHECKING:
    from typing import Any

DEFAULTS: dict[str, Any] = {
    "agent": None,
    "project": None,
    "paths": {},
    "log": {
        "durability": "flush",
        "max_line_bytes": 65536,
        "max_value_chars": 1000,
        "max_depth": 64,
    },
    "sessions": {"idle_minutes": 30.0},
    "resume": {"lookback_sessions": 50, "max_session_days": 14, "tail_bytes": 4 << 20},
    "redaction": {"extra_secret_keys": [], "extra_patterns": {}},
    "catalog": {"enabled": True, "verify": "recent", "auto_build_days": 60},
    "retention": {"archive_days": 90, "prune_days": 365},
    "expertise": {
        "max_lines": 1000,
        "failure_max_age_days": 30.0,
        "learn_on_session_end": False,
        "commit": True,
        "domains": {},
    },
    "drafts": {
        "auto": True,
        "lookback_days": 90.0,
        "validate_failures": 3,
        "validate_lookback_days": 14.0,
        "issue_min_chars": 200,
    },
    "rca": {"publish": False},
    # search (docs/search.md); None: the packaged model, a local Chroma, lore-<root folder name>
    "embedding": {"model": None, "enabled": True},
    "index": {"chroma_url": None, "collection": None, "read_timeout": 2.0},
    "search": {
        "threshold": 0.15,
        "dense_weight": 0.7,
        "weights": {"similarity": 0.4, "success": 0.3, "recency": 0.2, "specificity": 0.1},
        "recency_half_life_days": 365.0,
        "stale_factor": 0.8,
        "unknown_success": 0.5,
        "synonyms": [],
    },
    "watch": {"debounce_seconds": 2.0},
    # Claude Code hooks (docs/claude-code.md): what each may cost and which pieces are on
    "hooks": {
        "context_tokens": 1500,
        "budget_seconds": 1.0,
        "learnings": 3,
        "agent": "claude-code",
        "session_start": True,
        "user_prompt": True,
        "capture": True,
    },
}

DURABILITY = ("flush", "fsync")


def _plain_copy(value: dict[str, Any]) -> dict[str, Any]:
    """A deep copy of JSON-like settings (`copy` costs ~2 ms to import on the append path)."""
    copied: dict[str, Any] = json.loads(json.dumps(value))
    return copied


class Config:
    """The merged settings; `raw` keeps every key, including ones later features read."""

    __slots__ = ("raw",)

    def __init__(self, raw: dict[str, Any] | None = None) -> None:
        self.raw: dict[str, Any] = _plain_copy(DEFAULTS) if raw is None else raw

    def __repr__(self) -> str:
        return f"Config({self.raw!r})"

    def section(self, name: str) -> dict[str, Any]:
        value = self.raw.get(name)
        return value if isinstance(value, dict) else {}

    @property
    def durability(self) -> str:
        return str(self.section("log").get("durability", "flush"))

    @property
    def max_line_bytes(self) -> int:
        return int(self.section("log").get("max_line_bytes", 65536))

    @property
    def max_value_chars(self) -> int:
        return int(self.section("log").get("max_value_chars", 1000))

    @property
    def max_depth(self) -> int:
        """How deeply an action's context (or meta) may nest objects and arrays."""
        return int(self.section("log").get("max_depth", 64))

    @property
    def idle_minutes(self) -> float:
        return float(self.section("sessions").get("idle_minutes", 30))

    def layout(self, root: Path) -> Layout:
        return Layout.at(root, {k: str(v) for k, v in self.section("paths").items()})


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = _plain_copy(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def _only_comments(text: str) -> bool:
    """True for a file of blank and `#` lines, like the template `lore init` writes."""
    return all(not line.strip() or line.lstrip().startswith("#") for line in text.splitlines())


def _parse_yaml(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise LoreError(f"{path}: invalid YAML: {exc}") from None
    except OSError as exc:
        raise LoreError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    if _only_comments(text):
        return {}  # the untouched template: no YAML library on the append path after `lore init`

    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    try:
        data = YAML(typ="safe", pure=True).load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise LoreError(f"{where}: invalid YAML: {exc.problem}") from None
    except (YAMLError, UnicodeDecodeError) as exc:
        raise LoreError(f"{path}: invalid YAML: {exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise LoreError(f"{path}:1: config must be a mapping of settings")
    return data


def _validate(data: dict[str, Any], path: Path) -> None:
    check_types(data, DEFAULTS, path)
    log = data.get("log", {})
    if isinstance(log, dict) and log.get("durability", "flush") not in DURABILITY:
        raise LoreError(f"{path}: log.durability must be one of {', '.join(DURABILITY)}")


def load_config(root: Path) -> Config:
    """Defaults merged with `.lore/config.yaml` when present."""
    path = root / STORE_DIR / "config.yaml"
    try:
        stat = path.stat()
    except FileNotFoundError:
        return Config()
    stamp = [stat.st_size, stat.st_mtime_ns]
    cache = root / STORE_DIR / "cache" / "config.json"
    try:
        cached = json.loads(cache.read_text(encoding="utf-8"))
        if cached.get("stamp") == stamp and find_problem(cached["data"], DEFAULTS) is None:
            return Config(_merge(DEFAULTS, cached["data"]))  # else: parsed again, and refused
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    data = _parse_yaml(path)
    _validate(data, path)
    try:
        from .store import atomic_write  # never through a symlinked cache folder

        atomic_write(cache, json.dumps({"stamp": stamp, "data": data}, default=str).encode())
    except LoreError:
        pass  # the cache is an optimisation; a read-only (or symlinked) cache still works
    return Config(_merge(DEFAULTS, data))
