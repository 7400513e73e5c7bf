"""`lore eval` and lorebook.index.evaluate: golden-set parsing, metrics, baseline, CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import assert_one_error_line, clean_env, cli_run, lore
from lorebook.index.evaluate import (
    BASELINE,
    GoldenQuery,
    GoldenSet,
    GoldenSetError,
    Metrics,
    WordOverlap,
    first_hit,
    load_golden,
    mrr_at,
    parse_golden,
    recall_at,
    run_eval,
)

# -- metrics ------------------------------------------------------------------------------------


def test_first_hit_is_the_rank_of_the_first_relevant_id() -> None:
    assert first_hit(["a", "b", "c"], {"c", "b"}) == 2
    assert first_hit(["a", "b"], {"z"}) is None
    assert first_hit([], {"a"}) is None


def test_recall_and_mrr_follow_their_definitions() -> None:
    ranks = [1, None, 3, 6, 11]
    assert recall_at(1, ranks) == pytest.approx(1 / 5)
    assert recall_at(5, ranks) == pytest.approx(2 / 5)
    assert recall_at(10, ranks) == pytest.approx(3 / 5)
    # MRR@10 counts 1/1 + 1/3 + 1/6; rank 11 is past the cut-off
    assert mrr_at(10, ranks) == pytest.approx((1 + 1 / 3 + 1 / 6) / 5)
    assert recall_at(5, []) == 0.0 and mrr_at(10, []) == 0.0
    m = Metrics.of(ranks)
    assert (m.recall_at_1, m.recall_at_5, m.queries) == (0.2, 0.4, 5)
    assert m.to_dict()["mrr@10"] == pytest.approx(0.3)


def test_run_eval_ranks_every_query_in_every_mode_and_the_baseline() -> None:
    golden = GoldenSet(
        Path("g.yaml"),
        [
            GoldenQuery("alpha problem", ("a",), 2),
            GoldenQuery("beta problem", ("b", "c"), 4),
        ],
    )
    # a toy ranking: keyword mode always answers in id order, semantic reverses it
    order = ["a", "b", "c", "d"]
    calls: list[tuple[str, str, int]] = []

    def search_fn(query: str, mode: str, limit: int) -> list[str]:
        calls.append((query, mode, limit))
        return (order if mode == "keyword" else order[::-1])[:limit]

    baseline = WordOverlap({"a": "alpha problem here", "b": "beta problem", "d": "unrelated"})
    report = run_eval(golden, search_fn, modes=["keyword", "semantic"], baseline=baseline)
    assert report.modes == ["keyword", "semantic", BASELINE]
    assert report.ranks["keyword"] == [1, 2]
    assert report.ranks["semantic"] == [4, 2]  # "c" is second from the end
    assert report.ranks[BASELINE] == [1, 1]
    assert {c[2] for c in calls} == {10}  # MRR@10 needs ten ranks
    assert report.metrics()["semantic"].recall_at_1 == 0.0
    assert [q.query for q in report.misses("semantic", k=3)] == ["alpha problem"]
    data = report.to_dict()
    assert data["queries"] == 2 and data["per_query"][1]["rank"]["keyword"] == 2


def test_word_overlap_ranks_by_jaccard_and_ignores_unrelated_learnings() -> None:
    baseline = WordOverlap(
        {
            "rls": "RLS policy preventing anonymous INSERT operations",
            "long": "RLS policy notes: lots of other words about something else entirely",
            "none": "deploy checklist",
        }
    )
    assert baseline.search("RLS policy blocks INSERT", 5) == ["rls", "long"]
    assert baseline.search("rls", 1) == ["rls"]  # case-insensitive; shorter text wins the tie
    assert baseline.search("???", 5) == []


# -- golden set ---------------------------------------------------------------------------------


def test_parse_golden_accepts_a_mapping_or_a_bare_list_and_single_ids(tmp_path: Path) -> None:
    golden = parse_golden(
        "# team golden set\nqueries:\n  - query: why slow\n    expected: a\n"
        "  - query: ' merge conflicts '\n    expected: [b, c]\n",
        tmp_path / "eval.yaml",
    )
    assert [(q.query, q.expected, q.line) for q in golden.queries] == [
        ("why slow", ("a",), 3),
        ("merge conflicts", ("b", "c"), 5),
    ]
    bare = parse_golden("- query: x\n  expected: [y]\n", tmp_path / "eval.yaml")
    assert bare.queries == [GoldenQuery("x", ("y",), 1)]


@pytest.mark.parametrize(
    ("text", "where", "what"),
    [
        ("queries:\n  - query: a\n    expected: [x]\n  - query: [b\n", ":4:", "invalid YAML"),
        ("queries:\n  - query: a\n    expected: [x]\n  - expected: [y]\n", ":4:", "`query`"),
        ("queries:\n  - query: a\n    expected: []\n", ":3:", "`expected`"),
        ("queries:\n  - just a string\n", ":2:", "`query:` and `expected:`"),
        ("queries: 3\n", ":1:", "must be a list"),
        ("other: 1\n", ":1:", "`queries:`"),
        ("queries: []\n", ":", "no queries"),
        ("", ":", "no queries"),
    ],
)
def test_parse_golden_rejects_bad_input_naming_file_and_line(
    tmp_path: Path, text: str, where: str, what: str
) -> None:
    with pytest.raises(GoldenSetError) as err:
        parse_golden(text, tmp_path / "eval.yaml")
    message = str(err.value)
    assert f"eval.yaml{where}" in message, message
    assert what in message, message


def test_load_golden_names_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(GoldenSetError, match=r"nope\.yaml: no such golden-set file"):
        load_golden(tmp_path / "nope.yaml")


def test_restrict_to_drops_unknown_ids_with_a_warning_and_fails_when_nothing_is_left() -> None:
    golden = GoldenSet(
        Path("g.yaml"), [GoldenQuery("one", ("a", "ghost"), 2), GoldenQuery("two", ("ghost",), 4)]
    )
    kept = golden.restrict_to({"a", "b"})
    assert kept.queries == [GoldenQuery("one", ("a",), 2)]
    assert kept.warnings == [
        "g.yaml:2: unknown learning id 'ghost' ignored",
        "g.yaml:4: unknown learning id 'ghost' ignored",
        "g.yaml:4: query 'two' skipped (no known id)",
    ]
    with pytest.raises(GoldenSetError, match="none of the expected learning ids exist"):
        golden.restrict_to({"zzz"})


# -- lore eval on a real store ------------------------------------------------------------------

LEARNINGS = {
    "2026-11-20-rls-blocks-insert": (
        "RLS policy blocks INSERT with the anon key",
        "database",
        "Row level security rejected anonymous inserts; use the service-role key for admin "
        "mutations.",
    ),
    "2026-11-20-docker-cache-miss": (
        "Docker layer cache misses after touching package.json",
        "build",
        "Copy the lockfile before the sources so dependency layers stay cached.",
    ),
    "2026-11-20-flaky-timezone-test": (
        "Date tests fail around midnight UTC",
        "testing",
        "Freeze the clock in tests instead of reading the wall time.",
    ),
}

GOLDEN = """\
queries:
  - query: anonymous insert rejected by row level security policy
    expected: [2026-11-20-rls-blocks-insert]
  - query: docker build cache invalidated when package json changes
    expected: [2026-11-20-docker-cache-miss]
  - query: date tests failing at midnight
    expected: [2026-11-20-flaky-timezone-test]
