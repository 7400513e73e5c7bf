"""Typed, frozen settings: one class per section of `.lore/config.yaml`.

A section's annotated class attributes are its keys and their values the defaults, written here
and nowhere else (`config.DEFAULTS`, which `config_check` validates against, is derived from
them). Values are converted once, when the config is loaded and checked, so callers read
`config.drafts.lookback_days` as a float and never repeat a default or coerce.

Plain classes, not dataclasses: `dataclasses` imports `inspect`, milliseconds on the append path.
Standard library only.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

from types import MappingProxyType

from .paths import DEFAULT_PATHS

TYPE_CHECKING = False  # typing costs milliseconds on the append path; mypy still sees it
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

EMPTY: Mapping[str, Any] = MappingProxyType({})


def frozen(value: Any) -> Any:
    """JSON-like data made read-only: mappings become mapping proxies, lists tuples."""
    if isinstance(value, dict | MappingProxyType):
        return MappingProxyType({str(k): frozen(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return tuple(frozen(v) for v in value)
    return value


def plain(value: Any) -> Any:
    """The JSON-like form of a setting (sections and proxies as dicts, tuples as lists)."""
    if isinstance(value, Section):
        return value.as_dict()
    if isinstance(value, dict | MappingProxyType):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [plain(v) for v in value]
    return value


class Section:
    """The settings of one section. Read-only: assigning an attribute raises AttributeError.

    `Section({"key": value})` or `Section(key=value)` takes values already checked by
    `config_check` (as `load_config` does) and converts them to the type of their default.
    """

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The annotated attributes that have a default (found once, then kept on the class)."""
        found: tuple[str, ...] | None = cls.__dict__.get("_names")
        if found is None:
            annotated = cls.__dict__.get("__annotations__", {})  # noqa: RUF063 (inspect is slow)
            found = tuple(name for name in annotated if name in cls.__dict__)
            type.__setattr__(cls, "_names", found)
        return found

    def __init__(self, values: Mapping[str, Any] | None = None, /, **given: Any) -> None:
        merged = {**values, **given} if values else given
        if not merged:
            return  # all defaults: the class attributes are what is read
        for name in self.names():
            if name in merged:
                default = getattr(type(self), name)
                object.__setattr__(self, name, self.convert(name, merged[name], default))

    def convert(self, name: str, value: Any, default: Any) -> Any:
        """`value` (checked already) as the type of `default`."""
        if isinstance(default, Section):
            return value if isinstance(value, type(default)) else type(default)(value)
        if isinstance(default, bool):
            return bool(value)
        if isinstance(default, int):
            return int(value)
        if isinstance(default, float):
            return float(value)
        if isinstance(default, str):
            return str(value)
        return frozen(value)  # None (optional text), tuples and mappings

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        """The defaults as plain JSON-like data."""
        return {name: plain(getattr(cls, name)) for name in cls.names()}

    def as_dict(self) -> dict[str, Any]:
        return {name: plain(getattr(self, name)) for name in self.names()}

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"settings are read-only: cannot set {type(self).__name__}.{name}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"settings are read-only: cannot delete {type(self).__name__}.{name}")

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and all(
            getattr(self, name) == getattr(other, name) for name in self.names()
        )

    __hash__ = None  # type: ignore[assignment]  # equal by value, and may hold mappings

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.names())
        return f"{type(self).__name__}({shown})"


class PathsSettings(Section):
    """`paths.*`: where the committed parts of the store live, relative to the root."""

    actionlog: str = DEFAULT_PATHS["actionlog"]
    learnings: str = DEFAULT_PATHS["learnings"]
    expertise: str = DEFAULT_PATHS["expertise"]
    reports: str = DEFAULT_PATHS["reports"]
    training_data: str = DEFAULT_PATHS["training_data"]


