"""`preflight`: what the team already learned about a task, as a block to paste into a prompt.

Every piece of text is redacted again with the store's sanitizer before it is returned: a
learning may predate a redaction rule, and the block goes straight into a model's context.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from ..framing import frame_data
from .rank import Filters

if TYPE_CHECKING:
    from ..contracts.knowledge import (
        BriefExpertise,
        BriefLearning,
        PreflightBrief,
        PreflightPattern,
    )
    from ..redact.sanitize import Sanitizer
    from .engine import SearchIndex
    from .result import SearchResult, SearchResults

PHASES = ("plan", "implement", "deploy")
_SEVERITY = {"high": 0, "medium": 1, "low": 2}
_DEPLOY_WORDS = {"deploy", "deployment", "release", "rollout", "infra", "ops"}
# (pattern id, its documented solutions) -> the solutions best first, each with its own
# `times_applied`, `times_successful`, `success_rate` (see knowledge.stats.rank_solutions)
RankSolutions = Callable[[str, list[dict[str, Any]]], list[dict[str, Any]]]
# (task, categories of the learnings found) -> [{"domain": ..., "prompt": Markdown}]
ExpertiseFor = Callable[[str, list[str]], list[dict[str, Any]]]


def _is_deployment(result: SearchResult) -> bool:
    doc = result.doc
    labels = {str(doc.get("category") or "").lower(), *(t.lower() for t in doc.get("tags") or [])}
    return bool(labels & _DEPLOY_WORDS)


def find_learnings(
    index: SearchIndex, task: str, phase: str, limit: int, mode: str = "hybrid"
) -> SearchResults:
    """The learnings for `task`; for deploy, deployment learnings first, high severity first."""
    if phase not in PHASES:
        raise UsageError("phase {!r} is not one of: " + ", ".join(PHASES), phase)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise UsageError("limit must be a positive number, not {}", limit)
    reviewed = Filters(status="published")  # drafts await review: not for an agent's prompt yet
    if phase != "deploy":
        return index.search(task, mode=mode, limit=limit, filters=reviewed)
    candidates = index.search(
        f"{task} deployment", mode=mode, limit=max(limit * 4, 20), filters=reviewed
    )
    candidates.sort(
        key=lambda r: (
            not _is_deployment(r),
            _SEVERITY.get(str(r.doc.get("severity") or "").lower(), 3),
            -r.score,
        )
    )
    return candidates.like(candidates[:limit])


def _unranked(_pattern: str, solutions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Without figures: the documented order, every solution unproven."""
    return [
        {
            "id": s.get("id"),
            "text": s.get("text") or "",
            "times_applied": 0,
            "times_successful": 0,
            "success_rate": None,
        }
        for s in solutions
    ]


def solution_label(solution: dict[str, Any]) -> str:
    """A solution's own evidence: "2/2 succeeded, 100%", or "unproven" with none."""
    applied = solution["times_applied"]
    if not applied:
        return "unproven"
    rate = round(solution["times_successful"] / applied * 100)
    return f"{solution['times_successful']}/{applied} succeeded, {rate}%"


def build_preflight(
    index: SearchIndex,
    sanitizer: Sanitizer,
    expertise: ExpertiseFor,
    task: str,
    *,
    phase: str = "plan",
    limit: int = 5,
    mode: str = "hybrid",
    rank_solutions: RankSolutions = _unranked,
) -> PreflightBrief:
    """The preflight brief: learnings, patterns, prevention checklist, expertise, and `text`.
    A pattern's solutions come best first from `rank_solutions` (by their own outcomes);
    `mode` is the search's (keyword: no model, no vector store)."""
    results = find_learnings(index, task, phase, limit, mode)

    def clean(text: str) -> str:
        return sanitizer.redact_text(" ".join(str(text).split()))[0]

    learnings: list[BriefLearning] = []
    patterns: list[PreflightPattern] = []
    prevention: list[str] = []
    for r in results:
        item = r.to_dict()
        learnings.append(
            {
                "id": r.id,
                "title": clean(r.title),
                "takeaway": clean(item["takeaway"]),
                "category": item["category"],
                "severity": item["severity"],
                "score": item["score"],
                "applications": r.applications,
                "success_rate": r.success_rate,
                "recommendation": r.recommendation,
                "stale": item["stale"],
            }
        )
        solutions = r.doc.get("solutions") or []
        if r.doc.get("kind") == "pattern" and solutions:
            ranked = rank_solutions(r.id, list(solutions))
            for s in ranked:
                s["text"] = clean(s["text"])
            patterns.append(
                {
                    "id": r.id,
                    "title": clean(r.title),
                    "best_solution": ranked[0]["text"],
                    "success_rate": ranked[0]["success_rate"],
                    "solutions": ranked,
                }
            )
        for step in r.doc.get("prevention") or []:
            text = clean(step)
            if text and text not in prevention:
                prevention.append(text)
    categories = [str(r.doc.get("category") or "") for r in results]
    domains: list[BriefExpertise] = [
        {"domain": d["domain"], "prompt": sanitizer.redact_text(d["prompt"])[0].strip()}
        for d in expertise(task, [c for c in categories if c])
    ]
    brief: PreflightBrief = {
        "task": clean(task),
        "phase": phase,
        "learnings": learnings,
        "patterns": patterns,
        "prevention": prevention,
        "expertise": domains,
        "warnings": list(results.warnings),
        "degraded": results.degraded,
        "text": "",
    }
    brief["text"] = preflight_text(brief)
    return brief


def preflight_text(brief: Mapping[str, Any]) -> str:
    """The block an agent pastes into its prompt: what was found, framed as quoted data
    (`frame_data`), then lorebook's own closing line outside the frame."""
    lines = [f"Task ({brief['phase']}): {brief['task']}", "", "RELEVANT PAST LEARNINGS:"]
    if not brief["learnings"]:
        lines.append("- none found")
    for item in brief["learnings"]:
        stale = " [stale: verify against the current code]" if item["stale"] else ""
        takeaway = f": {item['takeaway']}" if item["takeaway"] else ""
        lines.append(f"- {item['title']}{takeaway}{stale}")
        lines.append(f"  ({item['id']}; {item['recommendation']})")
    if brief["patterns"]:
        lines += ["", "MATCHING PATTERNS:"]
        for p in brief["patterns"]:
            best, *others = p["solutions"]
            lines.append(f"- {p['title']} — best solution: {best['text']} ({solution_label(best)})")
            lines += [f"  also {s['id']}: {s['text']} ({solution_label(s)})" for s in others]
    if brief["prevention"]:
        lines += ["", "PREVENTION CHECKLIST:"]
        lines += [f"- [ ] {step}" for step in brief["prevention"]]
    for d in brief["expertise"]:
        body = [line for line in d["prompt"].splitlines() if not line.startswith("## ")]
        lines += ["", f"DOMAIN EXPERTISE ({d['domain']}):", *[b for b in body if b.strip()]]
    plan = "Based on these learnings, plan the work so that it avoids past mistakes."
    return frame_data("\n".join(lines)) + "\n" + plan
