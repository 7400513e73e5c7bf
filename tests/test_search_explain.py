"""`lore search --explain`: each result's keyword, dense and boost parts, through the real `lore`
(with LORE_ROOT and with `--root`), in `--json` and in the Python API."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from conftest import assert_one_error_line, clean_env, lore
from search_fixtures import open_book

PARTS = {"keyword", "dense", "boost", "score", "relevance", "success", "recency", "specificity",
         "stale_factor"}  # fmt: skip


def _check_parts(result: dict[str, Any]) -> None:
    parts = result["explain"]
    assert set(parts) == PARTS
    assert parts["keyword"] + parts["dense"] + parts["boost"] == pytest.approx(
        parts["score"], abs=2e-4
    )
    assert parts["score"] == pytest.approx(result["score"], abs=1e-4)  # the ranking score


def test_explain_json_parts_sum_to_the_score_that_ranks(search_store: Path) -> None:
    run = lore("search", "RLS policy blocks insert", "--explain", "--json",
               "--threshold", "0", "--limit", "4", env=clean_env(search_store))  # fmt: skip
    assert run.code == 0, run.err
    data = json.loads(run.out)
    assert data["mode"] == "hybrid" and len(data["results"]) == 4
    for result in data["results"]:
        _check_parts(result)
    top = data["results"][0]
    assert top["id"] == "rls-anon-insert"
    assert top["explain"]["keyword"] > 0 and top["explain"]["dense"] > 0
    assert top["explain"]["relevance"] == 1.0
    scores = [r["score"] for r in data["results"]]
    assert scores == sorted(scores, reverse=True)
    plain = json.loads(lore("search", "RLS policy blocks insert", "--json", "--threshold", "0",
                            "--limit", "4", env=clean_env(search_store)).out)  # fmt: skip
    assert "explain" not in plain["results"][0]  # the contract without the flag is unchanged
    assert [r["score"] for r in plain["results"]] == scores


def test_explain_keyword_mode_has_no_dense_part(search_store: Path) -> None:
    run = lore("search", "deploy port", "--mode", "keyword", "--explain", "--json",
               env=clean_env(search_store))  # fmt: skip
    assert run.code == 0, run.err
    results = json.loads(run.out)["results"]
    assert results
    for result in results:
        _check_parts(result)
        assert result["explain"]["dense"] == 0


def test_explain_text_on_the_fast_and_the_click_path(search_store: Path) -> None:
    fast = lore("search", "RLS", "policy", "blocks", "insert", "--explain",
                env=clean_env(search_store))  # fmt: skip
    rooted = lore("--root", str(search_store), "search", "RLS", "policy", "blocks", "insert",
                   "--explain", env=clean_env())  # fmt: skip
    assert fast.code == 0, fast.err
    assert rooted.code == 0, rooted.err
    assert fast.out == rooted.out
    lines = fast.out.splitlines()
    explained = [line for line in lines if line.strip().startswith("Explain:")]
    shown = [line for line in lines if " match · score " in line]
    assert explained and len(explained) == len(shown)
    pattern = re.compile(
        r"Explain: keyword (\d\.\d+) \(similarity [\d.]+\) \+ dense (\d\.\d+) \(similarity "
        r"[\d.]+\) \+ boost (\d\.\d+) \(success [\d.]+, recency [\d.]+, specificity [\d.]+\) "
        r"= score (\d\.\d+)"
    )
    for line, head in zip(explained, shown, strict=True):
        found = pattern.search(line)
        assert found, line
        kw, dense, boost, score = (float(g) for g in found.groups())
        assert kw + dense + boost == pytest.approx(score, abs=2e-3)
        shown_score = float(head.split(" match · score ")[1].split()[0])
        assert shown_score == pytest.approx(score, abs=6e-3)  # the score shown is the one ranked
    plain = lore("search", "RLS policy blocks insert", env=clean_env(search_store))
    assert plain.code == 0 and "Explain:" not in plain.out


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["search", "q", "--explain=yes"], "--explain"),
        (["search", "--explain"], "query"),
        (["search", "q", "--explain", "--limit", "0"], "limit"),
    ],
)
def test_explain_bad_input_is_one_error_line(
    search_store: Path, args: list[str], needle: str
) -> None:
    for root_args in ([], ["--root", str(search_store)]):  # LORE_ROOT, then `--root`
        run = lore(*root_args, *args, env=clean_env(search_store))
        assert run.code == 1, (args, run.out)
        assert run.out == ""
        message = assert_one_error_line(run)
        assert needle.lower() in message.lower()


def test_explain_json_bad_input_is_json_error(search_store: Path) -> None:
    run = lore("search", "q", "--explain=yes", "--json", env=clean_env(search_store))
    assert run.code == 1 and "Traceback" not in run.err


def test_python_api_explains_every_result(search_store: Path) -> None:
    book = open_book(search_store)
    hits = book.index.search("RLS policy blocks insert", threshold=0, limit=3)
    assert hits
    for hit in hits:
        parts = hit.explain()
        assert parts is not None and set(parts) == PARTS
        assert hit.parts is not None
        assert hit.parts.keyword + hit.parts.dense + hit.parts.boost == hit.score
        assert hit.to_dict(explain=True)["explain"] == parts
        assert "explain" not in hit.to_dict()
    book.index.close()


def test_relative_scores_are_shares_of_the_best_and_keep_the_order() -> None:
    from lorebook.render.search import relative_scores

    assert relative_scores([0.8, 0.4, 0.2]) == [1.0, 0.5, 0.25]
    assert relative_scores([None, None]) == [None, None]
    assert relative_scores([0.0]) == [0.0]


def test_draft_review_says_where_a_draft_came_from_and_what_it_changes() -> None:
    from lorebook.render.learnings import draft_review

    draft = {"id": "d1", "title": "T", "body": "new line", "tags": ["x"], "anchors": ["a.py"],
             "source": {"epic": "E-1", "session": None}}  # fmt: skip
    draft["anchors"] = ["a.py", "b.py:load"]
    changed = [
        {"anchor": "a.py", "reason": "changed", "commits": ["abc1234"], "uncommitted": False}
    ]
    text = draft_review(draft, changed=changed, branch="review/d1", replaces={"old": "old line"})
    assert "epic `E-1`" in text and "session" not in text.split("**Tags")[0].split("E-1")[1]
    assert "`a.py` (stale: changed (abc1234))" in text and "`b.py:load` (ok)" in text
    assert "on branch `review/d1`" in text
    assert "-old line" in text and "+new line" in text
