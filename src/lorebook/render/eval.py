"""`lore eval` for people: one row per mode, then the hybrid misses (pure, from the JSON)."""

from __future__ import annotations

from typing import Any


def eval_text(report: dict[str, Any], shown_misses: int = 10) -> str:
    """The table of `EvalReport.to_dict()`: recall@1, recall@5, MRR@10 per mode."""
    lines = [f"{report['queries_file']}: {report['queries']} golden queries", ""]
    lines.append(f"{'mode':<10} {'recall@1':>9} {'recall@5':>9} {'MRR@10':>8}")
    for mode, m in report["metrics"].items():
        lines.append(f"{mode:<10} {m['recall@1']:>9.2f} {m['recall@5']:>9.2f} {m['mrr@10']:>8.2f}")
    if "hybrid" in report["metrics"]:
        misses = [
            q for q in report["per_query"] if q["rank"]["hybrid"] is None or q["rank"]["hybrid"] > 5
        ]
        if misses:
            lines += ["", "Not in the hybrid top 5:"]
            for q in misses[:shown_misses]:
                lines.append(
                    f"  line {q['line']}: {q['query']}  (expected {', '.join(q['expected'])})"
                )
            if len(misses) > shown_misses:
                lines.append(f"  … {len(misses) - shown_misses} more (see --json)")
    return "\n".join(lines)
