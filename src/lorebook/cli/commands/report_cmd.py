"""The bodies of `lore report daily`, `lore report weekly` and `lore report kpis` (their table
entries are in `queryspec`, beside `lore report`'s own)."""

from __future__ import annotations

from typing import Any

from ... import Lorebook
from ...render.maintenance import report_written
from ..output import to_json


def daily(book: Lorebook, values: dict[str, Any]) -> str:
    result = book.write_report(
        "daily", when=values["day"], project=values["project"], agent=values["agent"]
    )
    return to_json(result) if values["as_json"] else report_written(result)


def weekly(book: Lorebook, values: dict[str, Any]) -> str:
    result = book.write_report(
        "weekly", when=values["week"], project=values["project"], agent=values["agent"]
    )
    return to_json(result) if values["as_json"] else report_written(result)


def kpis(book: Lorebook, values: dict[str, Any]) -> str:
    from ...render.kpis import kpis_text

    data = book.kpis(days=values["days"])
    return to_json(data) if values["as_json"] else kpis_text(data)
