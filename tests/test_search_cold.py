"""A cold keyword search and a keyword preflight: light (no model, no vector store, no
front-matter reader, no click) and the same answers as the full engine's keyword mode.

The saved keyword index (`.lore/cache/index/keyword.jsonl`) is checked against an index built
from the manifest in memory, over a varied store and every filter, through both the fast path
and with `--root`; a damaged or stale saved index is rebuilt, and it holds no secret.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import clean_env, lore
from lorebook import Lorebook, SearchFilters, UsageError
from lorebook.cli.searchspec import SEARCH
from lorebook.cmdline.parser import parse
from search_fixtures import LEARNINGS, write_learning

HEAVY = {
    "torch",
    "chromadb",
    "sentence_transformers",
    "onnxruntime",
    "pydantic",
    "click",
    "transformers",
    "yaml",
    "ruamel",
    "frontmatter",
}

WRAPPER = """
import json, sys
import lorebook.cli
code = lorebook.cli.main(sys.argv[1:])
sys.stdout.flush()
print("\\n" + json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""

WORDS = [
    "container",
    "docker",
    "timeout",
    "pool",
    "connection",
    "database",
    "postgres",
    "index",
    "cache",
    "memory",
    "leak",
    "retry",
    "token",
    "auth",
    "session",
    "kubernetes",
    "probe",
    "build",
    "bundler",
    "flaky",
    "test",
    "migration",
    "schema",
    "lock",
    "queue",
    "worker",
]
CATEGORIES = ("database", "deployment", "security", "build", "testing", None)
STATUSES = ("published", "published", "published", "superseded", "retired", "draft")


def _run(root: Path, *args: str) -> tuple[int, str, str, set[str]]:
    done = subprocess.run(
        [sys.executable, "-c", WRAPPER, *args],
        capture_output=True,
        text=True,
        env=clean_env(root),
        timeout=120,
    )
    out, _, last = done.stdout.rstrip().rpartition("\n")
    report = json.loads(last)
    return report["code"], out, done.stderr, {m.split(".")[0] for m in report["modules"]}


def _settle(root: Path) -> None:
    """Learning files written a minute ago: a file changed within a second of its indexing is
    hashed again by the next refresh (racy stat), which would read (parse) it."""
    for path in (root / "learnings").rglob("*.md"):
        st = path.stat()
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - 60_000_000_000))


def _index(root: Path) -> None:
    """`lore index`, then one search: staleness (which reads every learning) is computed once
    per commit and cached; what is measured is a search of an index and caches that are fresh."""
    assert lore("index", env=clean_env(root)).code == 0
    _age_manifest(root)
    assert lore("search", "warm", "--mode", "keyword", env=clean_env(root)).code == 0
    assert (root / ".lore" / "cache" / "stale-v2.json").is_file()


def _age_manifest(root: Path) -> None:
    """The manifest written a minute ago: the saved keyword index trusts a manifest's identity
    (inode, size, times) only when it was written well before the index was saved."""
    path = root / ".lore" / "cache" / "index" / "manifest.json"
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - 60_000_000_000))


def _age_learnings(root: Path) -> None:
    """Every learning file written a minute ago: a file modified within a second of its
    hashing is hashed again (racy stat), and the saved keyword index is not trusted for it."""
    for path in (root / "learnings").glob("*.md"):
        st = path.stat()
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - 60_000_000_000))


def _keyword_store(root: Path) -> Path:
    (root / ".lore" / "config.yaml").write_text("embedding:\n  enabled: false\n")
    return root


@pytest.fixture
def varied(store: Path) -> Path:
    """60 generated learnings (drafts, superseded, retired, tags, dates, categories) plus the
    hand-written ones, indexed by keywords."""
    rng = random.Random(13)
    _keyword_store(store)
    for learning_id, fields in LEARNINGS.items():
        write_learning(store, learning_id, **fields)
    for n in range(60):
        status = rng.choice(STATUSES)
        fields: dict[str, Any] = {
            "title": " ".join(rng.sample(WORDS, 5)).capitalize(),
            "severity": rng.choice(("high", "medium", "low")),
            "tags": rng.sample(WORDS, rng.randint(0, 3)),
            "created": f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
            "body": "## Problem\n"
            + " ".join(rng.choices(WORDS, k=40))
            + "\n\n## Key Takeaway\n"
            + " ".join(rng.choices(WORDS, k=12)),
        }
        category = rng.choice(CATEGORIES)
        if category:
            fields["category"] = category
        if n % 17 == 0:
            fields["supersedes"] = [f"gen-{n + 1:03d}"]
        folder = "learnings/drafts" if status == "draft" else "learnings"
        if status != "draft":
            fields["status"] = status
        write_learning(store, f"gen-{n:03d}", folder=folder, **fields)
    _settle(store)
    _index(store)
    return store


