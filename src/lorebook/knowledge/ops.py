"""`KnowledgeOps`: what the log teaches, behind `Lorebook.knowledge`.

Automatic drafts (from an epic, an issue, a retrospective), issue patterns and their
occurrences, application tracking, RCA lessons and the figures derived from the log. The CLI,
the event-bus subscribers and (later) the MCP server all come through here.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..log.query import ActionFilter
from ..problems import OnProblem, ignore
from ..timeutil import as_timestamp, utcnow
from .stats import APPLY, OCCURRENCE, Figures, SolutionFigures, collect

if TYPE_CHECKING:
    from ..config import Config
    from ..contracts.knowledge import LearningStats
    from ..log.actionlog import ActionLog
    from .api import Learnings
    from .drafting import DraftOutcome
    from .model import Learning
    from .rca import RCAReport, RCAResult


class KnowledgeOps:
    """Reads the log through `action_log`, writes learnings through `learnings`; `config` holds
    the `drafts` and `rca` settings."""

    def __init__(self, learnings: Learnings, action_log: ActionLog, config: Config) -> None:
        self.learnings = learnings
        self.action_log = action_log
        self.config = config

    # -- drafts ----------------------------------------------------------------------------
    def draft_from_epic(
        self, epic: str, *, since: str | None = None, force: bool = False
    ) -> DraftOutcome:
        from .autodraft import draft_from_epic

        return draft_from_epic(
            self.action_log, self.learnings.store, self.config, epic, since=since, force=force
        )

    def draft_from_issue(self, issue: str, *, force: bool = False) -> DraftOutcome:
        from .autodraft import draft_from_issue

        return draft_from_issue(self.action_log, self.learnings.store, issue, force=force)

    def extract_retro(self, text: str, source: str) -> list[DraftOutcome]:
        """Pattern drafts from a retrospective; the whole file is parsed before any write."""
        from .drafting import write_draft
        from .retro import parse_retro, redact_retro
        from .retro_drafts import pattern_specs

        # redacted once parsed (markers would break its YAML), before any text is shortened
        specs = pattern_specs(redact_retro(self.learnings.sanitizer, parse_retro(text, source)))
        return [write_draft(self.learnings.store, self.action_log, spec) for spec in specs]

    # -- patterns and applications ---------------------------------------------------------
    def new_pattern(self, *, title: str, **fields: Any) -> Learning:
        from .patterns import new_pattern

        return new_pattern(self.learnings, title=title, **fields)

    def record(self, pattern_id: str, **fields: Any) -> dict[str, Any]:
        from .patterns import record_occurrence

        return record_occurrence(self.learnings, self.action_log, pattern_id, **fields)

    def apply(self, learning_id: str, **fields: Any) -> dict[str, Any]:
        from .patterns import apply_learning

        return apply_learning(self.learnings, self.action_log, learning_id, **fields)

    # -- figures ---------------------------------------------------------------------------
    def _events(
        self, *, occurrences: bool, on_problem: OnProblem | None = None, since: str | None = None
    ) -> Iterator[dict[str, Any]]:
        return learning_events(
            self.action_log, occurrences=occurrences, on_problem=on_problem, since=since
        )

    def figures(self, learning_id: str | None = None) -> dict[str, Figures]:
        """Figures per learning id, straight from the log (no learning files read)."""
        if learning_id is not None:  # an id prefix names the learning it starts
            learning_id = self.learnings.store.resolve_id(learning_id, missing_ok=True)
        return log_figures(self.action_log, learning_id)

    def ranking_figures(self) -> Callable[[str], tuple[int, float | None, int]]:
        """See `ranking_figures`."""
        return ranking_figures(self.action_log)

    def stats(
        self,
        learning_id: str | None = None,
        *,
        now: datetime | None = None,
        on_problem: OnProblem | None = None,
        since: str | datetime | None = None,
    ) -> list[LearningStats]:
        """`lore stats`: one entry per learning (or just `learning_id`), most applied first;
        unreadable learning files and log lines are reported to `on_problem` and skipped.
        `since` (`7d`, a date or a timestamp) counts only the log from then on."""
        moment = now or utcnow()
        after = as_timestamp(since, "since")
        store = self.learnings.store
        if learning_id is not None:
            learning = self.learnings.get(learning_id)
            pattern = learning.kind == "pattern"
            events = self._events(occurrences=pattern, on_problem=on_problem, since=after)
            found = collect(events, only=learning.id)
            figures = found.get(learning.id) or Figures(learning.id)
            return [_entry(figures, learning, moment)]
        found = collect(self._events(occurrences=True, on_problem=on_problem, since=after))
        entries = []
        for learning in store.all(on_problem=on_problem):
            figures = found.pop(learning.id) if learning.id in found else Figures(learning.id)
            entries.append(_entry(figures, learning, moment))
        for orphan in found.values():  # logged for a learning with no file (here)
            entries.append(
                {**orphan.to_dict(moment), "title": None, "kind": None, "status": "missing"}
            )
        entries.sort(key=lambda e: (-e["applications"], -_occurrences(e), e["id"]))
        return entries

    # -- RCA lessons -----------------------------------------------------------------------
    def add_rca(self, report: RCAReport) -> RCAResult:
        """Write the RCA lesson once (draft unless `rca.publish`); log it when new."""
        from .rca import add_rca

        publish = self.config.rca.publish
        result = add_rca(self.learnings.store, self.learnings.sanitizer, report, publish=publish)
        if result.created:
            self._log_rca(result, report)
        return result

    def add_rca_text(self, text: str, source: str) -> RCAResult:
        from .rca import load_report

        return self.add_rca(load_report(text, source))

    def rca_from_action(self, record: dict[str, Any]) -> RCAResult | None:
        """The subscriber: a failed action carrying `context.rca` -> its lesson (once)."""
        from .rca import add_rca, parse_report

        context = record.get("context")
        if record.get("outcome") != "failure" or not isinstance(context, dict):
            return None
        raw = context.get("rca")
        if not isinstance(raw, dict):
            return None
        data = dict(raw)
        data.setdefault("epic_id", record.get("epic"))
        data.setdefault("task_id", context.get("task_id") or record.get("issue"))
        data.setdefault("project_id", record.get("project"))
        report = parse_report(data, f"action {record.get('id')} context.rca")
        publish = self.config.rca.publish
        result = add_rca(self.learnings.store, self.learnings.sanitizer, report, publish=publish)
        if result.created:
            self._log_rca(result, report, trigger=record)
        return result

    def _log_rca(
        self, result: RCAResult, report: RCAReport, trigger: dict[str, Any] | None = None
    ) -> None:
        learning = result.learning
        fields: dict[str, Any] = {
            "context": {
                "learning": learning.id,
                "kind": "rca",
                "status": learning.status,
                "title": learning.title,
                "checksum": learning.checksum,
                "path": self.learnings.layout.rel(learning.path) if learning.path else None,
            },
            "epic": report.epic_id,
        }
        if trigger is not None:
            from .drafting import after

            fields["context"]["trigger"] = trigger.get("id")
            fields.update(after(trigger))
        action = "learning_draft" if learning.status == "draft" else "learning_promoted"
        self.action_log.log(action, **fields)


def _entry(figures: Figures, learning: Learning, now: datetime) -> LearningStats:
    pattern = learning.kind == "pattern"
    texts = {s.id: s.text for s in learning.solutions}
    for sid in texts:  # every documented solution is listed, applied or not
        figures.solutions.setdefault(sid, SolutionFigures())
    entry = figures.to_dict(now, pattern=pattern)
    if pattern:
        for sid, solution in entry["pattern"]["solutions"].items():
            solution["text"] = texts.get(sid)
    return {**entry, "title": learning.title, "kind": learning.kind, "status": learning.status}


def _occurrences(entry: LearningStats) -> int:
    pattern = entry.get("pattern")
    return pattern["occurrence_count"] if pattern else 0


def learning_events(
    action_log: ActionLog,
    *,
    occurrences: bool,
    on_problem: OnProblem | None = None,
    since: str | None = None,
) -> Iterator[dict[str, Any]]:
    """`apply_learning` (and `occurrence`) actions through the query layer (from the
    timestamp `since` on)."""
    types = (APPLY, OCCURRENCE) if occurrences else (APPLY,)
    for action_type in types:
        yield from action_log.iter_actions(
            ActionFilter(type=action_type, since=since),
            newest_first=False,
            on_problem=on_problem or ignore,
        )


def log_figures(action_log: ActionLog, learning_id: str | None = None) -> dict[str, Figures]:
    """Figures per learning id, straight from the log (no learning files read)."""
    return collect(learning_events(action_log, occurrences=True), only=learning_id)


def ranking_figures(action_log: ActionLog) -> Callable[[str], tuple[int, float | None, int]]:
    """What search ranks by, per learning id, from the log now: applications (or a pattern's
    occurrences), success rate, occurrences. A function of the log alone (no learning file is
    read), so a search ranks without loading the knowledge base."""
    from .stats import rate

    figures = log_figures(action_log)

    def of(learning_id: str) -> tuple[int, float | None, int]:
        found = figures.get(learning_id)
        if found is None:
            return 0, None, 1
        if found.applications:
            return (
                found.applications,
                rate(found.successes, found.applications),
                max(found.occurrences, 1),
            )
        if found.occurrences:  # a pattern: its occurrences say how well it was solved
            return (
                found.occurrences,
                rate(found.occurrence_successes, found.occurrences),
                found.occurrences,
            )
        return 0, None, 1

    return of
