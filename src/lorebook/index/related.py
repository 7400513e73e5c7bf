"""The learnings relevant to a piece of work, for `lore resume`: keyword scores (BM25, the
search's keyword half) over the documents the search index already keeps in its manifest.

Nothing heavy on this path — no model, no Chroma, no front-matter parsing (pydantic): resume
runs at every session start. Without an index (a fresh clone, `lore index` never run) there is
nothing to rank and the list is empty; resume never builds one.
"""

from __future__ import annotations

from pathlib import Path

TYPE_CHECKING = False  # typing costs milliseconds on cold paths; mypy still sees it
if TYPE_CHECKING:
    from typing import Any

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
) -> list[dict[str, Any]]:
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
    found = []
    top = max((sim for sim, _ in ranked), default=0.0)
    floor = max(MIN_SIMILARITY, top * RELATIVE)
    for sim, data in sorted(ranked, key=lambda r: (-r[0], str(r[1].get("id") or "")))[:limit]:
        if sim < floor:
            break
        found.append(
            {
                "id": str(data.get("id") or ""),
                "title": sanitizer.redact_text(" ".join(str(data.get("title") or "").split()))[0],
                "category": data.get("category"),
                "severity": data.get("severity"),
                "similarity": round(sim, 3),
            }
        )
    return found


def _saved(folder: Path, query: str, synonyms: Any) -> list[tuple[float, dict[str, Any]]] | None:
    """(similarity, ranking fields) of each published learning with a score, from the keyword
    index `lore index` saved (no manifest to parse, nothing to tokenize); None without one."""
    from .keyword_store import SavedIndexDamaged, load_saved

    try:
        saved = load_saved(folder, synonyms)
        if saved is None:
            return None
        _, similarity = saved.index.scores(query)
    except (SavedIndexDamaged, ValueError):  # `lore search` reports and rebuilds it
        return None
    rows = saved.rows
    return [
        (sim, row)
        for sim, row in ((sim, rows[i]) for i, sim in enumerate(similarity) if sim > 0)
        if row.get("status", "published") == "published"
    ]


def _from_manifest(path: Path, query: str, synonyms: Any) -> list[tuple[float, dict[str, Any]]]:
    """The same, tokenizing the documents the manifest keeps (no saved keyword index)."""
    from .keyword import KeywordIndex, document_terms
    from .manifest import Manifest, ManifestCorrupt

    try:
        manifest = Manifest.load(path)
    except ManifestCorrupt:
        return []  # `lore search` reports and rebuilds it; resume only skips the section
    if manifest is None:
        return []
    stored = [
        entry.doc
        for entry in manifest.files.values()
        if entry.doc is not None and entry.doc.get("status", "published") == "published"
    ]
    docs = [_Doc(data) for data in stored]
    documents: list[Document] = docs  # type: ignore[assignment]  # _Doc: what document_terms reads
    keyword = KeywordIndex(documents, synonyms, lambda _, d: document_terms(d))
    _, similarity = keyword.scores(query)
    return [(sim, data) for sim, data in zip(similarity, stored, strict=True) if sim > 0]


def work_text(state: dict[str, Any]) -> str:
    """What `lore resume`'s session was about, as a keyword query: its epic and issue, and the
    error text of its failed validations and open or failed actions (newest first)."""
    from ..log.progress import describe

    parts: list[str] = [str(state.get("epic") or "")]
    actions = [
        *(state.get("failed_validations") or []),
        *(state.get("open_actions") or []),
        *[a for a in state.get("recent_actions") or [] if a.get("outcome") == "failure"],
    ]
    for action in actions[:10]:
        parts += [str(action.get("issue") or ""), str(action.get("error") or ""), describe(action)]
    return " ".join(dict.fromkeys(p for p in parts if p))