FILTERS: list[dict[str, Any]] = [
    {},
    {"category": "deployment"},
    {"severity": "high"},
    {"kind": "lesson", "tags": ("docker",)},
    {"status": "draft"},
    {"status": "superseded"},
    {"include_hidden": True},
    {"created_from": "2026-06-01", "created_to": "2026-09-30"},
]
QUERIES = [
    "deploy port conflict",
    "connection pool timeout",
    "token auth session",
    "kubernetes probe",
    "flaky test retry",
    "zzz nothing",
    "cache memory leak",
]


def _cli_args(query: str, filters: dict[str, Any]) -> list[str]:
    args = [query, "--mode", "keyword", "--json", "--limit", "8", "--threshold", "0.05"]
    flags = {
        "category": "--category",
        "severity": "--severity",
        "kind": "--kind",
        "status": "--status",
        "created_from": "--since",
        "created_to": "--until",
    }
    for name, value in filters.items():
        if name == "tags":
            for tag in value:
                args += ["--tag", tag]
        elif name == "include_hidden":
            args.append("--all")
        else:
            args += [flags[name], value]
    return args


def _search(index: Any, query: str, filters: dict[str, Any]) -> list[dict[str, Any]]:
    found = index.search(
        query, mode="keyword", limit=8, threshold=0.05, filters=SearchFilters(**filters)
    )
    return [r.to_dict() for r in found]


def _built_in_memory(root: Path) -> Any:
    """The full engine's keyword mode with the keyword index built from the manifest in memory
    (the saved one removed first; this search saves it again)."""
    (root / ".lore" / "cache" / "index" / "keyword.jsonl").unlink(missing_ok=True)
    index = Lorebook.open(root, env={}).index
    index._saved_search = lambda *args: None  # the full path: refresh, manifest, rank
    assert index._keywords.keyword_index(index._keywords.manifest()[0]) is not None
    return index


def _saved(root: Path) -> Any:
    """The engine as a new process sees it; `_keywords._saved` tells that it answered from the saved
    keyword index alone."""
    return Lorebook.open(root, env={}).index


def _reference(root: Path, query: str, filters: dict[str, Any]) -> list[dict[str, Any]]:
    return _search(_built_in_memory(root), query, filters)


def test_keyword_search_imports_nothing_heavy(varied: Path) -> None:
    code, out, err, modules = _run(
        varied, "search", "deploy port conflict", "--mode", "keyword", "--json"
    )
    assert code == 0, err
    assert json.loads(out)["results"][0]["id"] == "deploy-port-conflict"
    assert modules & HEAVY == set(), modules & HEAVY
    assert (varied / ".lore" / "cache" / "index" / "keyword.jsonl").is_file()
    code, out, err, modules = _run(
        varied, "search", "deploy", "--mode", "keyword", "--no-refresh"
    )  # from the saved keyword index
    assert code == 0, err
    assert "Deploy fails when the old container" in out
    assert modules & HEAVY == set(), modules & HEAVY


def test_keyword_preflight_imports_nothing_heavy(varied: Path) -> None:
    code, out, err, modules = _run(
        varied,
        "preflight",
        "ship the docker deploy",
        "--mode",
        "keyword",
        "--phase",
        "deploy",
        "--json",
    )
    assert code == 0, err
    brief = json.loads(out)
    assert brief["learnings"][0]["id"] == "deploy-port-conflict"
    assert "Run docker compose down before up" in brief["prevention"]
    assert modules & HEAVY == set(), modules & HEAVY


