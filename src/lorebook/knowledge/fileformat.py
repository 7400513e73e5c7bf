"""Learning files on disk: split at the `---` lines, load (libyaml base loader), render.

Why a *base* loader: YAML 1.1 turns `title: no` into False, `2026-01-01` into a date and
`1.10` into 1.1. Free text must stay as written, so every scalar is loaded as a string and
only the typed fields (`created`, nulls) are converted, by the model. The base loader also
constructs no objects (no `!!python/...`), and aliases are refused (no alias bombs): learning
files have no use for them.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from ..errors import LoreError
from .model import KNOWN_KEYS, Learning

_BOUNDARY = re.compile(r"^-{3,}\s*$", re.MULTILINE)  # a line of three or more dashes
_NULLS = frozenset({"", "~", "null", "Null", "NULL"})
_LISTS = ("tags", "anchors", "supersedes", "prevention", "solutions")
_NULLABLE = ("category", "severity", "checksum")
_BaseLoader: type[Any] = getattr(yaml, "CBaseLoader", yaml.BaseLoader)
_ALIAS = re.compile(r"[*&][^\s,\[\]{}]")  # cheap prefilter: no `&x`/`*x`, no alias possible


class LearningFormatError(LoreError):
    """A learning file that cannot be read: `file:line: reason`. With `values`, `reason` is
    lorebook's template and they fill it (only they are redacted, as `LoreError` says)."""

    def __init__(self, where: str, line: int, reason: str, *values: object) -> None:
        if values:
            super().__init__("{}:{}: " + reason, where, line, *values)
        else:
            super().__init__("{}:{}: {}", where, line, reason)
        self.where = where
        self.line = line
        self.reason = reason.format(*values) if values else reason


class PlainStr(str):
    """A scalar that was written plain (unquoted): written back plain, as it was."""

    __slots__ = ()


class _Loader(_BaseLoader):  # type: ignore[misc]
    """yaml.load() with this loader gives what `_load_yaml` gives (used by benchmarks)."""

    def construct_scalar(self, node: Any) -> Any:
        value = super().construct_scalar(node)
        return PlainStr(value) if not node.style else value  # plain: None (or '' from libyaml)


_TAGS = {
    yaml.ScalarNode: "tag:yaml.org,2002:str",
    yaml.SequenceNode: "tag:yaml.org,2002:seq",
    yaml.MappingNode: "tag:yaml.org,2002:map",
}


class _Composer(_BaseLoader):  # type: ignore[misc]
    """The base loader's composer without its per-node resolver bookkeeping (a third of the
    parse time): every scalar is text here, so a node's tag only follows from its kind."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        return _TAGS[kind]

    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        pass

    def ascend_resolver(self) -> None:
        pass


class _KeyError(Exception):
    def __init__(self, node: yaml.Node, reason: str) -> None:
        self.node = node
        self.reason = reason


def _build(node: Any) -> Any:
    """Nodes -> str / list / dict: PyYAML's constructor does the same ~1.7x slower."""
    kind = type(node)
    if kind is yaml.ScalarNode:
        return node.value if node.style else PlainStr(node.value)  # plain: None or ''
    if kind is yaml.SequenceNode:
        return [_build(child) for child in node.value]
    out: dict[str, Any] = {}
    for key_node, value_node in node.value:
        if type(key_node) is not yaml.ScalarNode:
            raise _KeyError(key_node, "front matter keys must be plain text")
        if key_node.value in out:  # YAML forbids it; a silent "last one wins" hides edits
            raise _KeyError(key_node, f"duplicate key {key_node.value!r}")
        out[key_node.value] = _build(value_node)
    return out


def _key_line(fm: str, key: str, first_line: int) -> int:
    match = re.search(rf"^{re.escape(key)}\s*:", fm, re.MULTILINE)
    return first_line + fm.count("\n", 0, match.start()) if match else first_line


def _load_yaml(fm: str, where: str, first_line: int) -> Any:
    if _ALIAS.search(fm):
        try:
            for event in yaml.parse(fm, Loader=_BaseLoader):
                if isinstance(event, yaml.AliasEvent):
                    line = first_line + (event.start_mark.line if event.start_mark else 0)
                    raise LearningFormatError(
                        where, line, "YAML aliases are not allowed in front matter (alias bomb?)"
                    )
        except yaml.YAMLError:
            pass  # reported with its position by the load below
    try:
        loader = _Composer(fm)  # a base loader: strings, lists and dicts only
        try:
            node = loader.get_single_node()
        finally:
            loader.dispose()
        return None if node is None else _build(node)
    except _KeyError as exc:
        line = first_line + exc.node.start_mark.line
        raise LearningFormatError(where, line, exc.reason) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        offset = mark.line if mark else 0
        if mark and mark.index >= len(fm.rstrip()):  # ran off the end (an unclosed `[`)
            offset = fm.rstrip().count("\n")  # the last line that has anything on it
        line = first_line + offset
        reason = " ".join(str(exc.problem or exc.context or "invalid YAML").split())
        raise LearningFormatError(where, line, "invalid YAML front matter: {}", reason) from None
    except yaml.YAMLError as exc:
        reason = " ".join(str(exc).split())
        raise LearningFormatError(
            where, first_line, "invalid YAML front matter: {}", reason
        ) from exc


def _split(text: str) -> tuple[str, str]:
    """(front matter, the text after its closing line) of a file that starts with a boundary;
    ValueError when no second boundary closes it."""
    _, fm, content = _BOUNDARY.split(text, 2)
    return fm, content


