"""The learnings relevant to a piece of work, for `lore resume`: keyword scores (BM25, the
search's keyword half) over the documents the search index already keeps in its manifest.

Nothing heavy on this path — no model, no Chroma, no front-matter parsing (pydantic): resume
runs at every session start. Without an index (a fresh clone, `lore index` never run) there is
nothing to rank and the list is empty; resume never builds one.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

from pathlib import Path

TYPE_CHECKING = False  # typing costs milliseconds on cold paths; mypy still sees it
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from typing import Any

    from ..contracts.records import RelatedLearning
    from ..redact.sanitize import Sanitizer
    from .documents import Document

# A session's query is long (epic, errors, tasks), so the search's similarity (the share of the
# query that matched) runs lower than for a typed query: a floor, and a third of the best
MIN_SIMILARITY = 0.05
RELATIVE = 1 / 3


class _Doc:
    """What `document_terms` reads of a learning, from the manifest's stored document."""

    __slots__ = ("body", "category", "id", "tags", "title")

    def __init__(self, data: dict[str, Any]) -> None:
        self.id = str(data.get("id") or "")
        self.title = str(data.get("title") or "")
        self.body = str(data.get("body") or "")
        self.category = data.get("category")
        self.tags = [str(t) for t in data.get("tags") or []]


def related_learnings(
    index_folder: Path,
    query: str,
    sanitizer: Sanitizer,
    *,
    synonyms: Any = None,
    limit: int = 3,
) -> list[RelatedLearning]:
    """Up to `limit` published learnings matching `query` by keywords, best first (id, title,
    category, severity, similarity), redacted; empty without an index or a query."""
    if not query.strip():
        return []
    path = index_folder / "manifest.json"
    if not path.exists():  # no index: nothing to rank, and nothing more to import
        return []
    from .synonyms import SynonymTable

    table = synonyms if isinstance(synonyms, SynonymTable) else SynonymTable.from_config(synonyms)
    ranked = _saved(index_folder, query, table)
    if ranked is None:
        ranked = _from_manifest(path, query, table)
    similarity, rows = ranked
    try:
        return _found(similarity, rows, sanitizer, limit)
    except ValueError:  # a damaged saved index (`lore search` rebuilds it): the manifest's
        return _found(*_from_manifest(path, query, table), sanitizer, limit)
    finally:
        if hasattr(rows, "close"):
            rows.close()  # a saved index's SQLite copy


def _found(
    similarity: list[float], rows: Any, sanitizer: Sanitizer, limit: int
) -> list[RelatedLearning]:
    found: list[RelatedLearning] = []
    floor = MIN_SIMILARITY
    for sim, row in _best_first(similarity, rows):
        if row.get("status", "published") != "published":
            continue
        if not found:
            floor = max(MIN_SIMILARITY, sim * RELATIVE)
        if sim < floor or len(found) == limit:
            break
        title = sanitizer.redact_text(" ".join(str(row.get("title") or "").split()))[0]
        found.append(
            {
                "id": str(row.get("id") or ""),
                "title": title,
                "category": row.get("category"),
                "severity": row.get("severity"),
                "similarity": round(sim, 3),
            }
        )
    return found


def _best_first(similarity: list[float], rows: Any) -> Iterator[tuple[float, dict[str, Any]]]:
    """(similarity, ranking fields) of the learnings that scored, best first (ties by id),
    each read only when reached: a saved index reads its rows one at a time."""
    order = sorted((i for i, sim in enumerate(similarity) if sim > 0), key=lambda i: -similarity[i])
    at = 0
    while at < len(order):
        sim = similarity[order[at]]
        tied = []
        while at < len(order) and similarity[order[at]] == sim:
            tied.append(rows[order[at]])
            at += 1
        for row in sorted(tied, key=lambda r: str(r.get("id") or "")):
            yield sim, row


def _saved(folder: Path, query: str, synonyms: Any) -> tuple[list[float], Any] | None:
    """(each learning's similarity, its ranking fields by index) from the keyword index `lore
    index` saved -- its SQLite copy (only the query's terms read), else the JSON one (no
    manifest to parse, nothing to tokenize); None without either."""
    import sqlite3

    from .keyword_store import SavedIndexDamaged, load_saved
    from .terms_db import open_terms

    terms = open_terms(folder)
    try:
        if terms is not None:
            return terms.index(query, synonyms).scores(query)[1], terms.rows
        saved = load_saved(folder, synonyms)
        if saved is None:
            return None
        return saved.index.scores(query)[1], saved.rows
    except (SavedIndexDamaged, ValueError, sqlite3.Error):  # `lore search` rebuilds it
        if terms is not None:
            terms.close()
        return None


def _from_manifest(path: Path, query: str, synonyms: Any) -> tuple[list[float], Any]:
    """The same, tokenizing the documents the manifest keeps (no saved keyword index, or one
    not known to match the manifest)."""
    from .keyword import KeywordIndex, document_terms
    from .manifest import Manifest, ManifestCorrupt

    try:
        manifest = Manifest.load(path)
    except ManifestCorrupt:
        return [], []  # `lore search` reports and rebuilds it; resume only skips the section
    if manifest is None:
        return [], []
    # every document, as the saved keyword index holds them (the same IDF); drafts and
    # retired learnings are passed over after ranking
    stored = [entry.doc for entry in manifest.files.values() if entry.doc is not None]
    docs = [_Doc(data) for data in stored]
    documents: list[Document] = docs  # type: ignore[assignment]  # _Doc: what document_terms reads
    keyword = KeywordIndex(documents, synonyms, lambda _, d: document_terms(d))
    return keyword.scores(query)[1], stored


def work_text(state: Mapping[str, Any]) -> str:
    """What `lore resume`'s session was about, as a keyword query: its epic and issue, and the
    error text of its failed validations and open or failed actions (newest first)."""
    from ..log.open_work import describe

    parts: list[str] = [str(state.get("epic") or "")]
    actions = [
        *(state.get("failed_validations") or []),
        *(state.get("open_actions") or []),
        *[a for a in state.get("recent_actions") or [] if a.get("outcome") == "failure"],
    ]
    for action in actions[:10]:
        parts += [str(action.get("issue") or ""), str(action.get("error") or ""), describe(action)]
    return " ".join(dict.fromkeys(p for p in parts if p))