def test_keyword_search_on_an_index_with_vectors_loads_no_model(search_store: Path) -> None:
    """The default configuration (a hybrid index with vectors): a keyword search of the fresh
    index still loads neither the model nor Chroma."""
    _settle(search_store)
    _index(search_store)
    code, out, err, modules = _run(
        search_store, "search", "RLS policy insert", "--mode", "keyword", "--json"
    )
    assert code == 0, err
    assert json.loads(out)["results"][0]["id"] == "rls-anon-insert"
    assert modules & HEAVY == set(), modules & HEAVY


def test_saved_keyword_index_answers_as_the_engine_built_in_memory(varied: Path) -> None:
    """Every query x filter set: the engine reading the saved keyword index (a new process's
    view) and the engine with the index built in memory agree exactly; so do the cold CLI (fast
    path) and with `--root` on a sample."""
    memory = _built_in_memory(varied)
    answered = 0
    for query in QUERIES:
        for filters in FILTERS:
            want = _search(memory, query, filters)
            saved = _saved(varied)  # reads keyword.jsonl alone
            assert _search(saved, query, filters) == want, (query, filters)
            assert saved._keywords._saved is not None
            answered += bool(want)
    assert answered > len(QUERIES) * 2
    for query, filters in [
        (QUERIES[0], FILTERS[0]),
        (QUERIES[1], FILTERS[2]),
        (QUERIES[2], FILTERS[3]),
        (QUERIES[4], FILTERS[7]),
    ]:
        want = _search(memory, query, filters)
        fast = lore("search", *_cli_args(query, filters), env=clean_env(varied))
        assert fast.code == 0, fast.err
        assert json.loads(fast.out)["results"] == want, (query, filters)
        if filters in (FILTERS[0], FILTERS[3]):
            rooted = lore(
                "--root", str(varied), "search", *_cli_args(query, filters), env=clean_env()
            )
            assert rooted.code == 0, rooted.err
            assert json.loads(rooted.out)["results"] == want, (query, filters)


def test_keyword_preflight_equals_the_engine(varied: Path) -> None:
    for phase in ("plan", "deploy"):
        cli = lore(
            "preflight",
            "docker deploy port timeout",
            "--mode",
            "keyword",
            "--phase",
            phase,
            "--json",
            env=clean_env(varied),
        )
        assert cli.code == 0, cli.err
        (varied / ".lore" / "cache" / "index" / "keyword.jsonl").unlink()
        book = Lorebook.open(varied, env={})
        want = book.preflight("docker deploy port timeout", phase=phase, mode="keyword")
        got = json.loads(cli.out)
        assert got["learnings"] == want["learnings"] and got["text"] == want["text"]
        assert got["learnings"]


def _header(saved: Path) -> dict[str, Any]:
    return dict(json.loads(saved.read_bytes().split(b"\n", 1)[0]))


def test_damaged_or_stale_saved_index_is_rebuilt(varied: Path) -> None:
    """Damaged postings, a damaged first line, another manifest's index, an empty file, a
    document line that is not the document: the right answer, a notice, and a sound index."""
    saved = varied / ".lore" / "cache" / "index" / "keyword.jsonl"
    want = _reference(varied, "deploy port conflict", {})
    time.sleep(1.1)  # the manifest's identity is trusted a second after it was written
    assert lore("search", "x", "--mode", "keyword", env=clean_env(varied)).code == 0
    good = saved.read_bytes()
    head, docs = good.split(b"\n", 1)
    data = json.loads(head)
    for term in data["postings"]:
        data["postings"][term] = "999999 1 nonsense"
    swapped = docs.replace(b'"id":"deploy-port-conflict"', b'"id":"deploy-port-conflicT"')
    damages = {
        "postings": json.dumps(data).encode() + b"\n" + docs,
        "first line": b"{not json\n" + docs,
        "document": head + b"\n" + swapped,
        "empty": b"",
        "stale": json.dumps({**data, "key": "other", "stamp": [0]}).encode() + b"\n" + docs,
    }
    for name, damage in damages.items():
        saved.write_bytes(damage)
        run = lore(
            "search",
            "deploy port conflict",
            "--mode",
            "keyword",
            "--json",
            "--threshold",
            "0.05",
            "--limit",
            "8",
            env=clean_env(varied),
        )
        assert run.code == 0 and "Traceback" not in run.err, (name, run.err)
        assert json.loads(run.out)["results"] == want, name
        if name != "stale":
            assert "keyword index" in run.err and "damaged" in run.err, (name, run.err)
        assert "999999 1 nonsense" not in _header(saved)["postings"].values()
        assert b"conflicT" not in saved.read_bytes()
    # a learning edited: the manifest changes, the saved index is not used for it
    write_learning(
        varied,
        "deploy-port-conflict",
        title="Nothing relevant here",
        body="## Key Takeaway\nUnrelated now.",
    )
    run = lore(
        "search", "container holds port 8080", "--mode", "keyword", "--json", env=clean_env(varied)
    )
    assert "deploy-port-conflict" not in [r["id"] for r in json.loads(run.out)["results"]]


