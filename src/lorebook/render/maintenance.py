"""One-line results of the store's maintenance commands: check, index, export, report files
(pure, from the JSON shapes the API returns)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def check_text(report: Mapping[str, Any]) -> str:
    """`lore check`: every finding, then what was checked and the verdict."""
    findings = report["findings"]
    state = "ok" if report["ok"] else f"{len(findings)} finding(s)"
    lines = [
        f"{f['path']}:{f['line']}: {f['reason']}" if f["line"] else f"{f['path']}: {f['reason']}"
        for f in findings
    ]
    if report.get("fixed"):
        lines.append(f"dropped {report['fixed']} repeated line(s) from the shards")
    if report.get("repeated"):
        lines.append(
            f"info: {report['repeated']} repeated line(s) (the same record again, e.g. after a "
            "union merge; lore check --fix or lore sync drops them)"
        )
    lines.append(
        f"checked {report['records']} records in {report['shards']} shards, "
        f"{report['learnings']} learnings, {report['expertise']} expertise files: {state}"
    )
    return "\n".join(lines)


def index_text(report: dict[str, Any], model: str | None) -> str:
    """`lore index`: added / updated / removed / unchanged (and skipped) files."""
    skipped = f", {len(report['skipped'])} skipped" if report["skipped"] else ""
    return (
        f"{'Rebuilt' if report['rebuilt'] else 'Updated'} the index "
        f"({model or 'keywords only'}): "
        f"{report['added']} added, {report['updated']} updated, "
        f"{report['removed']} removed, {report['unchanged']} unchanged{skipped}"
    )


def exported(result: dict[str, Any]) -> str:
    """`lore export`: how many records went where, and how many values were redacted."""
    return (
        f"exported {result['record_count']} record(s) to {result['path']} "
        f"(manifest {result['manifest']}; {result['redactions']['values']} value(s) redacted)"
    )


def report_written(result: dict[str, Any]) -> str:
    """`lore report daily|weekly`: the file written (or left as it was)."""
    verb = "unchanged" if result["unchanged"] else "wrote"
    return f"{verb} {result['path']} ({result['total_actions']} actions)"
