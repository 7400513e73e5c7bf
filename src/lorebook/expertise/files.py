"""Round-trip I/O of one expertise file with ruamel.yaml: comments, order and quoting survive.

Reading refuses, with one line naming the file (and line where there is one): invalid YAML,
non-UTF-8 bytes, a file that is not a mapping, list keys that are not lists, and alias bombs
(the aliases' expanded size is counted without expanding them). Writing redacts every string
scalar and comment through the store's sanitizer and replaces the file atomically.

ruamel attaches a comment that sits between a list and the next key to the list's last item, so
a plain append would put the new item under that comment. `seq_edit` moves such trailing
comments to whatever item ends the list after the edit.
"""

from __future__ import annotations

import copy
import io
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import LoreError
from ..redact.sanitize import Sanitizer
from ..store import atomic_write
from .schema import KEYS, LIST_KEYS

MAX_FILE_BYTES = 1 << 20  # ~1,000 lines never come close
MAX_EXPANDED_NODES = 100_000

HEADER = """\
# Expertise for the {domain} domain: what an agent should know before working on it.
# Maintained by `lore expertise` (learn, validate, improve); edit freely, your comments and
# key order are kept.
"""


@dataclass
class ExpertiseDoc:
    """One loaded file: the round-trip tree, its path, the text it was read from."""

    domain: str
    path: Path
    rel: str
    data: Any  # ruamel CommentedMap
    original: bytes | None  # None when the file did not exist
    seq_indent: int = 4
    seq_offset: int = 2
    map_indent: int = 2
    pending_tail: Any = None  # the file's closing comment while keys are being added

    def get_list(self, key: str) -> Any:
        """The list under `key`, created (in block style) when missing or empty-null."""
        from ruamel.yaml.comments import CommentedSeq

        value = self.data.get(key)
        if value is None:
            value = CommentedSeq()
            if key in self.data:
                self.data[key] = value
            else:
                self.add_key(key, value)
        if not len(value):
            value.fa.set_block_style()  # `[]` in the file: new items go on their own lines
        return value

    def add_key(self, key: str, value: Any) -> None:
        """Add a top-level key at the end; the file's closing comment stays last."""
        if self.pending_tail is None:
            self.pending_tail = detach_tail(self.data)
        self.data[key] = value


def _yaml(seq_indent: int = 4, seq_offset: int = 2, map_indent: int = 2) -> Any:
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt", pure=True)
    yaml.preserve_quotes = True
    yaml.width = 4096  # never re-wrap a person's long lines
    yaml.indent(mapping=map_indent, sequence=seq_indent, offset=seq_offset)
    return yaml


_NESTED_KEY = re.compile(r"^( +)[^\s#\-'\"][^:]*:(\s|$)")


def _guess_map_indent(text: str) -> int:
    """The indent of the first mapping nested under a top-level key (2 when there is none)."""
    previous = ""
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _NESTED_KEY.match(line)
        if match and previous[:1] not in (" ", "") and previous.rstrip().endswith(":"):
            return len(match.group(1))
        previous = line
    return 2


def _guess_indent(text: str) -> tuple[int, int]:
    """The file's block-sequence style: (indent of item content, indent of the dash)."""
    for line in text.splitlines():
        stripped = line.lstrip(" ")
        if stripped.startswith("- "):
            dash = len(line) - len(stripped)
            after = stripped[1:]
            content = dash + 1 + len(after) - len(after.lstrip(" "))
            return max(content, dash + 2), dash
    return 4, 2


def expanded_size(value: Any, limit: int = MAX_EXPANDED_NODES) -> int:
    """How many nodes `value` would have with every alias expanded (stops counting at `limit`)."""
    memo: dict[int, int] = {}

    def size(node: Any, depth: int) -> int:
        if depth > 100:
            return limit + 1
        key = id(node)
        if key in memo:
            return memo[key]
        total = 1
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, list):
            children = node
        else:
            return 1
        memo[key] = limit + 1  # a cycle counts as unbounded
        for child in children:
            total += size(child, depth + 1)
            if total > limit:
                break
        memo[key] = total
        return total

    return size(value, 0)