"""


def write_learning(root: Path, learning_id: str, title: str, category: str, text: str) -> None:
    (root / "learnings").mkdir(exist_ok=True)
    (root / "learnings" / f"{learning_id}.md").write_text(
        f"---\nid: {learning_id}\ntitle: {title}\nkind: lesson\ncategory: {category}\n"
        f"severity: medium\nstatus: published\ncreated: 2026-11-20\n---\n"
        f"## Problem\n{text}\n\n## Key Takeaway\n{text}\n",
        encoding="utf-8",
    )


@pytest.fixture
def eval_store(store: Path) -> Path:
    for learning_id, (title, category, text) in LEARNINGS.items():
        write_learning(store, learning_id, title, category, text)
    (store / "learnings" / "eval.yaml").write_text(GOLDEN, encoding="utf-8")
    return store


@pytest.fixture
def keyword_only(eval_store: Path) -> Path:
    """The same store with embeddings switched off in its config (no model load: fast)."""
    (eval_store / ".lore" / "config.yaml").write_text(
        "embedding:\n  enabled: false\n", encoding="utf-8"
    )
    return eval_store


def test_lore_eval_json_on_a_real_index_finds_the_golden_learnings(eval_store: Path) -> None:
    result = cli_run(["--root", str(eval_store), "eval", "--json"])
    assert result.code == 0, result.err
    data = result.json()
    assert isinstance(data, dict)
    assert data["queries"] == 3
    assert data["queries_file"].endswith("learnings/eval.yaml")
    assert set(data["metrics"]) == {"hybrid", "keyword", "semantic", "baseline"}
    for mode in ("hybrid", "semantic", "baseline"):
        assert data["metrics"][mode]["recall@5"] == 1.0, (mode, data["per_query"])
    assert [q["line"] for q in data["per_query"]] == [2, 4, 6]
    assert all(q["rank"]["hybrid"] is not None for q in data["per_query"])
    # the index lives in the derived cache, nothing else was written
    assert (eval_store / ".lore" / "cache" / "index").is_dir()


def test_lore_eval_prints_a_table_in_a_real_process(keyword_only: Path) -> None:
    result = lore("eval", env=clean_env(keyword_only))
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert lines[0].endswith("eval.yaml: 3 golden queries")
    header = next(line for line in lines if line.startswith("mode"))
    assert header.split() == ["mode", "recall@1", "recall@5", "MRR@10"]
    rows = {
        line.split()[0]: line.split()[1:]
        for line in lines
        if line[:1].isalpha() and line.split()[0] in {"hybrid", "keyword", "semantic", "baseline"}
    }
    assert set(rows) == {"hybrid", "keyword", "semantic", "baseline"}
    assert rows["baseline"][1] == "1.00"  # every golden query shares words with its learning
    assert rows["keyword"][1] == "1.00"


def test_lore_eval_only_selected_modes(keyword_only: Path) -> None:
    result = cli_run(["--root", str(keyword_only), "eval", "--mode", "keyword", "--json"])
    assert result.code == 0, result.err
    data = result.json()
    assert isinstance(data, dict)
    assert list(data["metrics"]) == ["keyword", "baseline"]


def test_lore_eval_unknown_expected_id_warns_with_file_and_line(keyword_only: Path) -> None:
    golden = keyword_only / "learnings" / "eval.yaml"
    golden.write_text(GOLDEN + "  - query: something\n    expected: [no-such-learning]\n")
    result = cli_run(["--root", str(keyword_only), "eval"])
    assert result.code == 0, result.err
    assert "eval.yaml:8: unknown learning id 'no-such-learning' ignored" in result.err
    assert "eval.yaml: 3 golden queries" in result.out


def test_lore_eval_all_ids_unknown_is_an_error(keyword_only: Path) -> None:
    golden = keyword_only / "learnings" / "eval.yaml"
    golden.write_text("queries:\n  - query: x\n    expected: [ghost]\n")
    result = cli_run(["--root", str(keyword_only), "eval"])
    assert_one_error_line(result, "none of the expected learning ids exist")


def test_lore_eval_missing_default_file_is_one_error_line(store: Path) -> None:
    result = lore("eval", env=clean_env(store))
    assert_one_error_line(result, "learnings/eval.yaml", "no such golden-set file")


def test_lore_eval_missing_queries_file(eval_store: Path, tmp_path: Path) -> None:
    result = cli_run(["--root", str(eval_store), "eval", "--queries", str(tmp_path / "nope.yaml")])
    assert_one_error_line(result, "nope.yaml", "no such golden-set file")


def test_lore_eval_malformed_yaml_names_file_and_line(eval_store: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("queries:\n  - query: fine\n    expected: [a]\n  - query: 'unclosed\n")
    result = cli_run(["--root", str(eval_store), "eval", "--queries", str(bad)])
    assert_one_error_line(result, "bad.yaml:4:", "invalid YAML")


def test_lore_eval_empty_queries_list_is_an_error_under_json(eval_store: Path) -> None:
    (eval_store / "learnings" / "eval.yaml").write_text("queries: []\n")
    result = cli_run(["--root", str(eval_store), "eval", "--json"])
    assert result.code == 1 and result.out == ""
    assert "no queries" in json.loads(result.err)["error"]


def test_lore_eval_outside_a_store_tells_the_user_to_init(repo: Path) -> None:
    result = lore("eval", env=clean_env(repo))
    assert_one_error_line(result, "lore init")


def test_repository_golden_set_is_valid_and_points_at_real_learnings() -> None:
    root = Path(__file__).resolve().parent.parent
    golden = load_golden(root / "learnings" / "eval.yaml")
    ids = {p.stem for p in (root / "learnings").glob("*.md")}
    assert 8 <= len(golden.queries) <= 15
    assert golden.restrict_to(ids).warnings == []
    assert {i for q in golden.queries for i in q.expected} == ids  # every learning is covered
