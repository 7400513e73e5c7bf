"""Human output of the expertise commands (pure functions; JSON is the stable contract)."""

from __future__ import annotations

from typing import Any


def classification(found: dict[str, Any]) -> str:
    scores = found["scores"]
    ranked = sorted(scores, key=lambda d: -scores[d])
    lines = [found["domain"], ""]
    for domain in ranked:
        hits = ", ".join(found["matched"].get(domain, []))
        lines.append(f"  {domain:<12} {scores[domain]:>3}" + (f"  ({hits})" if hits else ""))
    return "\n".join(lines)


def update(result: dict[str, Any], verb: str) -> str:
    """One update (learn, validate, improve): what changed and the commit."""
    n = result["changes_count"]
    head = f"{result['path']}: {verb}, no changes" if n == 0 else f"{result['path']}: {n} change"
    if n > 1:
        head += "s"
    lines = [head]
    lines += [f"  {c['type']:<22} {c['summary']}" for c in result["changes"]]
    if result.get("committed"):
        lines.append(f"  committed {result['committed'][:12]}")
    return "\n".join(lines)


def table(rows: list[dict[str, Any]]) -> str:
    lines = [
        f"{'DOMAIN':<12} {'LINES':>5}  {'FILES':>5} {'LESSONS':>7} {'PATTERNS':>8}  LAST VALIDATED"
    ]
    for row in rows:
        if not row["exists"]:
            lines.append(f"{row['domain']:<12} {'-':>5}  (no file yet)")
            continue
        entries = row["entries"]
        lines.append(
            f"{row['domain']:<12} {row['lines']:>5}  {entries['core_files']:>5} "
            f"{entries['learned_from_failures']:>7} {entries['effective_patterns']:>8}  "
            f"{row['last_validated'] or '-'}"
        )
    return "\n".join(lines)


def history(entries: list[dict[str, Any]]) -> str:
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