def parse(text: str, rel: str) -> Any:
    """Parse text into a round-trip tree, refusing what `read` refuses (see the module doc)."""
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    try:
        data = _yaml().load(text)  # indentation matters for dumping only
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{rel}:{mark.line + 1}" if mark is not None else rel
        problem = (exc.problem or exc.context or "not YAML").replace("\n", " ")
        raise LoreError("{}: invalid YAML: {}", where, problem) from None
    except (YAMLError, ValueError, RecursionError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise LoreError("{}: invalid YAML: {}", rel, first) from None
    if data is None:
        return None
    if not isinstance(data, dict):
        kind = "a list" if isinstance(data, list) else f"a {type(data).__name__}"
        raise LoreError(
            "{}:1: an expertise file is a mapping of keys ({}, …), not {}",
            rel,
            ", ".join(KEYS[:4]),
            kind,
        )
    if expanded_size(data) > MAX_EXPANDED_NODES:
        raise LoreError(
            "{}: refused: its YAML aliases expand to more than "
            "{} nodes (an alias bomb?); nothing was changed",
            rel,
            MAX_EXPANDED_NODES,
        )
    for key in LIST_KEYS:
        value = data.get(key)
        if value is not None and not isinstance(value, list):
            line = _key_line(data, key)
            raise LoreError(
                "{}:{}: '{}' must be a list, not {}", rel, line, key, type(value).__name__
            )
    return data


def _key_line(data: Any, key: str) -> int:
    try:
        return int(data.lc.key(key)[0]) + 1
    except (AttributeError, KeyError, TypeError):
        return 1


def read(path: Path, rel: str, domain: str) -> ExpertiseDoc:
    """Load `path`; a missing file gives a new document with the header comment and all keys."""
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise LoreError("{}: larger than {} bytes; not an expertise file", rel, MAX_FILE_BYTES)
        raw = path.read_bytes()
    except FileNotFoundError:
        return new_doc(path, rel, domain)
    except IsADirectoryError:
        raise LoreError("{}: is a directory, not an expertise file", rel) from None
    except OSError as exc:
        raise LoreError("{}: cannot be read: {}", rel, exc.strerror or exc) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LoreError("{}: invalid YAML: not UTF-8 at byte {}", rel, exc.start + 1) from None
    data = parse(text, rel)
    indent, offset = _guess_indent(text)
    if data is None:  # an empty file: start it properly
        doc = new_doc(path, rel, domain)
        doc.original = raw
        return doc
    return ExpertiseDoc(domain, path, rel, data, raw, indent, offset, _guess_map_indent(text))


def new_doc(path: Path, rel: str, domain: str) -> ExpertiseDoc:
    lines = [HEADER.format(domain=domain), f"domain: {domain}\n", "overview: ''\n"]
    lines += [f"{key}: []\n" for key in LIST_KEYS]
    lines.append("last_validated:\n")
    data = parse("".join(lines), rel)
    return ExpertiseDoc(domain, path, rel, data, None)


def dump(doc: ExpertiseDoc) -> str:
    if doc.pending_tail is not None:
        attach_tail(doc.data, doc.pending_tail)
        doc.pending_tail = None
    out = io.StringIO()
    _yaml(doc.seq_indent, doc.seq_offset, doc.map_indent).dump(doc.data, out)
    return out.getvalue()


def redact_tree(node: Any, sanitizer: Sanitizer) -> int:
    """Redact every string scalar and comment in place, keeping each scalar's style."""
    count = 0
    redact = sanitizer.redact_text
    if isinstance(node, dict):
        items: Iterator[tuple[Any, Any]] = iter(list(node.items()))
    elif isinstance(node, list):
        items = iter(list(enumerate(node)))
    else:
        return 0
    for key, value in items:
        if isinstance(value, str):
            clean, n = redact(value)
            if n:
                count += n
                node[key] = _same_style(value, clean)
        else:
            count += redact_tree(value, sanitizer)
    for token in _comment_tokens(node):
        clean, n = redact(token.value)
        if n:
            count += n
            token.value = clean
    return count


def _same_style(old: str, new: str) -> Any:
    from ruamel.yaml.scalarstring import ScalarString

    kind = type(old)
    if isinstance(old, ScalarString):
        try:
            return kind(new)
        except TypeError:
            return new
    return new


def _comment_tokens(node: Any) -> Iterator[Any]:
    ca = getattr(node, "ca", None)
    if ca is None:
        return
    stack: list[Any] = [ca.comment, *ca.items.values()]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(item)
        elif item is not None and hasattr(item, "value") and isinstance(item.value, str):
            yield item


def write(doc: ExpertiseDoc, sanitizer: Sanitizer) -> str:
    """Redact, dump and atomically replace the file; returns the text written."""
    redact_tree(doc.data, sanitizer)
    text = dump(doc)
    if doc.original is None:
        text = text if text.startswith("#") else HEADER.format(domain=doc.domain) + text
    atomic_write(doc.path, text.encode("utf-8"))
    return text


def line_count(doc: ExpertiseDoc) -> int:
    return dump(doc).count("\n")


# -- editing lists without moving people's comments ---------------------------------------------
def _tail_slot(node: Any, want_token: bool) -> tuple[dict[Any, Any], Any, int] | None:
    """Where the comment after `node`'s last line lives: the deepest last item's slot.

    With `want_token`, only a slot that holds a comment counts (None when there is none)."""
    if not isinstance(node, dict | list) or not len(node):
        return None
    if isinstance(node, list):
        key: Any = len(node) - 1
        slot = 0
    else:
        key = list(node)[-1]
        slot = 2
    found = _tail_slot(node[key], want_token)
    if found is not None:
        return found
    items = node.ca.items  # type: ignore[union-attr]
    entry = items.get(key)
    if want_token and (entry is None or len(entry) <= slot or entry[slot] is None):
        return None
    return items, key, slot


def detach_tail(node: Any) -> Any:
    """Cut the lines after the end-of-line comment of `node`'s last item; return them."""
    found = _tail_slot(node, want_token=True)
    if found is None:
        return None
    items, key, slot = found
    token = items[key][slot]
    value = token.value
    cut = value.find("\n")
    if cut < 0 or cut == len(value) - 1:
        return None
    first, rest = value[: cut + 1], value[cut + 1 :]
    moved = copy.copy(token)
    moved.reset()
    moved.value = "\n" + rest
    if first.strip():
        token.value = first
    else:
        items[key][slot] = None
        if not any(items[key]):
            del items[key]
    return moved


def attach_tail(node: Any, token: Any) -> None:
    if token is None:
        return
    found = _tail_slot(node, want_token=False)
    if found is None:
        return
    items, key, slot = found
    entry = items.setdefault(key, [None, None, None, None])
    while len(entry) <= slot:
        entry.append(None)
    entry[slot] = token


def seq_edit(seq: Any, edit: Callable[[Any], None]) -> None:
    """Apply `edit` to a list, keeping the comment that followed its last item at the end."""
    tail = detach_tail(seq)
    edit(seq)
    attach_tail(seq, tail)


def block(value: Any) -> Any:
    """A new entry as a round-trip node: mappings in block style, strings on one line (YAML
    folds line breaks like U+0085 into spaces, so they would not read back as written)."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if isinstance(value, dict):
        out = CommentedMap()
        for k, v in value.items():
            out[k] = block(v)
        return out
    if isinstance(value, list | tuple):
        seq = CommentedSeq([block(v) for v in value])
        seq.fa.set_flow_style()  # short lists of session ids read best inline
        return seq
    if isinstance(value, str):
        return " ".join(value.split())
    return value