def test_saved_keyword_index_holds_no_secret(store: Path) -> None:
    _keyword_store(store)
    token = "ghp_" + "Q7x" * 12
    write_learning(
        store,
        "leaky",
        title="Pushing with a token fails",
        body=f"## Problem\nexport GITHUB_TOKEN={token}\n\n## Key Takeaway\nRotate it.",
    )
    run = lore("search", "pushing token", "--mode", "keyword", env=clean_env(store))
    assert run.code == 0, run.err
    saved = (store / ".lore" / "cache" / "index" / "keyword.jsonl").read_text()
    assert token.lower() not in saved.lower() and "q7xq7x" not in saved.lower()
    assert token not in run.out


def test_search_arguments_and_odd_forms(store: Path) -> None:
    words = ["a", "--tag", "x", "b", "--tag", "y", "--mode=keyword"]
    values = parse(SEARCH, words, "lore search", "")
    assert values["query"] == ("a", "b")  # words on both sides of an option: one query
    assert (values["tags"], values["mode"], values["limit"]) == (("x", "y"), "keyword", 5)
    for odd, needle in (
        (["--mode", "fuzzy", "q"], "fuzzy"),
        (["--threshold", "2", "q"], "expected a number from 0 to 1"),
        ([], "required: QUERY"),
        (["-x", "q"], "-x"),
        (["q", "--limit", "0"], "expected an integer of at least 1"),
    ):
        with pytest.raises(UsageError, match=re.escape(needle)):
            parse(SEARCH, odd, "lore search", "")
    bad = lore("search", "q", "--mode", "fuzzy", env=clean_env(store))
    assert bad.code == 1 and "fuzzy" in bad.err and "Traceback" not in bad.err
    bad = lore("preflight", "q", "--phase", "later", env=clean_env(store))
    assert bad.code == 1 and "later" in bad.err and "Traceback" not in bad.err


def test_search_without_an_index_prints_no_secret(store: Path) -> None:
    """No manifest (the cache deleted, `--no-refresh`): the keyword index built from the files
    in memory is made of redacted documents, as the indexer's is."""
    _keyword_store(store)
    token = "ghp_" + "Q7x" * 12
    write_learning(
        store,
        "leaky",
        title=f"Push fails with token {token}",
        body=f"## Key Takeaway\nRotate {token} now.",
    )
    for args in (["--json"], []):
        run = lore(
            "search", "push fails", "--mode", "keyword", "--no-refresh", *args, env=clean_env(store)
        )
        assert run.code == 0, run.err
        assert "leaky" in run.out or "Push fails" in run.out
        assert token not in run.out and token not in run.err
    assert not (store / ".lore" / "cache" / "index" / "keyword.jsonl").exists()


def test_every_page_size_answers_as_the_engine(varied: Path) -> None:
    """--limit from 1 to past the number of matches: the same results in the same order, the
    documents read for those shown only."""
    memory = _built_in_memory(varied)
    _age_manifest(varied)
    assert _search(memory, "warm", {}) is not None  # the saved index keyed to the aged file
    for limit in (1, 2, 3, 5, 13, 200):
        for query in QUERIES[:5]:
            for filters in (FILTERS[0], FILTERS[6], FILTERS[1]):
                want = memory.search(
                    query,
                    mode="keyword",
                    limit=limit,
                    threshold=0.05,
                    filters=SearchFilters(**filters),
                )
                saved = _saved(varied)
                got = saved.search(
                    query,
                    mode="keyword",
                    limit=limit,
                    threshold=0.05,
                    filters=SearchFilters(**filters),
                )
                assert saved._keywords._saved is not None
                assert [r.to_dict() for r in got] == [r.to_dict() for r in want]
                assert [r.doc for r in got] == [r.doc for r in want], (limit, query, filters)
    run = lore(
        "search",
        "docker deploy",
        "--mode",
        "keyword",
        "--json",
        "--limit",
        "2",
        env=clean_env(varied),
    )
    want = memory.search("docker deploy", mode="keyword", limit=2)
    assert json.loads(run.out)["results"] == [r.to_dict() for r in want]


