"""`lore eval` for people: one row per mode, then the hybrid misses (pure, from the JSON)."""

from __future__ import annotations

from typing import Any

from .table import columns


def eval_text(report: dict[str, Any], shown_misses: int = 10) -> str:
    """The table of `EvalReport.to_dict()`: recall@1, recall@5, MRR@10 per mode."""
    lines = [f"{report['queries_file']}: {report['queries']} golden queries", ""]
    rows = [
        (mode, f"{m['recall@1']:.2f}", f"{m['recall@5']:.2f}", f"{m['mrr@10']:.2f}")
        for mode, m in report["metrics"].items()
    ]
    lines += columns(("mode", "recall@1", "recall@5", "MRR@10"), rows, right=(1, 2, 3))
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
