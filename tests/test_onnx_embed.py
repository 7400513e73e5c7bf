"""Search embeds with onnxruntime, not torch: the ONNX export gives sentence-transformers'
vectors and results, query paths import no torch, and a damaged or impossible cache is handled."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import clean_env, lore
from search_fixtures import age_learnings, open_book, write_learning

HEAVY = {"torch", "sentence_transformers", "transformers"}

WRAPPER = """
import json, sys
import lorebook.cli
code = lorebook.cli.main(sys.argv[1:])
sys.stdout.flush()
print("\\n" + json.dumps({"code": code, "modules": sorted({m.split(".")[0] for m in sys.modules})}))
"""


def varied_texts() -> list[str]:
    """120 texts: short, long (over 256 tokens: truncated), code-ish, unicode, odd spacing."""
    rng = random.Random(13)
    words = [
        "deploy",
        "container",
        "port",
        "database",
        "policy",
        "insert",
        "token",
        "clock",
        "skew",
        "memory",
        "chunk",
        "probe",
        "kubernetes",
        "service",
        "retry",
        "cache",
        "bundler",
        "stale",
        "migration",
        "index",
        "query",
    ]
    texts = [
        "",
        "a",
        "RLS",
        "deploy failed",
        "Row level security blocks anonymous INSERT",
        "   leading and trailing spaces   ",
        "UPPER CASE SHOUTING ABOUT PORT 8080",
        "émigré naïve café — ünïcödé 漢字 テスト 🚀 emoji",
        "tab\tseparated\nnew\nlines",
    ]
    for _ in range(40):
        texts.append(" ".join(rng.choice(words) for _ in range(rng.randint(2, 30))))
    for _ in range(25):
        texts.append(" ".join(rng.choice(words) for _ in range(rng.randint(200, 400))))  # >256
    code = [
        "def f(x):\n    return x ** 2  # square",
        "SELECT * FROM orders WHERE id = $1;",
        "docker compose down && docker compose up -d",
        "kubectl rollout status deploy/api",
        '{"key": [1, 2, 3], "nested": {"a": null}}',
        "if (a != b) { throw new Error(); }",
        "ERROR 1045 (28000): Access denied for user 'root'@'localhost'",
    ]
    for n in range(25):
        texts.append(rng.choice(code) + f" line {n} " + rng.choice(words))
    for n in range(14):
        han = "".join(chr(rng.randint(0x4E00, 0x4E50)) for _ in range(20))
        texts.append(f"Ünïcode {n}: {han}")
    assert len(texts) >= 100
    return texts


def test_onnx_vectors_equal_sentence_transformers(embedder: Any, reference_embedder: Any) -> None:
    from lorebook.index.onnx_embed import OnnxEmbedder

    assert isinstance(embedder, OnnxEmbedder)  # search really runs the ONNX export
    assert (embedder.name, embedder.dim) == (reference_embedder.name, reference_embedder.dim)
    texts = varied_texts()
    fast, reference = embedder.encode(texts), reference_embedder.encode(texts)
    assert fast.shape == reference.shape == (len(texts), 384)
    assert np.allclose(np.linalg.norm(fast, axis=1), 1.0, atol=1e-5)
    cosines = (fast * reference).sum(axis=1)
    assert cosines.min() >= 0.9999, (cosines.argmin(), cosines.min())
    one = embedder.encode([texts[60]])  # alone or in a padded batch: the same vector
    assert float((one[0] * fast[60]).sum()) >= 0.99999


def _results(root: Path, queries: list[str], mode: str) -> list[list[tuple[str, float]]]:
    book = open_book(root)
    book.index.update(rebuild=True)
    out = []
    for query in queries:
        hits = book.index.search(query, mode=mode, limit=7, threshold=0.0, today=None)
        assert hits.degraded is None and hits.mode == mode
        out.append([(h.id, h.score) for h in hits])
    book.index.close()
    return out


def test_search_results_identical_through_both_embedders(
    tmp_path: Path, search_store: Path, reference_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    queries = [
        "RLS policy blocks insert",
        "address already in use",
        "token rejected time",
        "pods restarted while warming up",
        "out of memory reading csv",
        "cache stale",
    ]
    other = tmp_path / "torch-store"
    shutil.copytree(search_store, other)
    for mode in ("hybrid", "semantic"):
        fast = _results(search_store, queries, mode)
        with monkeypatch.context() as patch:
            patch.setattr("lorebook.index.embed.load_embedder", lambda *a, **k: reference_embedder)
            slow = _results(other, queries, mode)
        for got, want in zip(fast, slow, strict=True):
            assert [i for i, _ in got] == [i for i, _ in want]
            assert np.allclose([s for _, s in got], [s for _, s in want], atol=1e-4)


def _run(root: Path, *args: str) -> tuple[int, Any, str, set[str]]:
    """`lore ARGS` in a subprocess: (exit code, JSON output, stderr, top-level modules loaded)."""
    done = subprocess.run(
        [sys.executable, "-c", WRAPPER, *args],
        capture_output=True,
        text=True,
        env=clean_env(root),
        timeout=300,
    )
    body, _, last = done.stdout.rstrip().rpartition("\n")
    report = json.loads(last)
    data = json.loads(body) if body.strip().startswith("{") else body
    return report["code"], data, done.stderr, set(report["modules"])


def test_keyword_search_imports_neither_torch_nor_chromadb(search_store: Path) -> None:
    assert lore("index", env=clean_env(search_store)).code == 0
    for extra in ([], ["--no-refresh"]):
        code, data, err, modules = _run(
            search_store, "search", "RLS insert", "--mode", "keyword", "--json", *extra
        )
        assert code == 0, err
        assert data["results"][0]["id"] == "rls-anon-insert"
        assert modules & (HEAVY | {"chromadb", "onnxruntime", "bm25s", "scipy"}) == set(), extra
    code, data, err, modules = _run(search_store, "search", "deploy port conflict", "--json")
    assert code == 0, err
    assert data["mode"] == "hybrid" and data["results"][0]["semantic_score"] is not None
    assert modules & HEAVY == set() and {"chromadb", "onnxruntime"} <= modules
    code, _, err, modules = _run(search_store, "preflight", "ship the api service", "--json")
    assert code == 0, err
    assert modules & HEAVY == set()


def test_fresh_index_is_not_refreshed_with_the_model(search_store: Path) -> None:
    """Nothing changed: the search loads the model only to embed the query, and a keyword
    search loads it not at all; a changed file is still picked up."""
    age_learnings(search_store)  # (a file hashed within a second of its mtime is hashed again)
    assert lore("index", env=clean_env(search_store)).code == 0
    code, data, err, modules = _run(search_store, "search", "RLS", "--mode", "keyword", "--json")
    assert code == 0 and "onnxruntime" not in modules, err
    write_learning(search_store, "new-one", title="Flaky network in the staging cluster")
    code, data, err, modules = _run(search_store, "search", "staging network", "--json")
    assert code == 0, err
    assert data["results"][0]["id"] == "new-one"
    assert modules & HEAVY == set()


def _cache_copy(model_cache: Path, into: Path) -> Path:
    shutil.copytree(model_cache, into)
    [meta] = into.glob("*/meta.json")
    return meta.parent


@pytest.mark.parametrize("damage", ["truncated", "wrong-hash", "other-model"])
def test_damaged_cache_is_exported_again_with_a_notice(
    search_store: Path, embedder: Any, model_cache: Path, tmp_path: Path, damage: str
) -> None:
    cache = tmp_path / "cache"
    folder = _cache_copy(model_cache, cache)
    meta = json.loads((folder / "meta.json").read_text())
    if damage == "truncated":
        data = (folder / "model.onnx").read_bytes()
        (folder / "model.onnx").write_bytes(data[: len(data) // 2])
    elif damage == "wrong-hash":
        meta["sha256"] = "0" * 64
    else:
        meta["source"] = "f" * 64
    if damage != "truncated":
        (folder / "meta.json").write_text(json.dumps(meta))
    env = clean_env(search_store, LORE_MODEL_CACHE=str(cache))
    result = lore("search", "deploy port conflict", "--json", env=env, timeout=300)
    assert result.code == 0, result.err
    notices = [line for line in result.err.splitlines() if "ONNX model cache" in line]
    assert len(notices) == 1 and "damaged" in notices[0] and "exported it again" in notices[0]
    data = json.loads(result.out)
    assert data["mode"] == "hybrid" and data["results"][0]["id"] == "deploy-port-conflict"
    again = json.loads((folder / "meta.json").read_text())
    assert again["sha256"] == meta["sha256"] or damage == "wrong-hash"
    assert (folder / "model.onnx").stat().st_size == again["size"]
    second = lore("search", "deploy port conflict", "--json", env=env, timeout=300)
    assert second.code == 0 and "ONNX" not in second.err  # whole again: no notice


NO_TORCH = "raise ImportError(\"No module named 'torch' (simulated)\")\n"


def _without_torch(tmp_path: Path) -> str:
    shim = tmp_path / "no-torch"
    shim.mkdir()
    for name in ("torch", "sentence_transformers"):
        (shim / f"{name}.py").write_text(NO_TORCH)
    import os

    return os.pathsep.join([str(shim), os.environ.get("PYTHONPATH", "")])


def test_without_torch_the_cached_export_still_serves(
    search_store: Path, embedder: Any, tmp_path: Path
) -> None:
    env = clean_env(search_store, PYTHONPATH=_without_torch(tmp_path))
    result = lore("search", "deploy port conflict", "--json", env=env, timeout=300)
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert data["mode"] == "hybrid" and data["warnings"] == []
    assert data["results"][0]["semantic_score"] is not None


@pytest.mark.parametrize("cause", ["no-torch", "unwritable"])
def test_no_export_possible_means_keyword_only_with_one_warning(
    search_store: Path, tmp_path: Path, cause: str
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    extra = {"LORE_MODEL_CACHE": str(blocker / "cache")}  # cannot be created
    if cause == "no-torch":
        extra = {
            "LORE_MODEL_CACHE": str(tmp_path / "empty-cache"),
            "PYTHONPATH": _without_torch(tmp_path),
        }
    env = clean_env(search_store, **extra)
    result = lore("search", "RLS policy blocks insert", "--json", env=env, timeout=300)
    assert result.code == 0, result.err
    warnings = [line for line in result.err.splitlines() if "warning" in line]
    assert len(warnings) == 1 and "keywords only" in warnings[0], result.err
    assert ("torch" if cause == "no-torch" else "LORE_MODEL_CACHE") in warnings[0]
    assert "Traceback" not in result.err
    data = json.loads(result.out)
    assert data["mode"] == "keyword" and data["results"][0]["id"] == "rls-anon-insert"


def test_keyword_scores_equal_bm25s() -> None:
    """The BM25 of our own (no scipy/numpy to import) scores as bm25s (Lucene variant) did."""
    import bm25s

    from lorebook.index.documents import Document
    from lorebook.index.keyword import K1, B, KeywordIndex, document_terms
    from lorebook.index.synonyms import SynonymTable

    texts = varied_texts()
    docs = [
        Document.from_dict(
            {
                "id": f"d{i}",
                "path": f"d{i}.md",
                "title": t[:60],
                "body": t,
                "tags": ["x"],
                "category": "build" if i % 3 else None,
            }
        )
        for i, t in enumerate(texts)
    ]
    index = KeywordIndex(docs, SynonymTable.from_config(None))
    reference = bm25s.BM25(k1=K1, b=B)
    reference.index([document_terms(d) or [""] for d in docs], show_progress=False)
    for query in [
        "deploy port",
        "kubernetes probe retry",
        "docker compose",
        "café",
        "zzz",
        "SELECT orders",
        "memory chunk stale cache",
    ]:
        raw, similarity = index.scores(query)
        own, extra = index.query_terms(query)
        ids = reference.get_tokens_ids(list(dict.fromkeys(own + extra)))
        want = reference.get_scores(ids) if ids else np.zeros(len(docs))
        assert np.allclose(raw, want, rtol=1e-5, atol=1e-5), query
        assert all(0.0 <= s <= 1.0 for s in similarity)
