"""What every command does around long work: a status line on a watched terminal, and the note
when a query scanned a long log because no catalog exists yet. Standard library only: the fast
paths (`lore actions`, `lore report`, `lore search`, `lore preflight`) and every other command
share it.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

from contextlib import contextmanager

TYPE_CHECKING = False  # typing costs milliseconds on cold paths; mypy still sees it
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any, TextIO


@contextmanager
def status_line(book: Any, as_json: bool, stream: TextIO | None = None) -> Iterator[None]:
    """On a terminal, and without --json, long work (a model export, an index or catalog build)
    shows a status line on stderr (its drawing code is imported only then: a program reading a
    pipe pays nothing)."""
    import sys

    out = sys.stderr if stream is None else stream
    try:
        watched = not as_json and out.isatty()
    except (AttributeError, ValueError):  # no stderr, or a closed one
        watched = False
    line = None
    if watched:
        from .status import for_terminal

        line = for_terminal(as_json, stream=out)
        if line is not None:
            book.on_progress(line)
    try:
        yield
    finally:
        if line is not None:
            line.close()


def catalog_hint(book: Any, stream: TextIO | None = None) -> None:
    """Say once on stderr when a query scanned a long log because no catalog exists yet."""
    reason = book.catalog_hint  # only when the command used the catalog at all
    if reason:
        import sys

        from ..render.catalog import catalog_note

        print(catalog_note(reason), file=stream or sys.stderr)


def run_with_book(body: Any, values: dict[str, Any], root: str | None) -> Any:
    """`body(book, values)` with the store opened for the user: its subscribers installed
    (automatic drafts, RCA lessons, learning on session end: the CLI acts for the user, so what
    they log has its usual effects), long work on a status line, the catalog note after."""
    from .. import Lorebook

    book = Lorebook.open(root)
    book.install_subscribers()
    with status_line(book, bool(values.get("as_json"))):
        result = body(book, values)
    catalog_hint(book)
    return result