def null(value: Any) -> Any:
    """None for the spellings of a YAML null (every scalar is read as text)."""
    return None if isinstance(value, str) and value.strip() in _NULLS else value


def _normalize(raw: dict[str, Any]) -> dict[str, Any]:
    """Strings from the base loader -> the model's shapes (nulls, empty lists)."""
    data = dict(raw)
    for key in _NULLABLE:
        if key in data:
            data[key] = null(data[key])
    for key in _LISTS:
        if key in data and null(data[key]) is None:
            data[key] = []
    if "source" in data:
        source = null(data["source"])
        if isinstance(source, dict):
            source = {k: null(v) for k, v in source.items()}
        data["source"] = source if source is not None else {}
    return data


def read_front_matter(text: str, where: str) -> tuple[dict[str, Any], str, str, int]:
    """The one front-matter reader, for the knowledge base and the search index alike:
    (mapping of strings, lists and dicts; the YAML text; the text after the closing `---`;
    the YAML's first line). Aliases, duplicate keys and non-text keys are refused with a
    LearningFormatError (file:line: reason) before anything is expanded."""
    text = text.removeprefix("\ufeff")
    start = _BOUNDARY.match(text)
    if start is None:
        raise LearningFormatError(where, 1, "no front matter: the file must start with '---'")
    try:
        fm, content = _split(text)
    except ValueError:
        raise LearningFormatError(where, 1, "front matter is not closed by a '---' line") from None
    first_line = text.count("\n", 0, start.end()) + 1
    raw = _load_yaml(fm, where, first_line)
    if not isinstance(raw, dict):
        line = first_line + fm[: len(fm) - len(fm.lstrip())].count("\n")
        raise LearningFormatError(where, line, "front matter must be a mapping of keys")
    return raw, fm, content, first_line


def parse_learning(text: str, path: Path | None = None, where: str | None = None) -> Learning:
    """Parse a learning file's text; LearningFormatError (file:line: reason) when invalid."""
    where = where or (str(path) if path else "<learning>")
    raw, fm, content, first_line = read_front_matter(text, where)
    extra = {k: v for k, v in raw.items() if k not in KNOWN_KEYS}
    data = _normalize({k: v for k, v in raw.items() if k in KNOWN_KEYS})
    body = content[1:] if content.startswith("\n") else content
    try:
        learning = Learning(**data, extra=extra, body=body.lstrip("\n"), path=path)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = [str(part) for part in err["loc"]]
        key = loc[0] if loc else "id"
        field = ".".join(loc) or "front matter"
        message = err["msg"].removeprefix("Value error, ")
        if err["type"] == "missing":
            message = "required key is missing"
        line = _key_line(fm, key, first_line) if err["type"] != "missing" else first_line
        raise LearningFormatError(where, line, "{}: {}", field, message) from None
    if path is not None and path.stem != learning.id:
        raise LearningFormatError(
            where,
            _key_line(fm, "id", first_line),
            "id {!r} does not match the file name {!r}",
            learning.id,
            path.name,
        )
    return learning


def read_learning(path: Path, where: str | None = None) -> Learning:
    """Read and parse one file (an unreadable file is a LearningFormatError at line 1)."""
    where = where or str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise LearningFormatError(where, 1, "not UTF-8 text ({})", exc.reason) from None
    except OSError as exc:
        raise LearningFormatError(where, 1, "cannot read: {}", exc.strerror or exc) from None
    return parse_learning(text, path, where)


# -- writing ----------------------------------------------------------------------------
class _Flow(list):  # type: ignore[type-arg]
    """A list written in flow style: `tags: [a, b]`."""


class _FlowMap(dict):  # type: ignore[type-arg]
    """A mapping written in flow style: `source: {epic: e-1, issue: null}`."""


class _Dumper(yaml.SafeDumper):
    def increase_indent(self, flow: bool = False, indentless: bool = False) -> Any:
        return super().increase_indent(flow, False)  # `  - item` under a key, as people write


def _plain(dumper: Any, value: PlainStr) -> Any:
    # resolve the tag the way a reader would, so the scalar is emitted plain again
    tag = dumper.resolve(yaml.ScalarNode, str(value), (True, False))
    return dumper.represent_scalar(tag, str(value))


def _str(dumper: Any, value: str) -> Any:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(PlainStr, _plain)
_Dumper.add_representer(str, _str)
_Dumper.add_representer(
    _Flow, lambda d, v: d.represent_sequence("tag:yaml.org,2002:seq", v, flow_style=True)
)
_Dumper.add_representer(
    _FlowMap, lambda d, v: d.represent_mapping("tag:yaml.org,2002:map", v, flow_style=True)
)
_FLOW_LISTS = ("tags", "anchors", "supersedes")


def _styled(data: dict[str, Any]) -> dict[str, Any]:
    out = dict(data)
    for key in _FLOW_LISTS:
        if isinstance(out.get(key), list):
            out[key] = _Flow(out[key])
    if isinstance(out.get("source"), dict) and all(
        not isinstance(v, (dict, list)) for v in out["source"].values()
    ):
        out["source"] = _FlowMap(out["source"])
    if isinstance(out.get("prevention"), list) and not out["prevention"]:
        out["prevention"] = _Flow()
    return out


def render_learning(learning: Learning) -> str:
    """The file text: `---`, the front matter (known keys first), `---`, the body."""
    fm = yaml.dump(
        _styled(learning.front_matter()),
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=4096,
    )
    body = learning.body
    if body and not body.endswith("\n"):
        body += "\n"
    return f"---\n{fm}---\n{body}"
