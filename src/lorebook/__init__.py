"""lorebook: git-native, file-based memory for coding agents.

`from lorebook import Lorebook` is the library API; importing the package loads only the
standard library and lorebook's own light modules.
"""

from __future__ import annotations

from .errors import LoreError

TYPE_CHECKING = False  # importing typing costs milliseconds on the append path
if TYPE_CHECKING:
    from typing import Any

    from .book import Lorebook, Session

__all__ = ["LoreError", "Lorebook", "Session"]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    if name in ("Lorebook", "Session"):
        from . import book

        return getattr(book, name)
    raise AttributeError(f"module 'lorebook' has no attribute {name!r}")
