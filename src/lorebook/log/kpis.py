"""The seed's success metrics (`lore report kpis`), computed from the action log.

Each figure is a ratio the log can justify: a definition, a numerator, a denominator and the
seed's target. When the log holds nothing to count (no epic was planned, no session was
disconnected), the figure is "n/a" — never a 0 % or a 100 % made of nothing. Everything here
but `gather` is a pure function over plain rows, so the figures can be checked by hand.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .catalog_rows import overhead_of

if TYPE_CHECKING:
    from ..contracts.records import Kpi as KpiData
    from ..contracts.records import KpisReport
    from .actionlog import ActionLog
    from .sessions import SessionInfo

SEARCH_TYPES = frozenset({"search", "preflight"})  # a preflight is logged as a `search`
# hooks that record tool calls: meta.source is "<client>:<event>" (hooks.clients), any client
CAPTURE_EVENTS = ("post-tool-use", "post-tool-use-failure")
CLEAN_ENDS = frozenset({"normal", "stop", "user_exit", "clear"})  # not a disconnect
SIZE_DAYS = 90
GB = 1_000_000_000
DEFAULT_DAYS = 30


@dataclass(frozen=True)
class Kpi:
    """One success metric: `value` is None ("n/a") when the log cannot tell."""

    key: str
    name: str
    definition: str
    numerator: float
    denominator: float
    value: float | None
    unit: str  # "%", "per learning", "ms", "bytes"
    target: str  # "> 80 %"
    met: bool | None

    def to_dict(self) -> KpiData:
        return {
            "key": self.key,
            "name": self.name,
            "definition": self.definition,
            "numerator": self.numerator,
            "denominator": self.denominator,
            "value": self.value,
            "unit": self.unit,
            "target": self.target,
            "met": self.met,
        }


def _share(key: str, name: str, definition: str, num: int, den: int, target: float) -> Kpi:
    value = round(100 * num / den, 1) if den else None
    met = None if value is None else value > target
    return Kpi(key, name, definition, num, den, value, "%", f"> {target:g} %", met)


def _epic_of(record: Mapping[str, Any]) -> str | None:
    epic = record.get("epic")
    return epic if isinstance(epic, str) and epic else None


def search_before_plan(actions: list[dict[str, Any]]) -> Kpi:
    """Epics whose first `plan` came after a learnings search (same epic or same session)."""
    searched_epics: set[str] = set()
    searched_sessions: set[str] = set()
    planned: dict[str, bool] = {}
    for record in actions:  # oldest first
        epic = _epic_of(record)
        if record["type"] in SEARCH_TYPES:
            searched_sessions.add(record["session"])
            if epic:
                searched_epics.add(epic)
        elif record["type"] == "plan" and epic and epic not in planned:
            planned[epic] = epic in searched_epics or record["session"] in searched_sessions
    return _share(
        "search_before_plan", "Search before planning",
        "epics whose first `plan` action was preceded by a learnings search or preflight "
        "(a `search` action on the same epic, or earlier in the plan's session)",
        sum(planned.values()), len(planned), 80,
    )  # fmt: skip


def drafts_per_completed_epic(actions: list[dict[str, Any]]) -> Kpi:
    """Completed epics with a written learning draft for the same epic."""
    completed: set[str] = set()
    drafted: set[str] = set()
    for record in actions:
        epic = _epic_of(record)
        if not epic or record.get("outcome") != "success":
            continue
        if record["type"] == "epic_complete":
            completed.add(epic)
        elif record["type"] == "learning_draft":
            drafted.add(epic)
    return _share(
        "learning_extraction", "Learning extraction",
        "epics completed (`epic_complete`, success) for which a learning draft was written "
        "(`learning_draft`, success, same epic)",
        len(completed & drafted), len(completed), 50,
    )  # fmt: skip


def applications_per_learning(actions: list[dict[str, Any]], published: int) -> Kpi:
    """`apply_learning` actions per published learning."""
    applied = sum(1 for r in actions if r["type"] == "apply_learning")
    value = round(applied / published, 2) if published else None
    return Kpi(
        "learning_reuse", "Learning reuse",
        "`apply_learning` actions in the window per published learning (learnings/)",
        applied, published, value, "per learning", "> 3",
        None if value is None else value > 3,
    )  # fmt: skip


def hook_coverage(actions: list[dict[str, Any]], missed: int) -> Kpi:
    """Tool calls recorded by capture hooks against those recorded plus those a hook missed."""
    recorded = sum(
        1
        for r in actions
        if r["type"] == "tool_call"
        and str((r.get("meta") or {}).get("source") or "").rpartition(":")[2] in CAPTURE_EVENTS
    )
    # without a hook-recorded tool call there is no hook to measure: n/a, not 0 %
    denominator = recorded + missed if recorded else 0
    return _share(
        "logging_coverage", "Logging coverage (hooks)",
        "tool calls recorded by the capture hooks ÷ (recorded + capture-hook runs that failed "
        "to record, from .lore/cache/hooks.log)",
        recorded, denominator, 95,
    )  # fmt: skip


def _disconnected(info: SessionInfo) -> bool:
    return info.end_reason not in CLEAN_ENDS if info.ended else True


def resume_success(actions: list[dict[str, Any]], sessions: Iterable[SessionInfo]) -> Kpi:
    """Disconnected sessions on an epic whose next session (same project) continued that epic
    without failing the step that had failed before the disconnect."""
    by_session: dict[str, list[dict[str, Any]]] = {}
    for record in actions:
        by_session.setdefault(record["session"], []).append(record)
    ordered = sorted(
        (s for s in sessions if s.id in by_session and s.started),
        key=lambda s: (s.started or "", s.id),
    )
    attempts = successes = 0
    for index, info in enumerate(ordered):
        own = by_session[info.id]
        epics = [e for e in (_epic_of(r) for r in own) if e]
        if not epics or info.id.startswith("auto-") or not _disconnected(info):
            continue
        epic = epics[-1]
        later = [
            s for s in ordered[index + 1 :]
            if s.project == info.project and (s.started or "") >= (info.last_activity or "")
        ]  # fmt: skip
        if not later:
            continue  # nobody resumed yet: cannot tell
        attempts += 1
        last_failed = next(
            (r["type"] for r in reversed(own) if _epic_of(r) == epic and r["outcome"] == "failure"),
            None,
        )
        nxt = [r for r in by_session[later[0].id] if _epic_of(r) == epic]
        repeated = last_failed is not None and any(
            r["type"] == last_failed and r["outcome"] == "failure" for r in nxt
        )
        if nxt and not repeated:
            successes += 1
    return _share(
        "resume_success", "Resume success",
        "sessions that ended without a clean end (disconnect, timeout, error, or no end event) "
        "while on an epic and were followed by a session of the same project: the next session "
        "worked on that epic without failing again the step that had failed",
        successes, attempts, 90,
    )  # fmt: skip


def logging_overhead(actions: list[dict[str, Any]], others: Iterable[float] = ()) -> Kpi:
    """Mean logging cost per record from `meta.overhead_ms` (else `meta.hook_ms`): the actions'
    and `others`, the costs the session events carry (the session hooks record theirs there)."""
    costs = [c for c in (overhead_of(r) for r in actions) if c is not None]
    costs += others
    total = round(sum(costs), 3)
    value = round(total / len(costs), 2) if costs else None
    return Kpi(
        "logging_overhead", "Logging overhead",
        "mean of `meta.overhead_ms` (else `meta.hook_ms`) over the records that carry it "
        "(actions and session events)",
        total, len(costs), value, "ms", "< 20 ms", None if value is None else value < 20,
    )  # fmt: skip


def log_size(shard_bytes: int, days: float) -> Kpi:
    """The log's bytes in the window's days, scaled to 90 days."""
    value = round(shard_bytes * SIZE_DAYS / days) if shard_bytes and days > 0 else None
    return Kpi(
        "log_size", "Log size per 90 days",
        "bytes of the shards (archived ones compressed) of the window's days × 90 ÷ days",
        shard_bytes, round(days, 2), value, "bytes", "< 1 GB",
        None if value is None else value < GB,
    )  # fmt: skip


def compute(
    actions: list[dict[str, Any]],
    sessions: Iterable[SessionInfo],
    *,
    published: int,
    hook_misses: int,
    shard_bytes: int,
    days: float,
    session_overhead: Iterable[float] = (),
) -> list[Kpi]:
    """Every figure, in the seed's order, from the window's actions (oldest first, lorebook's
    own bookkeeping included), the sessions seen in the log and the overheads its session
    events carry. A tracked action counts once (`track_pairs.once`); every record's logging cost
    counts, a start's too."""
    from .track_pairs import once

    counted = once(actions)
    return [
        search_before_plan(counted),
        drafts_per_completed_epic(counted),
        applications_per_learning(counted, published),
        hook_coverage(counted, hook_misses),
        resume_success(counted, sessions),
        logging_overhead(actions, session_overhead),
        log_size(shard_bytes, days),
    ]


