"""Human text for search results (pure functions; JSON is the contract, this is for people).

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..redact.sanitize import clip


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{round(value * 100)}%"


def explain_line(result: Mapping[str, Any]) -> str:
    """`lore search --explain`: the score as the sum of its parts, with what each part is of."""
    parts = result.get("explain")
    if not parts:
        return "   Explain: not available"
    dense = result.get("semantic_score")
    dense_sim = "none" if dense is None else f"{dense:.2f}"
    stale = "" if parts["stale_factor"] == 1 else f" · stale x{parts['stale_factor']:.2f}"
    return (
        f"   Explain: keyword {parts['keyword']:.3f} (similarity {result['keyword_score']:.2f})"
        f" + dense {parts['dense']:.3f} (similarity {dense_sim})"
        f" + boost {parts['boost']:.3f} (success {parts['success']:.2f}, recency "
        f"{parts['recency']:.2f}, specificity {parts['specificity']:.2f}) = score "
        f"{parts['score']:.3f} · relevance {parts['relevance']:.2f}{stale}"
    )


def search_text(query: str, results: Sequence[Mapping[str, Any]], explain: bool = False) -> str:
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
        if explain:
            lines.append(explain_line(r))
        lines.append(f"   {r['id']}  ({r['path']})")
        lines.append("")
    return "\n".join(lines).rstrip()


def relative_scores(scores: Sequence[float | None]) -> list[float | None]:
    """Each ranking score as a share of the best one (0..1): monotone in the ranked order,
    unlike the similarity, so a list shown best first reads as sorted. None stays None."""
    known = [s for s in scores if s is not None]
    top = max(known, default=0.0)
    return [None if s is None else (s / top if top > 0 else 0.0) for s in scores]
