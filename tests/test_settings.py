"""Typed settings: one class per section, every default written once, read-only, checked at load
with one error line, and no call site repeating a default."""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from conftest import assert_one_error_line, clean_env, lore
from lorebook.config import DEFAULTS, Config, load_config
from lorebook.settings import Section

SRC = Path(__file__).resolve().parents[1] / "src" / "lorebook"
DOCS = Path(__file__).resolve().parents[1] / "docs" / "configuration.md"
SECTIONS = [name for name, default in DEFAULTS.items() if isinstance(default, dict)]


def write_config(root: Path, text: str) -> None:
    (root / ".lore" / "config.yaml").write_text(text, encoding="utf-8")


def fits(value: Any, default: Any) -> bool:
    """Is the typed value of the kind its JSON default promises?"""
    if isinstance(default, bool):
        return type(value) is bool
    if isinstance(default, int):
        return type(value) is int
    if isinstance(default, float):
        return type(value) is float
    if isinstance(default, str):
        return type(value) is str
    if default is None:
        return value is None
    if isinstance(default, list):
        return isinstance(value, tuple)
    if isinstance(default, dict):
        return isinstance(value, Section | Mapping) and not isinstance(value, dict)
    return False


def leaves(defaults: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """(dotted key, default) of every setting, sections flattened."""
    out: list[tuple[str, Any]] = []
    for name, default in defaults.items():
        key = f"{prefix}{name}"
        if isinstance(default, dict) and default:
            out.extend(leaves(default, key + "."))
        else:
            out.append((key, default))
    return out


def typed(config: Config, key: str) -> Any:
    value: Any = config
    for part in key.split("."):
        value = getattr(value, part)
    return value


# -- one place ---------------------------------------------------------------------------
def test_every_default_has_a_typed_attribute_and_every_attribute_a_default() -> None:
    config = Config()
    assert list(Config.names()) == list(DEFAULTS)  # and nothing else: DEFAULTS is derived
    assert Config.defaults() == DEFAULTS
    for key, default in leaves(DEFAULTS):
        value = typed(config, key)
        assert fits(value, default), (key, value, default)
        assert value == default or list(value) == list(default), key
    for name in SECTIONS:
        section = getattr(config, name)
        assert isinstance(section, Section), name
        assert list(section.names()) == list(DEFAULTS[name]), name
        assert section.as_dict() == DEFAULTS[name]
    for section in ("log", "sessions", "resume", "redaction", "catalog", "retention",
                    "expertise", "drafts", "rca", "embedding", "index", "search", "watch",
                    "paths"):  # fmt: skip
        assert section in SECTIONS, section


def test_settings_are_frozen() -> None:
    config = Config({"redaction": {"extra_secret_keys": ["vault_ref"]},
                     "expertise": {"domains": {"mobile": {"keywords": ["ios"]}}}})  # fmt: skip
    with pytest.raises(AttributeError, match="read-only"):
        config.drafts.lookback_days = 1.0  # type: ignore[misc]
    with pytest.raises(AttributeError, match="read-only"):
        config.search.weights.recency = 1.0  # type: ignore[misc]
    with pytest.raises(AttributeError, match="read-only"):
        config.drafts = config.drafts  # type: ignore[misc]
    with pytest.raises(AttributeError, match="read-only"):
        del config.log.durability
    with pytest.raises(TypeError):
        config.expertise.domains["mobile"]["keywords"] = ["android"]  # type: ignore[index]
    with pytest.raises(TypeError):
        config.redaction.extra_patterns["x"] = "y"  # type: ignore[index]
    assert config.redaction.extra_secret_keys == ("vault_ref",)
    assert config.expertise.domains["mobile"]["keywords"] == ("ios",)


# -- read back typed -----------------------------------------------------------------------
OVERRIDES = """\
agent: PS
project: consilio
future_feature: {x: 1}
paths:
  reports: docs/lore-reports
log:
  max_depth: 8
sessions:
  idle_minutes: 5
resume:
  tail_bytes: 1024
redaction:
  extra_secret_keys: [vault_ref]
catalog:
  enabled: false
retention:
  archive_days: 30
expertise:
  failure_max_age_days: 7
drafts:
  lookback_days: 45
rca:
  publish: true
embedding:
  model: /models/mini
index:
  read_timeout: 1
search:
  weights: {recency: 1}
  synonyms: {rls: [row level security], pg: postgres}
watch:
  debounce_seconds: 0
hooks:
  context_tokens: 800
mirror:
  postgres_dsn: host=db.internal dbname=lore
"""

READ_BACK = {
    "agent": "PS", "project": "consilio", "paths.reports": "docs/lore-reports",
    "log.max_depth": 8, "sessions.idle_minutes": 5.0, "resume.tail_bytes": 1024,
    "redaction.extra_secret_keys": ("vault_ref",), "catalog.enabled": False,
    "retention.archive_days": 30, "expertise.failure_max_age_days": 7.0,
    "drafts.lookback_days": 45.0, "rca.publish": True, "embedding.model": "/models/mini",
    "index.read_timeout": 1.0, "search.weights.recency": 1.0,
    "search.synonyms": (("rls", "row level security"), ("pg", "postgres")),
    "watch.debounce_seconds": 0.0, "hooks.context_tokens": 800,
    "mirror.postgres_dsn": "host=db.internal dbname=lore",
}  # fmt: skip


def test_one_override_in_each_section_is_read_back_typed(store: Path) -> None:
    write_config(store, OVERRIDES)
    for _ in range(2):  # parsed from the YAML, then from the JSON cache
        config = load_config(store)
        for key, expected in READ_BACK.items():
            value = typed(config, key)
            assert value == expected and type(value) is type(expected), (key, value)
        assert {k.split(".")[0] for k in READ_BACK} >= set(SECTIONS)  # one in each section
        assert config.drafts.auto is True and config.search.weights.similarity == 0.4
        assert config.raw["future_feature"] == {"x": 1}  # unknown keys stay available
        assert config.layout(store).reports == store / "docs" / "lore-reports"


# -- a bad value in each section is one line --------------------------------------------------
BAD = {
    "paths": ("paths:\n  learnings: 7\n", ":2: paths.learnings: expected text"),
    "log": ("log:\n  max_depth: deep\n", ":2: log.max_depth: expected an integer"),
    "sessions": ("sessions:\n  idle_minutes: []\n", ":2: sessions.idle_minutes: expected a number"),
    "resume": ("resume:\n  tail_bytes: 1.5\n", ":2: resume.tail_bytes: expected an integer"),
    "redaction": ("redaction:\n  extra_patterns: [itk_]\n",
                  ":2: redaction.extra_patterns: expected a mapping"),
    "catalog": ("catalog:\n  verify: 1\n", ":2: catalog.verify: expected text"),
    "retention": ("retention:\n  prune_days: -1\n",
                  ":2: retention.prune_days: expected an integer of at least 0"),
    "expertise": ("expertise:\n  domains:\n    mobile:\n      keywords: [ios, 3]\n",
                  ":4: expertise.domains.mobile.keywords[1]: expected text, got 3"),
    "drafts": ("drafts:\n  auto: maybe\n", ":2: drafts.auto: expected true or false"),
    "rca": ("rca:\n  publish: 1\n", ":2: rca.publish: expected true or false"),
    "embedding": ("embedding:\n  model: [a]\n", ":2: embedding.model: expected text"),
    "index": ("index:\n  read_timeout: soon\n", ":2: index.read_timeout: expected a number"),
    "search": ("search:\n  weights:\n    similarity: high\n",
               ":3: search.weights.similarity: expected a number"),
    "watch": ("watch:\n  debounce_seconds: .inf\n",
              ":2: watch.debounce_seconds: expected a number"),
    "hooks": ("hooks:\n  capture: off please\n", ":2: hooks.capture: expected true or false"),
    "mirror": ("mirror:\n  postgres_dsn: [a]\n", ":2: mirror.postgres_dsn: expected text"),
}  # fmt: skip
MORE_BAD = [
    ("paths:\n  actionlogs: log\n", ":2: paths.actionlogs: unknown key, expected one of actionlog"),
    ("expertise:\n  max_lines: 0\n", ":2: expertise.max_lines: expected an integer above 0"),
    ("expertise:\n  domains:\n    mobile: [ios]\n",
     ":3: expertise.domains.mobile: expected a mapping with keywords and globs"),
    ("search:\n  synonyms:\n    - [pg, postgres]\n    - pg\n",
     ":4: search.synonyms[1]: expected a list of text"),
    ("search:\n  synonyms:\n    rls: {a: b}\n",
     ":3: search.synonyms.rls: expected text or a list of text"),
    ("log:\n  durability: null\n", ":2: log.durability: expected text, got None"),
    ("index:\n  collection: 7\n", ":2: index.collection: expected text"),
]  # fmt: skip


def test_every_section_has_a_bad_value_case() -> None:
    assert set(BAD) == set(SECTIONS)


@pytest.mark.parametrize(
    "text, needle",
    [*BAD.values(), *MORE_BAD],
    ids=[*BAD, *(f"more-{i}" for i in range(len(MORE_BAD)))],
)
def test_a_bad_value_is_one_line_from_check_and_resume(store: Path, text: str, needle: str) -> None:
    write_config(store, text)
    for command in ("check", "resume"):
        result = lore(command, env=clean_env(store))
        assert "Traceback" not in result.err, result.err
        line = assert_one_error_line(result, f".lore/config.yaml{needle}")
        assert re.search(r"config\.yaml:\d+: [\w.\[\]-]+: (expected|unknown key)", line), line


# -- no defaults at call sites -----------------------------------------------------------------
SETTINGS_WORDS = re.compile(
    r"config|settings|\bsection\b|\b(log|drafts|search|index|expertise|"
    r"retention|catalog|resume|redaction|embedding|watch|rca|paths)\b"
)


def test_no_module_reads_a_setting_with_a_default_of_its_own() -> None:
    """`.section(...)` is gone, and no `.get(key, default)` on anything settings-like: the
    defaults live in lorebook/settings.py only."""
    found = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            receiver = ast.unparse(node.func.value)
            section_call = node.func.attr == "section" and "config" in receiver
            get_with_default = (node.func.attr == "get" and len(node.args) == 2
                                and isinstance(node.args[0], ast.Constant)
                                and isinstance(node.args[1], ast.Constant | ast.List | ast.Dict)
                                and SETTINGS_WORDS.search(receiver) is not None)  # fmt: skip
            if section_call or get_with_default:
                found.append(f"{rel}:{node.lineno}: {ast.unparse(node)}")
    assert found == []


def test_nothing_calls_config_section() -> None:
    callers = [
        path.relative_to(SRC).as_posix()
        for path in SRC.rglob("*.py")
        if re.search(r"config\.section\(", path.read_text(encoding="utf-8"))
    ]
    assert callers == []
    assert not hasattr(Config, "section")  # the untyped reader is gone


# -- docs ----------------------------------------------------------------------------------------
def shown_default(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | dict) and not value:
        return "[]" if isinstance(value, list) else "{}"
    return str(value)


def defaults_table() -> list[str]:
    rows = ["| key | default |", "| --- | --- |"]
    rows += [f"| `{key}` | `{shown_default(value)}` |" for key, value in leaves(DEFAULTS)]
    return rows


def test_docs_table_of_defaults_is_current() -> None:
    text = DOCS.read_text(encoding="utf-8")
    start = text.index("<!-- defaults: generated -->")
    end = text.index("<!-- end defaults -->")
    table = [line for line in text[start:end].splitlines()[1:] if line.strip()]
    assert table == defaults_table(), "\n".join(defaults_table())
