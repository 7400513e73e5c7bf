"""`lore search` / `SearchIndex.search`: hybrid ranking, synonyms, filters, hiding, JSON contract —
against the embedded index and a real Chroma server."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from conftest import assert_one_error_line, clean_env, cli_run, git, lore
from lorebook.index import Filters
from search_fixtures import Backend, anchored_rls_learning, open_book, write_learning

JSON_FIELDS = {
    "id",
    "title",
    "kind",
    "category",
    "severity",
    "status",
    "tags",
    "created",
    "score",
    "similarity",
    "keyword_score",
    "semantic_score",
    "takeaway",
    "applications",
    "success_rate",
    "stale",
    "recommendation",
    "path",
}


def search(root: Path, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    result = cli_run(["search", *args, "--json"], env={"LORE_ROOT": str(root), **(env or {})})
    assert result.code == 0, result.err
    data = result.json()
    assert isinstance(data, dict)
    return data


def ids(data: dict[str, Any]) -> list[str]:
    return [r["id"] for r in data["results"]]


@pytest.fixture
def prepared(search_store: Path, backend: Backend) -> tuple[Path, dict[str, str]]:
    backend.prepare(search_store, f"t-{uuid.uuid4().hex[:12]}")
    return search_store, backend.env


def test_rls_query_finds_row_level_security_lesson(prepared: tuple[Path, dict[str, str]]) -> None:
    root, env = prepared
    data = search(root, "RLS policy blocks insert", env=env)
    assert data["mode"] == "hybrid"
    assert ids(data)[0] == "rls-anon-insert"
    top = data["results"][0]
    assert set(top) == JSON_FIELDS
    assert top["takeaway"].startswith("Check the table's policies")
    assert top["applications"] == 0 and top["success_rate"] is None
    assert top["recommendation"].startswith("UNPROVEN")
    assert top["path"] == "learnings/rls-anon-insert.md"
    assert 0 < top["similarity"] <= 1 and top["keyword_score"] > 0 and top["semantic_score"] > 0


def test_semantic_mode_finds_paraphrase_without_shared_words(
    prepared: tuple[Path, dict[str, str]],
) -> None:
    root, env = prepared
    data = search(root, "my spreadsheet import runs out of RAM", "--mode", "semantic", env=env)
    assert ids(data)[0] == "pandas-memory"
    assert data["results"][0]["keyword_score"] == 0


def test_superseded_and_retired_hidden_unless_asked(prepared: tuple[Path, dict[str, str]]) -> None:
    root, env = prepared
    assert "old-cache-advice" not in ids(search(root, "bundler build cache stale", env=env))
    assert "old-cache-advice" in ids(search(root, "bundler build cache stale", "--all", env=env))
    shown = search(root, "flaky browser tests", "--status", "retired", env=env)
    assert ids(shown) == ["retired-flaky"]


def test_incremental_update_and_delete(prepared: tuple[Path, dict[str, str]]) -> None:
    root, env = prepared
    book = open_book(root, env)
    first = book.index.update()
    assert len(first.added) == 7 and first.rebuilt
    again = book.index.update()
    assert (again.added, again.updated, again.removed, again.unchanged) == ([], [], [], 7)
    path = root / "learnings" / "pandas-memory.md"
    path.write_text(path.read_text().replace("Reading a large CSV", "Loading a huge CSV"))
    (root / "learnings" / "jwt-clock-skew.md").unlink()
    report = book.index.update()
    assert report.updated == ["learnings/pandas-memory.md"]
    assert report.removed == ["learnings/jwt-clock-skew.md"]
    assert report.unchanged == 5
    hits = book.index.search("huge CSV", limit=7, refresh=False)
    assert hits[0].id == "pandas-memory" and hits[0].title == "Loading a huge CSV exhausts memory"
    assert "jwt-clock-skew" not in [h.id for h in book.index.search("token clock skew")]
    assert book.index.store.count() == sum(
        e.chunks for e in book.index._keywords.manifest()[0].files.values()
    )
    book.index.close()


def test_rebuild_gives_identical_results(prepared: tuple[Path, dict[str, str]]) -> None:
    root, env = prepared
    before = search(root, "deploy port already in use", env=env)
    result = cli_run(["index", "--rebuild", "--json"], env={"LORE_ROOT": str(root), **env})
    assert result.code == 0, result.err
    report = result.json()
    assert isinstance(report, dict) and report["rebuilt"] and report["added"] == 7
    after = search(root, "deploy port already in use", env=env)
    assert [(r["id"], r["score"]) for r in after["results"]] == [
        (r["id"], r["score"]) for r in before["results"]
    ]


# -- embedded-only behaviour -----------------------------------------------------------------
def test_keyword_mode_uses_synonyms_and_stemming(search_store: Path) -> None:
    data = search(search_store, "auth tokens rejected", "--mode", "keyword")
    assert ids(data)[0] == "jwt-clock-skew"  # auth -> authentication
    data = search(search_store, "k8s probe killing", "--mode", "keyword")
    assert ids(data)[0] == "k8s-liveness"  # killing -> kill (stem), k8s -> kubernetes
    assert data["results"][0]["semantic_score"] is None


def test_filters(search_store: Path) -> None:
    assert set(
        ids(
            search(
                search_store,
                "deploy",
                "--category",
                "deployment",
                "--limit",
                "9",
                "--threshold",
                "0",
            )
        )
    ) == {"deploy-port-conflict", "k8s-liveness"}
    assert ids(
        search(
            search_store,
            "deploy",
            "--severity",
            "high",
            "--category",
            "deployment",
            "--threshold",
            "0",
        )
    ) == ["deploy-port-conflict"]
    assert ids(search(search_store, "deploy", "--tag", "k8s", "--threshold", "0")) == [
        "k8s-liveness"
    ]
    dated = search(
        search_store,
        "deploy",
        "--since",
        "2026-07-01",
        "--until",
        "2026-09-01",
        "--threshold",
        "0",
        "--limit",
        "9",
    )
    assert set(ids(dated)) == {"k8s-liveness", "jwt-clock-skew"}
    assert search(search_store, "deploy", "--kind", "pattern")["results"] == []
    book = open_book(search_store)
    hits = book.index.search("deploy", filters=Filters(tags=("DOCKER",)), threshold=0)
    assert [h.id for h in hits] == ["deploy-port-conflict"]


def test_threshold_drops_unrelated_results(search_store: Path) -> None:
    data = search(search_store, "quantum chromodynamics lattice gauge")
    assert data["results"] == []
    human = cli_run(
        ["search", "quantum chromodynamics lattice gauge"], env={"LORE_ROOT": str(search_store)}
    )
    assert human.code == 0 and "No learning matches" in human.out


def test_limit_and_order(search_store: Path) -> None:
    data = search(search_store, "deploy", "--limit", "2", "--threshold", "0")
    scores = [r["score"] for r in data["results"]]
    assert len(scores) == 2 and scores == sorted(scores, reverse=True)


def test_recommendation_from_stats(search_store: Path) -> None:
    book = open_book(search_store)
    figures = {"rls-anon-insert": (4, 1.0, 1), "deploy-port-conflict": (5, 0.7, 2)}
    book.index.stats_snapshot = lambda: lambda i: figures.get(i, (0, None, 1))
    top = book.index.search("RLS insert anonymous", limit=1)[0].to_dict()
    assert (top["applications"], top["success_rate"]) == (4, 1.0)
    assert top["recommendation"] == "HIGH SUCCESS — apply preemptively"
    port = book.index.search("port 8080 in use", limit=1)[0].to_dict()
    assert port["recommendation"].startswith("MODERATE")


def test_human_output(search_store: Path) -> None:
    result = cli_run(["search", "RLS", "blocks", "insert"], env={"LORE_ROOT": str(search_store)})
    assert result.code == 0, result.err
    assert "1. Row level security policy prevents anonymous INSERT operations" in result.out
    assert "Takeaway: Check the table's policies" in result.out
    assert "Recommendation: UNPROVEN" in result.out


# -- bad input -------------------------------------------------------------------------------
def test_empty_query_is_one_error_line(search_store: Path) -> None:
    result = cli_run(["search", "  "], env={"LORE_ROOT": str(search_store)})
    assert_one_error_line(result, "empty query")
    result = cli_run(["search"], env={"LORE_ROOT": str(search_store)})
    assert result.code == 1 and "QUERY" in result.err


def test_huge_query_is_searched_with_a_warning(search_store: Path) -> None:
    query = "deploy port conflict " * 5000  # ~105 KB
    result = cli_run(["search", query, "--json"], env={"LORE_ROOT": str(search_store)})
    assert result.code == 0, result.err
    assert "searched its first 10000" in result.err
    data = result.json()
    assert isinstance(data, dict) and data["results"][0]["id"] == "deploy-port-conflict"


def test_bad_mode_and_limit(search_store: Path) -> None:
    env = {"LORE_ROOT": str(search_store)}
    assert cli_run(["search", "x", "--mode", "fuzzy"], env=env).code == 1
    assert_one_error_line(cli_run(["search", "x", "--limit", "0"], env=env), "limit")


def test_unparseable_learning_is_skipped_with_file_line(search_store: Path) -> None:
    bad = search_store / "learnings" / "broken.md"
    bad.write_text("---\ntitle: [unclosed\nstatus: published\n---\nbody\n")
    (search_store / "learnings" / "no-front.md").write_text("just text\n")
    result = cli_run(["index"], env={"LORE_ROOT": str(search_store)})
    assert result.code == 0, result.err
    assert "learnings/broken.md:" in result.err and "skipped" in result.err
    assert "learnings/no-front.md:1:" in result.err
    assert "7 added" in result.out and "2 skipped" in result.out
    assert ids(search(search_store, "RLS insert"))[0] == "rls-anon-insert"


def test_search_without_store_is_one_error_line(tmp_path: Path) -> None:
    result = cli_run(["search", "x"], env={"LORE_ROOT": str(tmp_path)})
    assert_one_error_line(result, "lore init")


def test_unreachable_server_names_the_url(search_store: Path) -> None:
    from search_fixtures import free_port

    url = f"http://127.0.0.1:{free_port()}"
    result = cli_run(
        ["search", "deploy"], env={"LORE_ROOT": str(search_store), "LORE_CHROMA_URL": url}
    )
    assert_one_error_line(result, "cannot reach the Chroma server", url)


def test_real_process_search_json(search_store: Path) -> None:
    done = lore(
        "search", "RLS policy blocks insert", "--json", env=clean_env(search_store), timeout=300
    )
    assert done.code == 0, done.err
    data = done.json()
    assert isinstance(data, dict) and data["results"][0]["id"] == "rls-anon-insert"
    write_learning(
        search_store,
        "rls-second",
        title="RLS bypass with the service role",
        body="## Key Takeaway\nThe service role bypasses row level security.",
    )
    done = lore("index", env=clean_env(search_store), timeout=300)
    assert done.code == 0, done.err
    assert "1 added" in done.out and "7 unchanged" in done.out


def test_bad_dates_are_one_error_line(search_store: Path) -> None:
    result = cli_run(
        ["search", "deploy", "--since", "yesterday"], env={"LORE_ROOT": str(search_store)}
    )
    assert_one_error_line(result, "--since 'yesterday' is not a date (YYYY-MM-DD)")


def test_no_refresh_searches_the_index_as_it_is(search_store: Path) -> None:
    search(search_store, "deploy")  # builds the index
    write_learning(search_store, "fresh-one", title="Zebracorn outage in the payment service")
    stale = search(search_store, "zebracorn outage", "--no-refresh")
    assert "fresh-one" not in ids(stale)
    assert ids(search(search_store, "zebracorn outage"))[0] == "fresh-one"


def test_applications_from_the_log_drive_the_recommendation(search_store: Path) -> None:
    book = open_book(search_store)
    for _ in range(3):
        book.knowledge.apply("rls-anon-insert", outcome="success")
    book.knowledge.apply("deploy-port-conflict", outcome="success")
    book.knowledge.apply("deploy-port-conflict", outcome="failure")
    rls = search(search_store, "RLS insert anonymous")["results"][0]
    assert (rls["id"], rls["applications"], rls["success_rate"]) == ("rls-anon-insert", 3, 1.0)
    assert rls["recommendation"] == "HIGH SUCCESS — apply preemptively"
    port = search(search_store, "port 8080 already in use")["results"][0]
    assert (port["applications"], port["success_rate"]) == (2, 0.5)
    assert port["recommendation"].startswith("LOW SUCCESS")


def test_stale_learning_is_flagged_and_down_ranked(search_store: Path) -> None:
    policies = anchored_rls_learning(search_store)
    fresh = search(search_store, "RLS policy blocks insert")["results"][0]
    assert (fresh["id"], fresh["stale"]) == ("rls-anon-insert", False)
    assert "stale" not in fresh["recommendation"]

    policies.write_text("create policy anon_insert on items with check (true);\n")
    git(search_store, "commit", "-q", "-a", "-m", "change the policy")
    stale = search(search_store, "RLS policy blocks insert")["results"][0]
    assert (stale["id"], stale["stale"]) == ("rls-anon-insert", True)
    assert "stale" in stale["recommendation"]
    assert stale["score"] < fresh["score"]  # same similarity, down-ranked
    assert stale["similarity"] == fresh["similarity"]
    # the answer is cached per commit; a further commit is seen again
    assert (search_store / ".lore" / "cache" / "stale-v2.json").is_file()
