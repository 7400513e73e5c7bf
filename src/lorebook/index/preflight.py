"""`preflight`: what the team already learned about a task, as a block to paste into a prompt.

Every piece of text is redacted again with the store's sanitizer before it is returned: a
learning may predate a redaction rule, and the block goes straight into a model's context.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from .rank import Filters
from .synonyms import words

if TYPE_CHECKING:
    from ..log.sanitize import Sanitizer
    from .engine import SearchIndex, SearchResult

PHASES = ("plan", "implement", "deploy")
_SEVERITY = {"high": 0, "medium": 1, "low": 2}
_DEPLOY_WORDS = {"deploy", "deployment", "release", "rollout", "infra", "ops"}
EXPERTISE_ITEMS = 5


def _is_deployment(result: SearchResult) -> bool:
    doc = result.doc
    labels = {str(doc.get("category") or "").lower(), *(t.lower() for t in doc.get("tags") or [])}
    return bool(labels & _DEPLOY_WORDS)


def find_learnings(index: SearchIndex, task: str, phase: str, limit: int) -> list[SearchResult]:
    """The learnings for `task`; for deploy, deployment learnings first, high severity first."""
    if phase not in PHASES:
        raise UsageError(f"phase {phase!r} is not one of: {', '.join(PHASES)}")
    if phase != "deploy":
        return index.search(task, limit=limit, filters=Filters())
    candidates = index.search(f"{task} deployment", limit=max(limit * 4, 20), filters=Filters())
    candidates.sort(
        key=lambda r: (
            not _is_deployment(r),
            _SEVERITY.get(str(r.doc.get("severity") or "").lower(), 3),
            -r.score,
        )
    )
    return candidates[:limit]


def _expertise(folder: Path, task: str, results: list[SearchResult]) -> list[dict[str, Any]]:
    """Domain files whose name is a word of the task or a result's category (a simple read)."""
    try:
        files = {p.stem.lower(): p for p in folder.glob("*.yaml") if p.is_file()}
    except OSError:
        return []
    wanted = [w for w in words(task) if w in files]
    wanted += [str(r.doc.get("category") or "").lower() for r in results]
    out = []
    for domain in dict.fromkeys(w for w in wanted if w in files):
        try:
            from ruamel.yaml import YAML

            data = YAML(typ="safe", pure=True).load(files[domain].read_text(encoding="utf-8"))
        except Exception:  # a broken expertise file must not break preflight
            continue
        if not isinstance(data, dict):
            continue
        practices = data.get("best_practices") or []
        out.append(
            {
                "domain": str(data.get("domain") or domain),
                "overview": " ".join(str(data.get("overview") or "").split()),
                "best_practices": [str(p) for p in practices][:EXPERTISE_ITEMS]
                if isinstance(practices, list)
                else [],
                "path": f"{folder.name}/{files[domain].name}",
            }
        )
    return out


def _pct(rate: float | None) -> str:
    return "no recorded applications" if rate is None else f"{round(rate * 100)}% success"


def build_preflight(
    index: SearchIndex,
    sanitizer: Sanitizer,
    expertise: Path,
    task: str,
    *,
    phase: str = "plan",
    limit: int = 5,
) -> dict[str, Any]:
    """The preflight brief: learnings, patterns, prevention checklist, expertise, and `text`."""
    results = find_learnings(index, task, phase, limit)

    def clean(text: str) -> str:
        return sanitizer.redact_text(" ".join(str(text).split()))[0]

    learnings = []
    patterns = []
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
            patterns.append(
                {
                    "id": r.id,
                    "title": clean(r.title),
                    "best_solution": clean(solutions[0]["text"]),
                    "success_rate": r.success_rate,
                }
            )
        for step in r.doc.get("prevention") or []:
            text = clean(step)
            if text and text not in prevention:
                prevention.append(text)
    domains = _expertise(expertise, task, results)
    for d in domains:
        d["overview"] = clean(d["overview"])
        d["best_practices"] = [clean(p) for p in d["best_practices"]]
    brief = {
        "task": clean(task),
        "phase": phase,
        "learnings": learnings,
        "patterns": patterns,
        "prevention": prevention,
        "expertise": domains,
        "warnings": list(index.warnings),
    }
    brief["text"] = preflight_text(brief)
    return brief


def preflight_text(brief: dict[str, Any]) -> str:
    """The block an agent pastes into its prompt."""
    lines = [f"Task ({brief['phase']}): {brief['task']}", "", "RELEVANT PAST LEARNINGS:"]
    if not brief["learnings"]:
        lines.append("- none found")
    for item in brief["learnings"]:
        stale = " [stale: verify against the current code]" if item["stale"] else ""
        lines.append(f"- {item['title']}: {item['takeaway']}{stale}")
        lines.append(f"  ({item['id']}; {item['recommendation']})")
    if brief["patterns"]:
        lines += ["", "MATCHING PATTERNS:"]
        for p in brief["patterns"]:
            lines.append(
                f"- {p['title']} — best solution: {p['best_solution']} ({_pct(p['success_rate'])})"
            )
    if brief["prevention"]:
        lines += ["", "PREVENTION CHECKLIST:"]
        lines += [f"- [ ] {step}" for step in brief["prevention"]]
    for d in brief["expertise"]:
        lines += ["", f"DOMAIN EXPERTISE ({d['domain']}):", d["overview"]]
        lines += [f"- {p}" for p in d["best_practices"]]
    lines += ["", "Based on these learnings, plan the work so that it avoids past mistakes."]
    return "\n".join(lines)
