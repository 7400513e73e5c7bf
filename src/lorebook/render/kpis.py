"""`lore report kpis` for people: each success metric, its counts, target and definition."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..log.kpis import format_value, fraction, verdict
from .table import columns


def kpis_text(data: Mapping[str, Any]) -> str:
    """A table of the figures (value, numerator / denominator, target, met), then what each
    one counts; "n/a" where the log cannot tell."""
    w = data["window"]
    out = [f"Success metrics {w['since'][:16]} .. {w['until'][:16]} UTC (from the action log)", ""]
    rows = [
        (k["name"], format_value(k), fraction(k), k["target"], verdict(k)) for k in data["kpis"]
    ]
    out += columns(("METRIC", "VALUE", "COUNTED", "TARGET", "STATUS"), rows, right=(1,))
    out += ["", "Definitions:"]
    out += [f"  {k['name']}: {k['definition']}" for k in data["kpis"]]
    return "\n".join(out)
