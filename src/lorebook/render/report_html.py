"""`lore report --html`: an activity report as ONE self-contained HTML page.

A lead attaches it to a pull request or a CI run, so it carries everything inline: CSS in a
`<style>` element, the per-day chart as inline SVG, no script, no font, no link to anything.
Pure: the report (`Lorebook.report`) and its sessions in, a string out; every value escaped.
Loaded only with `--html`, so not on the report's cold path.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from html import escape
from typing import Any

from ..log.report_file import duration, left_out_line, one_line, pct, when

__all__ = ["day_chart", "render_html"]

SESSIONS_SHOWN = 50
_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:2rem auto;
max-width:1100px;padding:0 1rem;color:#1f2328;background:#fff}
h1{font-size:1.5rem;margin:0 0 .25rem}h2{font-size:1.15rem;margin:2rem 0 .5rem}
.muted{color:#59636e}.totals{display:flex;gap:1rem;flex-wrap:wrap;margin:1rem 0}
.totals div{border:1px solid #d1d9e0;border-radius:6px;padding:.6rem 1rem;min-width:8rem}
.totals b{display:block;font-size:1.4rem}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.3rem .6rem;
border-bottom:1px solid #d1d9e0;vertical-align:top}td.n,th.n{text-align:right}
.fail{color:#cf222e}.note{background:#fff8c5;border:1px solid #d4a72c;border-radius:6px;
padding:.5rem .8rem}svg text{font:11px system-ui,sans-serif;fill:#59636e}
.bar-total{fill:#0969da}.bar-failure{fill:#cf222e}
"""


def _e(value: object) -> str:
    return escape("-" if value is None or value == "" else str(value))


def _table(head: Sequence[str], rows: Iterable[Sequence[object]], numeric: set[int]) -> str:
    cells = "".join(f'<th{" class=n" if i in numeric else ""}>{_e(h)}</th>' for i, h in
                    enumerate(head))  # fmt: skip
    body = "".join(
        "<tr>"
        + "".join(f"<td{' class=n' if i in numeric else ''}>{_e(v)}</td>" for i, v in enumerate(r))
        + "</tr>"
        for r in rows
    )
    return f"<table><thead><tr>{cells}</tr></thead><tbody>{body}</tbody></table>"


