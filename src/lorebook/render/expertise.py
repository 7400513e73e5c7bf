"""Human output of the expertise commands (pure functions; JSON is the stable contract)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .table import Row, columns
from .table import table as render_table


def classification(found: Mapping[str, Any]) -> str:
    scores = found["scores"]
    ranked = sorted(scores, key=lambda d: -scores[d])
    lines = [found["domain"], ""]
    rows: list[Row] = []
    for domain in ranked:
        hits = ", ".join(found["matched"].get(domain, []))
        rows.append(("", domain, str(scores[domain]), f"({hits})" if hits else ""))
    return "\n".join(lines + columns(None, rows, right=(2,)))


def update(result: dict[str, Any], verb: str) -> str:
    """One update (learn, validate, improve): what changed and the commit."""
    n = result["changes_count"]
    head = f"{result['path']}: {verb}, no changes" if n == 0 else f"{result['path']}: {n} change"
    if n > 1:
        head += "s"
    lines = [head]
    lines += columns(None, [("", c["type"], c["summary"]) for c in result["changes"]])
    if result.get("committed"):
        lines.append(f"  committed {result['committed'][:12]}")
    return "\n".join(lines)


def table(rows: list[dict[str, Any]]) -> str:
    body: list[Row] = []
    for row in rows:
        if not row["exists"]:
            body.append((row["domain"], "-", "(no file yet)", "", "", ""))
            continue
        entries = row["entries"]
        body.append((
            row["domain"], row["lines"], entries["core_files"], entries["learned_from_failures"],
            entries["effective_patterns"], row["last_validated"] or "-",
        ))  # fmt: skip
    headers = ("DOMAIN", "LINES", "FILES", "LESSONS", "PATTERNS", "LAST VALIDATED")
    return render_table(headers, body, right=(1, 2, 3, 4))


def history(entries: Sequence[Mapping[str, Any]]) -> str:
    if not entries:
        return "no commits touch this file yet"
    lines = []
    for entry in entries:
        lines.append(
            f"{entry['short']}  {entry['date'][:19]}  {entry['author']}  {entry['subject']}"
        )
        lines += [f"    - {change}" for change in entry["changes"]]
    return "\n".join(lines)


def validated(results: list[dict[str, Any]]) -> str:
    """`lore expertise validate`: each domain's update, or that it has no file yet."""
    return "\n".join(
        f"{r['path']}: no file yet" if r.get("status") == "no_expertise" else update(r, "valid")
        for r in results
    )
