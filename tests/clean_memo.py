"""Helpers for the tests of the catalog's memo of shards verified clean: trust new shards at
once, and count the records a module hands to the redactor."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from lorebook.log import catalog_read


def trust_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Shards written by the test are remembered without waiting out the racy-stat window."""
    monkeypatch.setattr(catalog_read, "settled", lambda identity, now_ns: True)


def count_redactions(monkeypatch: pytest.MonkeyPatch, module: Any) -> list[int]:
    """How many records `module` hands to its `redacted` (a one-item list, counted live)."""
    calls = [0]
    real = module.redacted

    def counted(sanitizer: Any, records: Any) -> Iterator[dict[str, Any]]:
        for record in records:
            calls[0] += 1
            yield from real(sanitizer, (record,))

    monkeypatch.setattr(module, "redacted", counted)
    return calls