class LogSettings(Section):
    """`log.*`: how actions are written."""

    durability: str = "flush"  # or fsync
    max_line_bytes: int = 65536
    max_value_chars: int = 1000
    max_depth: int = 64  # how deeply an action's context (or meta) may nest


class SessionSettings(Section):
    idle_minutes: float = 30.0


class ResumeSettings(Section):
    lookback_sessions: int = 50
    max_session_days: int = 14
    tail_bytes: int = 4 << 20


class RedactionSettings(Section):
    extra_secret_keys: tuple[str, ...] = ()
    extra_patterns: Mapping[str, str] = EMPTY  # name -> regular expression


class CatalogSettings(Section):
    enabled: bool = True
    verify: str = "recent"  # or all
    auto_build_days: int = 60


class RetentionSettings(Section):
    archive_days: int = 90
    prune_days: int = 365


class ExpertiseSettings(Section):
    max_lines: int = 1000
    failure_max_age_days: float = 30.0
    learn_on_session_end: bool = False
    learn_min_score: int = 2  # learning writes into a classified domain only at this score
    commit: bool = True
    domains: Mapping[str, Mapping[str, Any]] = EMPTY  # name -> {keywords: [...], globs: [...]}


class DraftSettings(Section):
    auto: bool = True
    lookback_days: float = 90.0
    validate_failures: int = 3
    validate_lookback_days: float = 14.0
    issue_min_chars: int = 200


class RcaSettings(Section):
    publish: bool = False


class EmbeddingSettings(Section):
    model: str | None = None  # None: the packaged model
    enabled: bool = True


class IndexSettings(Section):
    chroma_url: str | None = None  # None: a local Chroma under .lore/cache/index/
    collection: str | None = None  # None: lore-<root folder name>
    read_timeout: float = 2.0


class WeightSettings(Section):
    """LEO weighting (seed: similarity .4, success .3, recency .2, specificity .1)."""

    similarity: float = 0.4
    success: float = 0.3
    recency: float = 0.2
    specificity: float = 0.1


class SearchSettings(Section):
    """`search.*`: the ranking policy (docs/search.md)."""

    threshold: float = 0.15  # minimum similarity (0..1) a result must reach
    dense_weight: float = 0.8  # share of the dense similarity in the hybrid (docs/eval.md)
    weights: WeightSettings = WeightSettings()
    recency_half_life_days: float = 365.0
    stale_factor: float = 0.8  # stale learnings' score is multiplied by this
    unknown_success: float = 0.5  # success term for a learning never applied
    synonyms: tuple[tuple[str, ...], ...] = ()  # groups of interchangeable spellings

    def convert(self, name: str, value: Any, default: Any) -> Any:
        if name == "synonyms":
            return synonym_groups(value)
        return super().convert(name, value, default)


def synonym_groups(value: Any) -> tuple[tuple[str, ...], ...]:
    """`search.synonyms` as groups: a list of groups, or `{word: [spellings]}`."""
    if isinstance(value, dict | MappingProxyType):
        return tuple(
            (str(key), *(str(v) for v in (spellings if isinstance(spellings, list | tuple)
                                          else [spellings])))
            for key, spellings in value.items()
        )  # fmt: skip
    return tuple(tuple(str(word) for word in group) for group in value)


class MirrorSettings(Section):
    """`mirror.*`: where `lore mirror postgres` writes (docs/org-scale.md)."""

    postgres_dsn: str | None = None  # else LORE_PG_DSN; keep the password out (use PGPASSWORD)


class WatchSettings(Section):
    debounce_seconds: float = 2.0


class HookSettings(Section):
    """Agents' hooks (docs/claude-code.md, docs/agents.md): what each may cost and which
    pieces are on."""

    context_tokens: int = 1500
    budget_seconds: float = 1.0
    learnings: int = 3
    agent: str | None = None  # else the agent's own name: claude-code, codex, gemini-cli...
    session_start: bool = True
    user_prompt: bool = True
    record_prompts: bool = True
    capture: bool = True