# -- reading what the figures need -------------------------------------------------------------
def shard_bytes(actionlog: Path, days: list[str]) -> int:
    """Bytes of the shards of `days` (YYYY-MM-DD), live and archived."""
    total = 0
    for day in days:
        y, m, d = day.split("-")
        for folder, pattern in ((actionlog / y / m / d, "*.jsonl"),
                                (actionlog / "archive" / y / m, f"{d}-*.jsonl.gz")):  # fmt: skip
            if folder.is_dir():
                total += sum(p.stat().st_size for p in folder.glob(pattern) if p.is_file())
    return total


def hook_misses(hooks_log: Path, since: str, until: str) -> int:
    """Capture-hook runs that failed to record, noted in `.lore/cache/hooks.log` in the window
    (lines `YYYY-MM-DDTHH:MM:SSZ <event>: <message>`)."""
    try:
        text = hooks_log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return 0
    count = 0
    for line in text.splitlines():
        ts, _, rest = line.partition(" ")
        event = rest.partition(":")[0]
        if event in CAPTURE_EVENTS and since[:19] <= ts[:19] < until[:19]:
            count += 1
    return count


def gather(
    log: ActionLog,
    *,
    since: str,
    until: str,
    days: list[str],
    span_days: float,
    published: int,
    now: datetime,
) -> KpisReport:
    """The `lore report kpis --json` contract for the window [since, until) (`days`: its UTC
    days, `span_days`: its length) with `published` learnings in the store."""
    from .overhead import record_overheads
    from .query import ActionFilter

    found = log.iter_actions(ActionFilter(since=since, until=until), newest_first=False)
    try:
        actions = list(found)
    finally:
        getattr(found, "close", lambda: None)()
    figures = compute(
        actions,
        log.sessions(now=now),
        published=published,
        hook_misses=hook_misses(log.layout.cache / "hooks.log", since, until),
        shard_bytes=shard_bytes(log.layout.actionlog, days),
        days=span_days,
        session_overhead=[ms for *_, ms in record_overheads(log, since, until, kind="session")],
    )
    return {"window": {"since": since, "until": until}, "kpis": [k.to_dict() for k in figures]}


