"""The `--json` outputs about learnings: files, review, statistics, search, preflight, eval."""

from __future__ import annotations

from typing import Any, Literal, NotRequired

from typing_extensions import TypedDict

from .expertise import ExpertiseUpdate
from .records import ActivityReport, ResumeState, SessionRow


class Source(TypedDict, total=False):
    epic: str | None
    issue: str | None
    session: str | None
    task: str | None


class SolutionData(TypedDict):
    id: str
    text: str


class LearningData(TypedDict):
    """A learning file as `lore show --json` prints it: its front matter (with any keys a person
    added, kept as they were: the schema allows them), then `takeaway`, `body`, `stale`, `path`."""

    id: str
    title: str
    kind: Literal["lesson", "pattern", "rca", "guide"]
    category: str | None
    severity: Literal["high", "medium", "low"] | None
    tags: list[str]
    status: Literal["draft", "published", "superseded", "retired"]
    created: str
    source: Source
    anchors: list[str]
    supersedes: list[str]
    solutions: NotRequired[list[SolutionData]]
    prevention: list[str]
    checksum: NotRequired[str]
    takeaway: str
    body: str
    stale: bool
    path: str | None


class RcaAdded(LearningData):
    """`lore rca add --json`: the learning, and whether this call created it."""

    created_now: bool


class Similar(TypedDict):
    id: str
    similarity: float


class DraftOutcome(TypedDict):
    """`lore draft from-epic|from-issue --json` and each item of `lore extract retro --json`."""

    status: str
    supersedes: list[Similar]
    id: NotRequired[str]
    title: NotRequired[str]
    path: NotRequired[str | None]
    duplicate_of: NotRequired[str]
    similarity: NotRequired[float]
    drafted_as: NotRequired[str]
    subject: NotRequired[str | None]
    can_force: NotRequired[bool]


class Promoted(TypedDict):
    id: str
    title: str
    commit: str
    branch: str | None
    path: str
    on_current_branch: bool
    pushed: bool
    remote: str | None
    pr_url: str | None
    pr_command: list[str]
    warning: str | None


class Rejected(TypedDict):
    id: str
    title: str
    reason: str
    commit: str | None
    path: str


class LearningHistoryEntry(TypedDict):
    commit: str
    short: str
    author: str
    date: str
    subject: str
    change: str
    path: str


class AnchorChange(TypedDict):
    anchor: str
    reason: str
    commits: list[str]
    uncommitted: bool


class StaleReportData(TypedDict):
    id: str
    title: str
    path: str
    since: str | None
    anchors: list[AnchorChange]


class SolutionFigures(TypedDict):
    times_applied: int
    times_successful: int
    success_rate: float | None
    avg_resolution_minutes: float | None
    text: NotRequired[str | None]


class PatternFigures(TypedDict):
    occurrence_count: int
    success_rate: float | None
    avg_resolution_minutes: float | None
    found_via_search: int
    last_seen: str | None
    trend: str
    solutions: dict[str, SolutionFigures]


class LearningFigures(TypedDict):
    """What the log says about one learning (pattern figures for a pattern, or once it has
    occurrences)."""

    id: str
    applications: int
    successes: int
    success_rate: float | None
    last_applied: str | None
    pattern: NotRequired[PatternFigures]


class LearningStats(LearningFigures):
    """One learning's figures from the log (`lore stats [ID] --json`); a learning logged but
    without a file here has no title or kind, and status `missing`."""

    title: str | None
    kind: str | None
    status: str


class ScoreParts(TypedDict):
    keyword: float
    dense: float
    boost: float
    score: float
    relevance: float
    success: float
    recency: float
    specificity: float
    stale_factor: float


class SearchResultData(TypedDict):
    id: str
    title: str
    kind: str | None
    category: str | None
    severity: str | None
    status: str | None
    tags: list[str]
    created: str | None
    score: float
    similarity: float
    keyword_score: float
    semantic_score: float | None
    takeaway: str
    applications: int
    success_rate: float | None
    stale: bool
    recommendation: str
    path: str
    explain: NotRequired[ScoreParts | None]


class SearchOutput(TypedDict):
    """`lore search --json`."""

    query: str
    mode: str
    results: list[SearchResultData]
    warnings: list[str]
    degraded: str | None


class BriefLearning(TypedDict):
    id: str
    title: str
    takeaway: str
    category: str | None
    severity: str | None
    score: float
    applications: int
    success_rate: float | None
    recommendation: str
    stale: bool


class PreflightPattern(TypedDict):
    """A matching pattern with its solutions best first (by their own outcomes in the log)."""

    id: str
    title: str
    best_solution: str
    success_rate: float | None
    solutions: list[dict[str, Any]]


class BriefExpertise(TypedDict):
    domain: str
    prompt: str


class PreflightBrief(TypedDict):
    """`lore preflight --json`: the parts of the brief, and `text`, the block itself."""

    task: str
    phase: str
    learnings: list[BriefLearning]
    patterns: list[PreflightPattern]
    prevention: list[str]
    expertise: list[BriefExpertise]
    warnings: list[str]
    degraded: str | None
    text: str


Metrics = TypedDict(
    "Metrics", {"recall@1": float, "recall@5": float, "mrr@10": float, "queries": int}
)


class QueryRanks(TypedDict):
    query: str
    expected: list[str]
    line: int
    rank: dict[str, int | None]


class EvalReport(TypedDict):
    """`lore eval --json`: metrics per mode (and the word-overlap baseline), ranks per query."""

    queries_file: str
    queries: int
    metrics: dict[str, Metrics]
    per_query: list[QueryRanks]
    warnings: list[str]


class IndexFiles(TypedDict):
    added: list[str]
    updated: list[str]
    removed: list[str]


class IndexReport(TypedDict):
    """`lore index --json` (`model`: the embedding model used, None in keyword-only mode)."""

    added: int
    updated: int
    removed: int
    unchanged: int
    skipped: list[str]
    rebuilt: bool
    notices: list[str]
    files: IndexFiles
    model: str | None


class DemoSearch(TypedDict):
    query: str
    results: list[SearchResultData]


class DemoSummary(TypedDict):
    """`lore demo --json`: each part has the shape of its own command's output."""

    root: str
    sessions: list[SessionRow]
    resume: ResumeState
    expertise: ExpertiseUpdate
    learnings: list[LearningData]
    drafts: list[LearningData]
    stale: list[StaleReportData]
    report: ActivityReport
    search: DemoSearch
    preflight: PreflightBrief
