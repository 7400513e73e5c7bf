"""Read a shard from its end, line by line, in bounded memory.

`lore resume` needs the newest records of a session, however long its shard grew: reading the
whole file forwards made a 2 GB shard cost 2.6 GB of memory. Lines are yielded newest first;
a line longer than `MAX_LINE_BYTES` is yielded as `None` (never held in memory) so the caller
can skip it with a warning like every forward reader does.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from .reader import MAX_LINE_BYTES

TYPE_CHECKING = False  # typing costs milliseconds on cold paths; mypy still sees it
if TYPE_CHECKING:
    from typing import BinaryIO

_BLOCK = 1 << 16


def lines_backwards(
    handle: BinaryIO, size: int, *, block: int = _BLOCK, max_line: int = MAX_LINE_BYTES
) -> Iterator[tuple[int, bytes | None]]:
    """(offset of the line's first byte, its bytes without the newline or None when oversize).

    Blank lines are skipped. A torn last line (no final newline) is yielded like any other.
    """
    pos = size
    tail = b""  # start of the line that continues right of `pos` (left part not read yet)
    oversize = False
    while pos > 0:
        start = max(0, pos - block)
        handle.seek(start)
        chunk = handle.read(pos - start)
        pos = start
        end = len(chunk)
        cut = chunk.rfind(b"\n", 0, end)
        if cut < 0:
            if not oversize:
                tail = chunk + tail
                if len(tail) > max_line:
                    oversize, tail = True, b""
            continue
        first = True
        while cut >= 0:
            piece = chunk[cut + 1 : end]
            if first:
                line = None if oversize or len(piece) + len(tail) > max_line else piece + tail
                empty = not oversize and not piece and not tail
                oversize, tail, first = False, b"", False
            else:
                line = None if len(piece) > max_line else piece
                empty = not piece
            if not empty and (line is None or line.strip()):
                yield pos + cut + 1, line
            end = cut
            cut = chunk.rfind(b"\n", 0, end)
        tail = chunk[:end]
        if len(tail) > max_line:
            oversize, tail = True, b""
    if oversize:
        yield 0, None
    elif tail.strip():
        yield 0, tail


def line_number(handle: BinaryIO, offset: int, *, block: int = 1 << 20) -> int:
    """The 1-based line number of the line starting at `offset` (counts newlines before it)."""
    handle.seek(0)
    count, left = 0, offset
    while left > 0:
        data = handle.read(min(block, left))
        if not data:
            break
        count += data.count(b"\n")
        left -= len(data)
    return count + 1


def file_size(handle: BinaryIO) -> int:
    return handle.seek(0, os.SEEK_END)