def test_a_learning_changed_removed_or_added_between_calls(varied: Path) -> None:
    """Between two searches a learning is edited, one removed, one added: the fast path sees
    it by the files' stat, leaves the search to the full path (which refreshes the index and
    saves the keyword index again), and answers from the new saved index after."""
    query, args = "docker container port", ["--limit", "8", "--threshold", "0.05"]
    steps = {
        "changed": lambda: write_learning(
            varied,
            "deploy-port-conflict",
            title="Nothing relevant here",
            body="## Key Takeaway\nUnrelated now.",
        ),
        "removed": lambda: (varied / "learnings" / "gen-003.md").unlink(),
        "added": lambda: write_learning(
            varied,
            "fresh-one",
            title="Docker container port clash",
            tags=["docker"],
            body="## Key Takeaway\nFree the port before the container starts.",
        ),
    }
    for step, change in steps.items():
        before = _saved(varied)
        assert before.search(query, mode="keyword") is not None
        assert before._keywords._saved is not None
        change()
        _age_learnings(varied)  # edited a minute ago: their stat is trusted once re-hashed
        run = lore("search", query, "--mode", "keyword", "--json", *args, env=clean_env(varied))
        assert run.code == 0, run.err
        memory = _built_in_memory(varied)
        want = _search(memory, query, {})
        assert json.loads(run.out)["results"] == want, step
        ids = [r["id"] for r in want]
        assert ("deploy-port-conflict" not in ids) if step == "changed" else True
        assert ("gen-003" not in ids) if step == "removed" else True
        assert ("fresh-one" in ids) if step == "added" else True
        _age_manifest(varied)
        assert lore("search", "x", "--mode", "keyword", env=clean_env(varied)).code == 0
        saved = _saved(varied)
        assert _search(saved, query, {}) == want and saved._keywords._saved is not None, step
        # --no-refresh answers from the index as it is, on both paths
        unseen = write_learning(varied, "unseen", title="Docker container port", body="x")
        kept = _saved(varied).search(query, mode="keyword", refresh=False, threshold=0.05)
        full = _built_in_memory(varied).search(query, mode="keyword", refresh=False, threshold=0.05)
        assert [r.to_dict() for r in kept] == [r.to_dict() for r in full], step
        assert "unseen" not in [r.id for r in kept]
        unseen.unlink()


def test_saved_keyword_index_and_results_hold_no_secret(store: Path) -> None:
    """A secret in a learning's title, tags and body: the saved index (postings, ranking
    fields, documents) holds only the redacted text, and so do the fast path's results."""
    _keyword_store(store)
    token = "ghp_" + "Z9k" * 12
    write_learning(
        store,
        "leaky",
        title=f"Push fails with {token}",
        tags=["push", token],
        body=f"## Problem\nexport GITHUB_TOKEN={token}\n\n## Key Takeaway\n{token}",
    )
    _settle(store)
    assert lore("index", env=clean_env(store)).code == 0
    _age_manifest(store)
    assert lore("search", "push", "--mode", "keyword", env=clean_env(store)).code == 0
    saved = (store / ".lore" / "cache" / "index" / "keyword.jsonl").read_bytes().lower()
    assert token.lower().encode() not in saved and b"z9kz9k" not in saved
    for args in (["--json"], []):
        run = lore("search", "push fails", "--mode", "keyword", *args, env=clean_env(store))
        assert run.code == 0 and ("leaky" in run.out or "Push fails" in run.out), run.err
        assert token not in run.out and token not in run.err
    index = _saved(store)
    found = index.search("push fails", mode="keyword")
    assert index._keywords._saved is not None
    assert found and token not in json.dumps(found[0].to_dict())
