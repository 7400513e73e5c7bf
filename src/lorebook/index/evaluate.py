"""Search quality on a golden set: recall@1, recall@5 and MRR@10 per search mode, next to a
plain word-overlap baseline, so a ranking change can be judged by numbers instead of by feel.

A golden set is YAML kept in git (default `learnings/eval.yaml`)::

    queries:
      - query: why is a one-shot lore log slow to start
        expected: [2026-11-22-append-path-import-cost]

The metrics and the runner only need a `search_fn(query, mode, limit) -> [ids]`, so they work
for any ranking (the real index, a benchmark, a test double).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import LoreError
from ..problems import Problem

if TYPE_CHECKING:
    from .engine import SearchIndex

SearchFn = Callable[[str, str, int], list[str]]

MODES = ("hybrid", "keyword", "semantic")
BASELINE = "baseline"
DEPTH = 10  # ranks beyond MRR@10 never change a metric
_WORD = re.compile(r"\w+")


class GoldenSetError(LoreError):
    """The golden-set file is missing or not a valid list of queries."""


# -- golden set ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class GoldenQuery:
    query: str
    expected: tuple[str, ...]
    line: int  # 1-based line of the entry in the file, for messages


@dataclass
class GoldenSet:
    path: Path
    queries: list[GoldenQuery]
    warnings: list[str] = field(default_factory=list)

    def restrict_to(self, known: Collection[str]) -> GoldenSet:
        """Drop expected ids that are not in `known` (with a warning naming file:line); a query
        left without any expected id is skipped. Fails if no query remains."""
        kept: list[GoldenQuery] = []
        warnings = list(self.warnings)
        for q in self.queries:
            missing = [i for i in q.expected if i not in known]
            for learning in missing:
                warnings.append(f"{self.path}:{q.line}: unknown learning id {learning!r} ignored")
            present = tuple(i for i in q.expected if i in known)
            if present:
                kept.append(GoldenQuery(q.query, present, q.line))
            else:
                warnings.append(f"{self.path}:{q.line}: query {q.query!r} skipped (no known id)")
        if not kept:
            raise GoldenSetError(
                "{}: none of the expected learning ids exist in this store; "
                "check the ids against learnings/*.md",
                self.path,
            )
        return GoldenSet(self.path, kept, warnings)


def _line(node: Any, key: Any = None) -> int:
    """1-based line of a ruamel node (or of `key` inside a mapping); 0 when unknown."""
    lc = getattr(node, "lc", None)
    if lc is None:
        return 0
    try:
        if key is not None:
            return int(lc.key(key)[0]) + 1
        return int(lc.line) + 1
    except (KeyError, TypeError, AttributeError):
        return 0


def _item_line(seq: Any, position: int) -> int:
    lc = getattr(seq, "lc", None)
    try:
        return int(lc.item(position)[0]) + 1 if lc is not None else 0
    except (KeyError, IndexError, TypeError, AttributeError):
        return 0


def parse_golden(text: str, path: Path) -> GoldenSet:
    """Parse golden-set YAML; every problem is a GoldenSetError naming `path:line`."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        data = YAML(typ="rt").load(text)
    except YAMLError as exc:
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        mark = getattr(exc, "problem_mark", None)
        context = getattr(exc, "context_mark", None)
        if context is not None and (
            mark is None or "end of stream" in problem or "<stream end>" in problem
        ):
            mark = context  # an unclosed bracket or quote: point at where it was opened
        line = mark.line + 1 if mark is not None else 1
        raise GoldenSetError("{}:{}: invalid YAML: {}", path, line, problem) from None
    if isinstance(data, Mapping):
        entries = data.get("queries")
        if entries is None:
            raise GoldenSetError("{}:1: expected a top-level `queries:` list", path)
    else:
        entries = data
    if entries is None or (isinstance(entries, list) and not entries):
        raise GoldenSetError(
            "{}: no queries; add entries like `- query: ...` with `expected:`", path
        )
    if not isinstance(entries, list):
        raise GoldenSetError("{}:{}: `queries` must be a list", path, _line(data, "queries") or 1)
    queries: list[GoldenQuery] = []
    for position, entry in enumerate(entries):
        line = _item_line(entries, position) or _line(entry) or 1
        if not isinstance(entry, Mapping):
            raise GoldenSetError("{}:{}: each entry needs `query:` and `expected:`", path, line)
        query = entry.get("query")
        if not isinstance(query, str) or not query.strip():
            raise GoldenSetError("{}:{}: `query` must be non-empty text", path, line)
        expected = entry.get("expected")
        if isinstance(expected, str):
            expected = [expected]
        if (
            not isinstance(expected, list)
            or not expected
            or not all(isinstance(i, str) and i.strip() for i in expected)
        ):
            raise GoldenSetError(
                "{}:{}: `expected` must be a learning id or a non-empty list of ids",
                path,
                _line(entry, "expected") or line,
            )
        queries.append(GoldenQuery(query.strip(), tuple(i.strip() for i in expected), line))
    return GoldenSet(path, queries)


def load_golden(path: Path) -> GoldenSet:
    """The golden set in FILE: a regular file of at most 1 MiB (`read_bounded`: a device or a
    FIFO given as --queries is refused, never read without end)."""
    from ..knowledge.docload import read_bounded

    if not path.exists():
        raise GoldenSetError(
            "{}: no such golden-set file; create it (see `lore eval --help`) "
            "or pass --queries FILE",
            path,
        )
    try:
        text = read_bounded(str(path)).decode("utf-8")
    except LoreError as exc:
        raise GoldenSetError("{}", exc) from None
    except UnicodeDecodeError:
        raise GoldenSetError("{}: not UTF-8 text", path) from None
    return parse_golden(text, path)


