"""Read a small YAML or JSON input document (an RCA report, a retrospective) safely.

Errors are one line naming the file and line. YAML is loaded with the safe loader and aliases
are refused outright: an input document never needs them, and refusing them rules out the
"billion laughs" expansion when the data is later walked.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from typing import Any

from ..errors import UsageError

MAX_BYTES = 1 << 20  # 1 MiB: an RCA report, a retrospective or a learning body is a few KB
_KINDS = {
    stat.S_IFDIR: "a directory",
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}


def _regular(mode: int, path: str) -> None:
    if not stat.S_ISREG(mode):
        kind = _KINDS.get(stat.S_IFMT(mode), "not a regular file")
        raise UsageError("{}: is {}, not a regular file; nothing was read", path, kind)


def _too_big(path: str) -> UsageError:
    return UsageError("{}: larger than 1 MiB ({} bytes); nothing was read", path, MAX_BYTES)


def read_bounded(path: str) -> bytes:
    """The bytes of FILE, which must be a regular file of at most `MAX_BYTES`: a FIFO, a device
    (`/dev/zero`) or a directory is refused before it is read (opened non-blocking, checked
    again on the open file), and the read itself stops at the cap."""
    try:
        _regular(os.stat(path).st_mode, path)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise UsageError("{}: cannot be read: {}", path, exc.strerror or exc) from None
    try:
        _regular(os.fstat(fd).st_mode, path)  # the file opened is the file checked
        os.set_blocking(fd, True)
        chunks, size = [], 0
        while size <= MAX_BYTES and (chunk := os.read(fd, MAX_BYTES + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise UsageError("{}: cannot be read: {}", path, exc.strerror or exc) from None
    finally:
        os.close(fd)
    if size > MAX_BYTES:
        raise _too_big(path)
    return b"".join(chunks)


def read_input(path: str) -> tuple[str, str]:
    """(text, source name) of FILE (`read_bounded`), or of stdin for `-` (also read only up
    to the cap)."""
    if path == "-":
        stream = getattr(sys.stdin, "buffer", None)
        if stream is None:  # a text-only stdin (a test's StringIO)
            raw = sys.stdin.read(MAX_BYTES + 1).encode("utf-8")
        else:
            raw = stream.read(MAX_BYTES + 1)
        path = "<stdin>"
    else:
        raw = read_bounded(path)
    if len(raw) > MAX_BYTES:
        raise _too_big(path)
    try:
        return raw.decode("utf-8"), path
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise UsageError("{}:{}: invalid UTF-8 at byte {}", path, line, exc.start + 1) from None


def load_json(text: str, source: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError("{}:{}: invalid JSON: {}", source, exc.lineno, exc.msg) from None


def load_yaml(text: str, source: str) -> Any:
    """Safe YAML without aliases; a syntax error names the line."""
    import yaml

    class _NoAliases(yaml.SafeLoader):
        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
                raise UsageError(
                    "{}:{}: YAML aliases (*name) are not accepted in input documents",
                    source,
                    mark.line + 1,
                )
            return super().compose_node(parent, index)

    try:
        return yaml.load(text, Loader=_NoAliases)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        last = max(1, len(text.splitlines()))  # an error at the end of the stream
        where = f"{source}:{min(mark.line + 1, last)}" if mark is not None else source
        raise UsageError("{}: invalid YAML: {}", where, exc.problem or exc.context) from None
    except yaml.YAMLError as exc:
        raise UsageError("{}: invalid YAML: {}", source, exc) from None
    except RecursionError:
        raise UsageError("{}: invalid YAML: nested too deeply", source) from None


def load_document(text: str, source: str) -> Any:
    """JSON when the file says so (`.json` or a leading `{`), else YAML (JSON is YAML too)."""
    if source.endswith(".json") or text.lstrip().startswith("{"):
        return load_json(text, source)
    return load_yaml(text, source)


def key_line(text: str, key: str) -> int:
    """The line a top-level-ish `key` appears on (for error messages), else 1."""
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip().lstrip("{,").strip()
        if stripped.startswith((f"{key}:", f'"{key}"', f"'{key}'")):
            return number
    return 1
