"""Settings from `.lore/config.yaml`, read once at the entry point.

The parsed file is cached as JSON under `.lore/cache/` (keyed by the file's size and mtime) so the
append path never imports a YAML library. Every value is checked against the type of its default
(`config_check`) before it is used or cached, then held typed and read-only (`settings`).

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import json
import os
import time

from .config_check import check_types, find_problem, line_of
from .errors import LoreError
from .paths import STORE_DIR, Layout, inside
from .settings import (
    CatalogSettings,
    DraftSettings,
    EmbeddingSettings,
    ExpertiseSettings,
    HookSettings,
    IndexSettings,
    LogSettings,
    MirrorSettings,
    PathsSettings,
    RcaSettings,
    RedactionSettings,
    ResumeSettings,
    RetentionSettings,
    SearchSettings,
    Section,
    SessionSettings,
    WatchSettings,
)

TYPE_CHECKING = False  # typing costs milliseconds on the append path; mypy still sees it
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

DURABILITY = ("flush", "fsync")


def _plain_copy(value: dict[str, Any]) -> dict[str, Any]:
    """A deep copy of JSON-like settings (`copy` costs ~2 ms to import on the append path)."""
    copied: dict[str, Any] = json.loads(json.dumps(value))
    return copied


class Config(Section):
    """The settings of one store, typed and read-only: `config.drafts.lookback_days`.

    Built from the values of `.lore/config.yaml` (checked already); `raw` keeps the merged
    file, including keys no section declares (later features read them).
    """

    agent: str | None = None  # else LORE_AGENT, else "agent"
    project: str | None = None  # else LORE_PROJECT, else the repository's name (lorebook.repoid)
    paths: PathsSettings = PathsSettings()
    log: LogSettings = LogSettings()
    sessions: SessionSettings = SessionSettings()
    resume: ResumeSettings = ResumeSettings()
    redaction: RedactionSettings = RedactionSettings()
    catalog: CatalogSettings = CatalogSettings()
    retention: RetentionSettings = RetentionSettings()
    expertise: ExpertiseSettings = ExpertiseSettings()
    drafts: DraftSettings = DraftSettings()
    rca: RcaSettings = RcaSettings()
    embedding: EmbeddingSettings = EmbeddingSettings()
    index: IndexSettings = IndexSettings()
    search: SearchSettings = SearchSettings()
    watch: WatchSettings = WatchSettings()
    hooks: HookSettings = HookSettings()
    mirror: MirrorSettings = MirrorSettings()
    raw: dict[str, Any]

    def __init__(self, data: dict[str, Any] | None = None) -> None:
        super().__init__(data)
        object.__setattr__(self, "raw", _merge(DEFAULTS, data) if data else _plain_copy(DEFAULTS))

    def __repr__(self) -> str:
        return f"Config({self.raw!r})"

    def layout(self, root: Path) -> Layout:
        return Layout.at(root, self.paths.as_dict())


DEFAULTS: dict[str, Any] = Config.defaults()  # derived: the defaults are written in settings.py


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


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise LoreError("{}: invalid YAML: {}", path, exc) from None
    except OSError as exc:
        raise LoreError("{}: cannot be read: {}", path, exc.strerror or exc) from None


def _parse_yaml(path: Path, text: str) -> dict[str, Any]:
    if _only_comments(text):
        return {}  # the untouched template: no YAML library on the append path after `lore init`

    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    try:
        data = YAML(typ="safe", pure=True).load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise LoreError("{}: invalid YAML: {}", where, exc.problem) from None
    except (YAMLError, UnicodeDecodeError) as exc:
        raise LoreError("{}: invalid YAML: {}", path, exc) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise LoreError("{}:1: config must be a mapping of settings", path)
    return data


def _validate(data: dict[str, Any], path: Path) -> None:
    check_types(data, DEFAULTS, path)
    log = data.get("log")
    durability = log.get("durability") if isinstance(log, dict) else None
    if durability is not None and durability not in DURABILITY:
        line = line_of(path, ("log", "durability"))
        where = f"{path}:{line}" if line is not None else str(path)
        raise LoreError("{}: log.durability: expected one of " + ", ".join(DURABILITY), where)
    moved = data.get("paths")
    for key, value in moved.items() if isinstance(moved, dict) else ():
        try:  # a committed config must not move the store's files out of the repository
            inside(path.parent.parent, value, f"paths.{key}", root=path.parent.parent, links=False)
        except LoreError as exc:
            line = line_of(path, ("paths", key))
            raise LoreError("{}: {}", f"{path}:{line}" if line else path, exc) from None


def load_config(root: Path | str) -> Config:
    """Defaults merged with `.lore/config.yaml` when present (read with os.path alone while the
    cache holds it: the append path never imports pathlib).

    The parsed file is cached under its stat; a stat taken within the clock's tick of the last
    edit (`store.settled`) cannot stand for the content, so such an entry keeps the text it was
    parsed from and is used only while the file still reads the same (no YAML parse either)."""
    store = os.path.join(root, STORE_DIR)
    source = os.path.join(store, "config.yaml")
    try:
        stat = os.stat(source)
    except FileNotFoundError:
        return Config()
    stamp = [stat.st_size, stat.st_mtime_ns, stat.st_ino, stat.st_ctime_ns]
    try:
        with open(os.path.join(store, "cache", "config.json"), encoding="utf-8") as handle:
            cached = json.loads(handle.read())
        if (
            cached.get("stamp") == stamp
            and (cached.get("settled") or cached.get("text") == _text_of(source))
            and find_problem(cached["data"], DEFAULTS) is None
        ):
            return Config(cached["data"])  # else: parsed again, and refused
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    from pathlib import Path

    from .store import atomic_write, settled  # never through a symlinked cache folder

    path = Path(store) / "config.yaml"
    text = _read_text(path)  # read once: parsed, and kept while the stat cannot vouch for it
    data = _parse_yaml(path, text)
    _validate(data, path)
    entry: dict[str, Any] = {"stamp": stamp, "data": data}
    if settled(stat.st_mtime_ns, time.time_ns()):
        entry["settled"] = True
    else:
        entry["text"] = text  # an edit in this clock tick could keep the stamp: compare the text
    try:
        cache = Path(store) / "cache" / "config.json"
        atomic_write(cache, json.dumps(entry, default=str).encode())
    except LoreError:
        pass  # the cache is an optimisation; a read-only (or symlinked) cache still works
    return Config(data)


def _text_of(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError):
        return None