# -- metrics ------------------------------------------------------------------------------------
def first_hit(ranked: Sequence[str], expected: Collection[str]) -> int | None:
    """1-based rank of the first relevant id, or None if none is ranked."""
    for position, learning in enumerate(ranked, start=1):
        if learning in expected:
            return position
    return None


def recall_at(k: int, ranks: Sequence[int | None]) -> float:
    """Share of queries whose first relevant result is within the top k."""
    if not ranks:
        return 0.0
    return sum(1 for r in ranks if r is not None and r <= k) / len(ranks)


def mrr_at(k: int, ranks: Sequence[int | None]) -> float:
    """Mean reciprocal rank, counting only hits within the top k."""
    if not ranks:
        return 0.0
    return sum(1.0 / r for r in ranks if r is not None and r <= k) / len(ranks)


@dataclass(frozen=True)
class Metrics:
    recall_at_1: float
    recall_at_5: float
    mrr_at_10: float
    queries: int

    @classmethod
    def of(cls, ranks: Sequence[int | None]) -> Metrics:
        return cls(recall_at(1, ranks), recall_at(5, ranks), mrr_at(10, ranks), len(ranks))

    def to_dict(self) -> dict[str, float | int]:
        return {
            "recall@1": round(self.recall_at_1, 4),
            "recall@5": round(self.recall_at_5, 4),
            "mrr@10": round(self.mrr_at_10, 4),
            "queries": self.queries,
        }


# -- baseline -----------------------------------------------------------------------------------
def words(text: str) -> frozenset[str]:
    return frozenset(w.lower() for w in _WORD.findall(text))


class WordOverlap:
    """The seed's method as a baseline: Jaccard overlap of lower-cased word sets between the
    query and each learning's title + body; no stemming, synonyms or meaning."""

    def __init__(self, texts: Mapping[str, str]) -> None:
        self.docs = [(learning, words(text)) for learning, text in sorted(texts.items())]

    def search(self, query: str, limit: int) -> list[str]:
        asked = words(query)
        if not asked:
            return []
        scored = []
        for learning, have in self.docs:
            shared = len(asked & have)
            if shared:
                scored.append((shared / len(asked | have), learning))
        scored.sort(key=lambda item: (-item[0], item[1]))
        return [learning for _, learning in scored[:limit]]


# -- runner -------------------------------------------------------------------------------------
@dataclass
class EvalReport:
    golden: GoldenSet
    modes: list[str]
    ranks: dict[str, list[int | None]]  # mode -> rank per query, in golden order

    def metrics(self) -> dict[str, Metrics]:
        return {mode: Metrics.of(self.ranks[mode]) for mode in self.modes}

    def misses(self, mode: str, k: int = 5) -> list[GoldenQuery]:
        return [
            q
            for q, r in zip(self.golden.queries, self.ranks[mode], strict=True)
            if r is None or r > k
        ]

    def to_dict(self) -> dict[str, Any]:
        return {
            "queries_file": str(self.golden.path),
            "queries": len(self.golden.queries),
            "metrics": {mode: m.to_dict() for mode, m in self.metrics().items()},
            "per_query": [
                {
                    "query": q.query,
                    "expected": list(q.expected),
                    "line": q.line,
                    "rank": {mode: self.ranks[mode][i] for mode in self.modes},
                }
                for i, q in enumerate(self.golden.queries)
            ],
            "warnings": list(self.golden.warnings),
        }


def run_eval(
    golden: GoldenSet,
    search_fn: SearchFn,
    *,
    modes: Iterable[str] = MODES,
    baseline: WordOverlap | None = None,
    depth: int = DEPTH,
) -> EvalReport:
    """Rank every golden query with every mode (and the baseline) and record where the first
    expected learning landed."""
    chosen = list(modes)
    ranks: dict[str, list[int | None]] = {mode: [] for mode in chosen}
    for q in golden.queries:
        for mode in chosen:
            ranks[mode].append(first_hit(search_fn(q.query, mode, depth), q.expected))
    if baseline is not None:
        chosen.append(BASELINE)
        ranks[BASELINE] = [
            first_hit(baseline.search(q.query, depth), q.expected) for q in golden.queries
        ]
    return EvalReport(golden, chosen, ranks)


HIDDEN = ("superseded", "retired")  # what `lore search` hides by default


def evaluate_index(
    index: SearchIndex,
    golden: GoldenSet,
    *,
    modes: Iterable[str] = MODES,
    on_problem: Callable[[Problem], None] | None = None,
) -> EvalReport:
    """Bring `index` up to date, then evaluate it (default settings) and the word-overlap
    baseline over the same learnings."""
    from .documents import iter_documents

    report_problem = on_problem or (lambda _problem: None)
    index.update(on_problem=report_problem)
    texts = {
        doc.id: f"{doc.title}\n{doc.body}"
        for _path, _digest, doc in iter_documents(index.layout, report_problem)
        if doc is not None and doc.status not in HIDDEN
    }
    golden = golden.restrict_to(texts)

    def search_fn(query: str, mode: str, limit: int) -> list[str]:
        return [hit.id for hit in index.search(query, mode=mode, limit=limit, refresh=False)]

    report = run_eval(golden, search_fn, modes=modes, baseline=WordOverlap(texts))
    for warning in index.warnings:
        if warning not in report.golden.warnings:
            report.golden.warnings.append(warning)
    return report