def format_value(kpi: Mapping[str, Any]) -> str:
    """A figure as shown: "85.0 %", "3.25 per learning", "4.10 ms", "12.3 MB", or "n/a"."""
    value = kpi["value"]
    if value is None:
        return "n/a"
    unit = kpi["unit"]
    if unit == "%":
        return f"{value:.1f} %"
    if unit == "bytes":
        return human_bytes(value)
    if unit == "ms":
        return f"{value:.2f} ms"
    return f"{value:.2f} {unit}"


def human_bytes(size: float) -> str:
    for unit, scale in (("GB", GB), ("MB", 1_000_000), ("kB", 1000)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{int(size)} B"


def fraction(kpi: Mapping[str, Any]) -> str:
    """`numerator / denominator` as the figure counts them."""

    def num(x: float) -> str:
        return f"{x:g}" if isinstance(x, float) else str(x)

    if kpi["unit"] == "bytes":
        return f"{human_bytes(kpi['numerator'])} in {num(kpi['denominator'])} days"
    if kpi["unit"] == "ms":
        return f"{num(kpi['numerator'])} ms / {num(kpi['denominator'])} records"
    return f"{num(kpi['numerator'])} / {num(kpi['denominator'])}"


def verdict(kpi: Mapping[str, Any]) -> str:
    met = kpi["met"]
    return "n/a" if met is None else ("met" if met else "missed")


def markdown_section(data: Mapping[str, Any]) -> list[str]:
    """The "Success metrics" section of the weekly report file."""
    out = ["## Success metrics", "",
           "| metric | value | numerator / denominator | target | status |",
           "|---|---|---|---|---|"]  # fmt: skip
    for k in data["kpis"]:
        out.append(
            f"| {k['name']} | {format_value(k)} | {fraction(k)} | {k['target']} | {verdict(k)} |"
        )
    out.append("")
    out += [f"- **{k['name']}**: {k['definition'].replace('|', '/')}." for k in data["kpis"]]
    return out
