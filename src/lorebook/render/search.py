"""Human text for search results (pure functions; JSON is the contract, this is for people)."""

from __future__ import annotations

from typing import Any

from ..redact.sanitize import clip


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{round(value * 100)}%"


def search_text(query: str, results: list[dict[str, Any]]) -> str:
    if not results:
        return f'No learning matches "{query}".'
    lines = [f'{len(results)} learning(s) for "{query}":', ""]
    for n, r in enumerate(results, 1):
        flags = " [STALE]" if r.get("stale") else ""
        lines.append(f"{n}. {r['title']}{flags}")
        meta = " · ".join(
            str(x) for x in (r.get("kind"), r.get("category"), r.get("severity")) if x
        )
        lines.append(
            f"   {_pct(r['similarity'])} match · score {r['score']:.2f} · {meta} · "
            f"{r['applications']} application(s), success {_pct(r.get('success_rate'))}"
        )
        if r.get("takeaway"):
            takeaway = " ".join(str(r["takeaway"]).split())
            lines.append(f"   Takeaway: {clip(takeaway, 301)}")  # redacted as indexed
        lines.append(f"   Recommendation: {r['recommendation']}")
        lines.append(f"   {r['id']}  ({r['path']})")
        lines.append("")
    return "\n".join(lines).rstrip()
