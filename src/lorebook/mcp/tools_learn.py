"""The knowledge tools: search, preflight, drafts, applications, patterns, expertise.

Thin calls to `Lorebook.index`, `.learnings`, `.knowledge` and `.expertise`; the docstrings
are the tool descriptions (short: they cost context on every turn).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import Field

from lorebook import Lorebook, LoreError
from lorebook.render.framing import frame_data

from .schemas import (
    Application,
    Draft,
    ExpertiseView,
    IndexUpdate,
    LearningHit,
    LearningSearch,
    LearningStats,
    Occurrence,
    Preflight,
    Promotion,
)
from .tools_log import partial_window

Limit = Annotated[int, Field(ge=1, le=50)]
APPLY_SCAN = 1000  # newest apply_learning actions looked at for application history
APPLIED_SHOWN = 5  # applications listed per learning


class LearnTools:
    """Tools over the learnings, the search index and the expertise files."""

    def __init__(self, book: Callable[[], Lorebook], current: Callable[[], str | None]) -> None:
        self.book = book
        self.current = current

    def search_learnings(
        self,
        query: str,
        limit: Limit = 5,
        category: str | None = None,
        kind: Literal["lesson", "pattern", "rca", "guide"] | None = None,
        severity: Literal["high", "medium", "low"] | None = None,
        tags: list[str] | None = None,
        include_applications: bool = True,
        include_effectiveness: bool = True,
    ) -> LearningSearch:
        """Search learnings (keywords + meaning). Use before planning or implementing."""
        searcher = self.book().index
        results = searcher.search(
            query,
            limit=limit,
            category=category,
            kind=kind,
            severity=severity,
            tags=tuple(tags or ()),
        )
        # the log is read for the history only when a hit has been applied at all
        wanted = include_applications and any(r.applications for r in results)
        applied = self._applied() if wanted else {}
        hits = []
        for result in results:
            item = result.to_dict()
            hit = LearningHit(
                id=item["id"],
                title=item["title"],
                kind=item["kind"],
                category=item["category"],
                severity=item["severity"],
                takeaway=item["takeaway"],
                score=item["score"],
                stale=item["stale"],
                path=item["path"],
            )
            if include_effectiveness:
                hit.applications = item["applications"]
                hit.success_rate = item["success_rate"]
                hit.recommendation = item["recommendation"]
            if include_applications:
                hit.applied = applied.get(item["id"], [])
            hits.append(hit)
        if hits:
            top = results[0]
            advice = f"{top.id}: {top.recommendation or top.takeaway}"
        else:
            advice = "no learning matched; proceed and consider drafting one afterwards"
        return LearningSearch(
            query=results.query,
            mode=results.mode,
            results_count=len(hits),
            learnings=hits,
            recommendation=advice,
            warnings=list(results.warnings),
            degraded=results.degraded,
        )

    def _applied(self) -> dict[str, list[dict[str, Any]]]:
        """The latest applications per learning id, newest first, from the log."""
        out: dict[str, list[dict[str, Any]]] = {}
        for record in self.book().actions(type="apply_learning", limit=APPLY_SCAN):
            learning = (record.get("context") or {}).get("learning")
            shown = out.setdefault(str(learning), [])
            if len(shown) < APPLIED_SHOWN:
                shown.append(
                    {
                        "ts": record["ts"],
                        "outcome": record["outcome"],
                        "epic": record.get("epic"),
                        "session": record["session"],
                    }
                )
        return out

    def index_learning(
        self,
        learning_id: Annotated[str, Field(description="index only this one")] | None = None,
        rebuild: bool = False,
    ) -> IndexUpdate:
        """Bring the search index up to date with the learning files."""
        book = self.book()
        paths = None
        if learning_id is not None:
            learning = book.learnings.get(learning_id)
            paths = [learning.path] if learning.path else None
        searcher = book.index
        if searcher.building:  # waiting for it could take minutes: say so at once
            raise LoreError(
                "the search index is being built in the background (every learning file); "
                "call index_learning again when search_learnings no longer says it is degraded"
            )
        report = searcher.update(rebuild=rebuild, paths=paths)
        model = searcher.embedder()
        return IndexUpdate(
            added=len(report.added),
            updated=len(report.updated),
            removed=len(report.removed),
            unchanged=report.unchanged,
            skipped=report.skipped,
            rebuilt=report.rebuilt,
            model=model.name if model else None,
        )

    def track_learning_application(
        self,
        learning_id: str,
        outcome: Literal["success", "failure"],
        epic: str | None = None,
        note: str | None = None,
    ) -> Application:
        """Record that a learning was applied and whether it worked."""
        book = self.book()
        action = book.knowledge.apply(
            learning_id, outcome=outcome, epic=epic, note=note, session=self.current()
        )
        since, partial = partial_window(book)
        figures = book.knowledge.stats(learning_id, since=since)[0]
        return Application(
            action_id=action["id"],
            learning_id=figures["id"],
            outcome=outcome,
            applications=figures["applications"],
            success_rate=figures["success_rate"],
            partial=partial,
        )

    def get_learning_stats(self, learning_id: str | None = None) -> LearningStats:
        """Applications, success rates and pattern figures per learning."""
        book = self.book()
        since, partial = partial_window(book)
        figures = book.knowledge.stats(learning_id, since=since)
        return LearningStats(learnings=[dict(f) for f in figures], partial=partial)

    def record_occurrence(
        self,
        pattern_id: str,
        solution: Annotated[str, Field(description="a solution id of the pattern")],
        success: bool,
        minutes: Annotated[float, Field(ge=0)] | None = None,
        via_search: bool = False,
        epic: str | None = None,
        note: str | None = None,
    ) -> Occurrence:
        """Record one occurrence of an issue pattern and the solution tried."""
        book = self.book()
        action = book.knowledge.record(
            pattern_id,
            solution=solution,
            success=success,
            minutes=minutes,
            via_search=via_search,
            epic=epic,
            note=note,
            session=self.current(),
        )
        since, partial = partial_window(book)
        pattern = book.knowledge.stats(pattern_id, since=since)[0].get("pattern")
        return Occurrence(
            partial=partial,
            action_id=action["id"],
            pattern_id=action["context"]["learning"],
            solution=solution,
            outcome=action["outcome"],
            occurrence_count=pattern["occurrence_count"] if pattern else 0,
            success_rate=pattern["success_rate"] if pattern else None,
        )

    def preflight(
        self,
        task: str,
        phase: Literal["plan", "implement", "deploy"] = "plan",
        limit: Limit = 5,
    ) -> Preflight:
        """What the team learned about a task: learnings, patterns, checklist."""
        brief = self.book().preflight(task, phase=phase, limit=limit, session=self.current())
        return Preflight(
            text=brief["text"],
            learnings=[dict(x) for x in brief["learnings"]],
            patterns=[dict(x) for x in brief["patterns"]],
            prevention=brief["prevention"],
            expertise=[dict(x) for x in brief["expertise"]],
            warnings=brief["warnings"],
            degraded=brief["degraded"],
        )

    def draft_learning(
        self,
        title: str | None = None,
        problem: str | None = None,
        solution: str | None = None,
        takeaway: str | None = None,
        category: str | None = None,
        severity: Literal["high", "medium", "low"] | None = None,
        tags: list[str] | None = None,
        epic: Annotated[str, Field(description="draft from this epic's actions")] | None = None,
        issue: Annotated[str, Field(description="draft from this issue's actions")] | None = None,
    ) -> Draft:
        """Write a learning draft: from a title and text, or from an epic's or issue's actions."""
        book = self.book()
        sources = (("title", title), ("epic", epic), ("issue", issue))
        given = [name for name, value in sources if value is not None]
        if len(given) != 1:
            raise LoreError("give exactly one of title, epic or issue")
        if epic is not None:
            return Draft(**book.knowledge.draft_from_epic(epic).to_dict())
        if issue is not None:
            return Draft(**book.knowledge.draft_from_issue(issue).to_dict())
        assert title is not None
        sections = (("Problem", problem), ("Solution", solution), ("Key Takeaway", takeaway))
        body = "\n\n".join(f"## {name}\n{text}" for name, text in sections if text)
        learning = book.learnings.new(
            title=title, body=body, category=category, severity=severity, tags=tags or []
        )
        return Draft(
            status="written",
            id=learning.id,
            title=learning.title,
            path=str(learning.path) if learning.path else None,
        )

    def promote_learning(
        self,
        learning_id: str,
        branch: Annotated[str, Field(description="commit on this new branch")] | None = None,
    ) -> Promotion:
        """Publish a draft in one git commit."""
        done = self.book().learnings.promote(learning_id, branch=branch)
        return Promotion(
            id=done.id,
            title=done.title,
            commit=done.commit,
            branch=done.branch,
            path=done.path,
            on_current_branch=done.on_current_branch,
            warning=done.warning,
        )

    def get_expertise(
        self,
        domain: str | None = None,
        task: Annotated[str, Field(description="pick the domain for this task")] | None = None,
    ) -> ExpertiseView:
        """Expertise domains; with a domain or task, its content and prompt block."""
        expertise = self.book().expertise
        view = ExpertiseView(domains=expertise.list_domains())
        if domain is None and task is None:
            return view
        block = expertise.prompt(domain=domain, task=task)
        view.domain = block["domain"]
        view.exists = block["exists"]
        view.prompt = frame_data(block["prompt"])  # prompt-ready: quoted data, not instructions
        if block["exists"]:
            view.content = expertise.get(block["domain"])
        return view
