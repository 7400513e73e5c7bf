"""`lore report` for people: the terminal text of an activity report.

The report files (Markdown with Mermaid charts) are the store's own format:
`lorebook.log.report_file`, which also holds the summary lines both share.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..log.report_file import duration, one_line, pct, summary_lines, when
from .table import columns

# duration and one_line: the skins format them as the reports do, through here
__all__ = ["duration", "one_line", "render_text", "summary_lines"]


def render_text(report: Mapping[str, Any]) -> str:
    """`lore report` for people."""
    w = report["window"]
    out = [f"Activity {w['since'][:16]} .. {w['until'][:16]} UTC", ""]
    out += summary_lines(report)
    out += ["", f"By {report['group_by']}:"]
    rows = [r for r in report["breakdown"] if r["total"]] or report["breakdown"][:0]
    out += columns(None, (
        ("", r["key"], r["total"], f"ok {pct(r['success_rate'])}", f"fail {r['failure']}",
         f"blocked {r['blocked']}")
        for r in rows
    ), right=(2,))  # fmt: skip
    if not rows:
        out.append("  (no actions)")
    d = report["deployments"]
    out += ["", f"Deployments: {d['total']} ({_outcomes(d['by_outcome'])})"]
    for dep in d["recent"][:10]:
        out.append(
            f"  {when(dep['ts'])}  {dep['project'] or '-'}: {dep['service'] or '-'} -> "
            f"{dep['outcome']}"
        )
    out += ["", f"Recent failures ({len(report['recent_failures'])}):"]
    for f in report["recent_failures"]:
        out.append(
            f"  {when(f['ts'])}  {f['type']} in {f['project'] or '-'}: "
            f"{one_line(f['error']) or '(no error text)'}"
        )
    if report["average_duration"]:
        out += ["", "Average duration by type:"]
        out += columns(None, (
            ("", a["type"], f"avg {duration(a['avg_seconds'])}",
             f"max {duration(a['max_seconds'])}", f"(n={a['count']})")
            for a in report["average_duration"]
        ), right=(2,))  # fmt: skip
    if report["overhead"]:
        o = report["overhead"]
        out += ["", f"Logging/hook overhead ({o['field']}): {o['count']} records, "
                f"avg {o['avg_ms']:.2f} ms"]  # fmt: skip
        out += columns(None, (
            ("", t["type"], f"avg {t['avg_ms']:.2f} ms", f"p95 {t['p95_ms']:.2f} ms",
             f"max {t['max_ms']:.2f} ms", f"(n={t['count']})")
            for t in o["by_type"]
        ))  # fmt: skip
        out += ["", "Overhead per record kind (actions by type, session start/end):"]
        out += columns(None, (
            ("", r["record"], f"n={r['count']}", f"p50 {r['p50_ms']:.2f} ms",
             f"p95 {r['p95_ms']:.2f} ms", f"total {r['total_ms']:.2f} ms")
            for r in o["by_record"]
        ), right=(2,))  # fmt: skip
    return "\n".join(out)


def _outcomes(counts: dict[str, int]) -> str:
    shown = [f"{n} {k}" for k, n in counts.items() if n]
    return ", ".join(shown) or "none"


def day_axis(days: list[str], width: int) -> str:
    """Labels (MM-DD) under a chart of `days` (ISO dates, one bar each) drawn `width` cells
    wide: each under the middle of its day's bar, as many as fit two cells apart, the last
    day always."""
    if not days or width < 5:
        return ""
    n = len(days)
    starts = [min(max(round((i + 0.5) * width / n) - 3, 0), width - 5) for i in range(n)]
    picked: list[int] = []
    for i in range(n):
        if not picked or starts[i] >= starts[picked[-1]] + 7:
            picked.append(i)
    while picked and picked[-1] != n - 1 and starts[n - 1] < starts[picked[-1]] + 7:
        picked.pop()  # make room for the last day
    if not picked or picked[-1] != n - 1:
        picked.append(n - 1)
    line = [" "] * width
    for i in picked:
        line[starts[i] : starts[i] + 5] = days[i][5:10]
    return "".join(line).rstrip()