def day_chart(days: Sequence[Mapping[str, Any]]) -> str:
    """Actions and failures per day as an inline SVG bar chart: a total bar and a failure bar
    side by side for each day, day labels (MM-DD) on the x axis, the top count on the y axis."""
    top = max([1, *(int(d["count"]) for d in days)])
    step, left, height, base = 36, 44, 180, 200
    width = left + step * max(1, len(days)) + 10
    every = max(1, -(-len(days) // 31))  # at most ~31 labels, whatever the window
    parts = [
        f'<svg class="chart" role="img" width="{width}" '
        f'height="{base + 40}" viewBox="0 0 {width} {base + 40}" '
        'aria-label="Actions and failures per day">',
        f'<line x1="{left}" y1="{base}" x2="{width - 5}" y2="{base}" stroke="#8c959f"/>',
        f'<line x1="{left}" y1="{base - height}" x2="{left}" y2="{base}" stroke="#8c959f"/>',
        f'<text class="y-max" x="{left - 6}" y="{base - height + 4}" text-anchor="end">'
        f"{top}</text>",
        f'<text x="{left - 6}" y="{base + 4}" text-anchor="end">0</text>',
    ]
    for i, d in enumerate(days):
        x = left + i * step + 4
        for offset, key, css in ((0, "count", "bar-total"), (14, "failure", "bar-failure")):
            value = int(d.get(key) or 0)
            h = round(height * value / top)
            label = "actions" if key == "count" else "failures"
            parts.append(
                f'<rect class="{css}" x="{x + offset}" y="{base - h}" width="13" height="{h}">'
                f"<title>{_e(d['day'])}: {value} {label}</title></rect>"
            )
        if i % every == 0:
            parts.append(
                f'<text class="day" x="{x + 14}" y="{base + 16}" text-anchor="middle">'
                f"{_e(str(d['day'])[5:])}</text>"
            )
    parts.append(
        f'<rect class="bar-total" x="{left}" y="{base + 26}" width="10" height="10"/>'
        f'<text x="{left + 14}" y="{base + 35}">actions</text>'
        f'<rect class="bar-failure" x="{left + 80}" y="{base + 26}" width="10" height="10"/>'
        f'<text x="{left + 94}" y="{base + 35}">failures</text></svg>'
    )
    return "".join(parts)


def _session_rows(sessions: Iterable[Mapping[str, Any]]) -> Iterable[Sequence[object]]:
    from datetime import datetime

    for s in sessions:
        length = None
        start, last = s.get("started"), s.get("ended") or s.get("last_activity")
        if isinstance(start, str) and isinstance(last, str):
            begun = datetime.fromisoformat(start.replace("Z", "+00:00"))
            finished = datetime.fromisoformat(last.replace("Z", "+00:00"))
            length = max(0.0, (finished - begun).total_seconds())
        yield (
            s.get("id"), s.get("agent"), s.get("project"),
            when(start) if isinstance(start, str) else None, duration(length),
            s.get("status"), s.get("action_count"),
        )  # fmt: skip


def render_html(
    report: Mapping[str, Any], sessions: Sequence[Mapping[str, Any]] = (), *, title: str = ""
) -> str:
    """The whole page: period, totals, the per-day chart, the top failing types and the newest
    failures, the sessions (the newest SESSIONS_SHOWN), durations and actions by type."""
    w, s = report["window"], report["summary"]
    period = f"{w['since'][:16].replace('T', ' ')} .. {w['until'][:16].replace('T', ' ')} UTC"
    filters = report.get("filters") or {}
    only = ", ".join(f"{k} {filters[k]}" for k in ("project", "agent") if filters.get(k))
    heading = title or "Agent activity report"
    failures = s["outcomes"]["failure"]
    out = [
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(heading)}: {_e(period)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{_e(heading)}</h1>",
        f'<p class="muted">{_e(period)} (end exclusive)'
        + (f"; only {_e(only)}" if only else "")
        + "</p>",
        '<div class="totals">',
        f"<div><b>{s['sessions']}</b>sessions</div>",
        f"<div><b>{s['total_actions']}</b>actions</div>",
        f'<div><b class="fail">{failures}</b>failures</div>',
        f"<div><b>{_e(pct(s['success_rate']))}</b>success rate</div>",
        "</div>",
    ]
    note = left_out_line(report)
    if note:
        out.append(f'<p class="note">{_e(note)}</p>')
    out += ["<h2>Actions and failures per day</h2>", day_chart(report["by_day"])]
    out.append("<h2>Top failing action types</h2>")
    top = report.get("failures_by_type") or []
    if top:
        out.append(_table(("type", "failures"), ((t["type"], t["count"]) for t in top[:10]), {1}))
    else:
        out.append("<p>No failed actions.</p>")
    recent = report["recent_failures"]
    if recent:
        out.append(f"<h2>Newest failures ({len(recent)} of {failures})</h2>")
        out.append(_table(("time (UTC)", "type", "project", "agent", "error"), (
            (when(f["ts"]), f["type"], f["project"], f["agent"], one_line(f["error"], 200))
            for f in recent
        ), set()))  # fmt: skip
    out.append(f"<h2>Sessions ({len(sessions)})</h2>")
    if sessions:
        shown = sessions[:SESSIONS_SHOWN]
        head = ("session", "agent", "project", "started (UTC)", "duration", "status", "actions")
        out.append(_table(head, _session_rows(shown), {4, 6}))
        if len(sessions) > len(shown):
            out.append(f'<p class="muted">{len(sessions) - len(shown)} more not listed.</p>')
    else:
        out.append("<p>No sessions.</p>")
    if report["average_duration"]:
        out.append("<h2>Duration by type</h2>")
        out.append(_table(("type", "n", "average", "longest"), (
            (a["type"], a["count"], duration(a["avg_seconds"]), duration(a["max_seconds"]))
            for a in report["average_duration"]
        ), {1, 2, 3}))  # fmt: skip
    if report["by_type"]:
        out.append("<h2>Actions by type</h2>")
        out.append(_table(("type", "actions"), ((t["type"], t["count"]) for t in
                                                report["by_type"]), {1}))  # fmt: skip
    out.append('<p class="muted">Written by <code>lore report --html</code> from the action '
               "log (redacted).</p></body></html>")  # fmt: skip
    return "\n".join(out) + "\n"
