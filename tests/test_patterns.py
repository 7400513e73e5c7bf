"""`lore pattern new|record`, `lore apply` and `lore extract retro`: good and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import assert_one_error_line, clean_env, cli_run, lore, stored_actions
from lorebook import Lorebook


def env_of(store: Path) -> dict[str, str]:
    return {"LORE_ROOT": str(store)}


def drafts(root: Path) -> list[Path]:
    return sorted((root / "learnings" / "drafts").glob("*.md"))


def test_pattern_new_writes_solutions_with_ids(store: Path) -> None:
    result = lore(
        "pattern",
        "new",
        "--title",
        "RLS policy blocks INSERT",
        "--category",
        "database",
        "--severity",
        "high",
        "--tags",
        "rls,supabase",
        "--solution",
        "Use the service-role key",
        "--solution",
        "Use the CLI",
        "--prevention",
        "Check RLS policies first",
        "--json",
        env=clean_env(store),
    )
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert (data["kind"], data["status"], data["severity"]) == ("pattern", "draft", "high")
    assert data["solutions"] == [
        {"id": "s1", "text": "Use the service-role key"},
        {"id": "s2", "text": "Use the CLI"},
    ]
    assert data["prevention"] == ["Check RLS policies first"]
    learning = Lorebook.open(store, env={}).learnings.get(data["id"])
    assert "- s1: Use the service-role key" in learning.sections()["Solution"]


def test_pattern_record_and_apply_append_actions(store: Path) -> None:
    book = Lorebook.open(store, env={})
    pattern = book.knowledge.new_pattern(title="Flaky port", solutions=["Ask the registry"])
    result = cli_run(
        [
            "pattern",
            "record",
            pattern.id,
            "--solution",
            "s1",
            "--success",
            "--minutes",
            "7.5",
            "--via-search",
            "--epic",
            "e-3",
            "--note",
            "quick",
        ],
        env=env_of(store),
    )
    assert result.code == 0, result.err
    [action] = stored_actions(store)
    assert action["id"] == result.out.strip()
    assert (action["type"], action["outcome"], action["epic"]) == ("occurrence", "success", "e-3")
    assert action["context"] == {
        "learning": pattern.id,
        "solution": "s1",
        "minutes": 7.5,
        "via_search": True,
        "note": "quick",
    }
    applied = lore(
        "apply",
        pattern.id,
        "--outcome",
        "failure",
        "--note",
        "did not help",
        "--json",
        env=clean_env(store),
    )
    assert applied.code == 0, applied.err
    data = json.loads(applied.out)
    assert (data["type"], data["outcome"], data["category"]) == (
        "apply_learning",
        "failure",
        "learning",
    )
    assert data["context"]["learning"] == pattern.id


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (
            ["pattern", "record", "{pid}", "--solution", "s9", "--success"],
            ["has no solution 's9'", "its solutions: s1"],
        ),
        (["pattern", "record", "{pid}", "--solution", "s1"], ["--success or --failure"]),
        (
            ["pattern", "record", "{pid}", "--solution", "s1", "--success", "--minutes", "-3"],
            ["--minutes", "non-negative"],
        ),
        (
            ["pattern", "record", "{pid}", "--solution", "s1", "--success", "--minutes", "soon"],
            ["--minutes", "soon"],
        ),
        (
            ["pattern", "record", "nope", "--solution", "s1", "--success"],
            ["no learning or draft with id 'nope'"],
        ),
        (
            ["pattern", "record", "{lesson}", "--solution", "s1", "--success"],
            ["is a lesson, not a pattern"],
        ),
        (["apply", "nope", "--outcome", "success"], ["no learning or draft with id 'nope'"]),
        (["apply", "{lesson}", "--outcome", "maybe"], ["--outcome", "maybe"]),
        (["apply", "{lesson}"], ["--outcome"]),
        (["apply", "a/b", "--outcome", "success"], ["invalid learning id"]),
        (["pattern", "new", "--title", " "], ["title"]),
    ],
)
def test_bad_input_is_one_line_and_logs_nothing(
    store: Path, args: list[str], needles: list[str]
) -> None:
    book = Lorebook.open(store, env={})
    pid = book.knowledge.new_pattern(title="Flaky port", solutions=["Ask the registry"]).id
    lesson = book.learnings.new(title="A lesson").id
    argv = [a.format(pid=pid, lesson=lesson) for a in args]
    assert_one_error_line(cli_run(argv, env=env_of(store)), *needles)
    assert stored_actions(store) == []
    assert len(drafts(store)) == 2


RETRO_YAML = """\
title: Epic 12 retrospective
sd_id: epic-12
learning_category: security
failure_patterns:
  - Refresh tokens were accepted twice
  - summary: Deploy blocked by a port conflict
    severity: high
    solution: Ask the port registry
key_learnings:
  - "Revoke the whole token family on reuse (fixes #1)"
what_went_well:
  - Validation caught refresh tokens accepted twice
success_patterns: [Small commits per fix]
"""

RETRO_MD = """\
# Epic 12 retrospective

Epic: epic-12

## Failure patterns
- Refresh tokens were accepted twice
- Deploy blocked by a port conflict

## Key learnings
1. Revoke the whole token family on reuse (fixes #1)

## What went well
- [x] Validation caught refresh tokens accepted twice
"""


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("retro.yaml", RETRO_YAML),
        ("retro.md", RETRO_MD),
        (
            "retro.json",
            json.dumps(
                {
                    "failure_patterns": [
                        "Refresh tokens were accepted twice",
                        "Deploy blocked by a port conflict",
                    ],
                    "lessons_learned": ["Revoke the whole token family on reuse (fixes #1)"],
                    "what_went_well": ["Validation caught refresh tokens accepted twice"],
                    "epic": "epic-12",
                }
            ),
        ),
    ],
)
def test_extract_retro_makes_pattern_drafts(
    store: Path, tmp_path: Path, name: str, text: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    result = lore("extract", "retro", str(path), "--json", env=clean_env(store))
    assert result.code == 0, result.err
    outcomes = json.loads(result.out)
    assert [o["status"] for o in outcomes] == ["written", "written"]
    book = Lorebook.open(store, env={})
    first, second = (book.learnings.get(o["id"]) for o in outcomes)
    assert first.kind == "pattern" and first.title == "Refresh tokens were accepted twice"
    assert first.solutions[0].text == "Revoke the whole token family on reuse"
    assert first.prevention == ["Validation caught refresh tokens accepted twice"]
    assert first.source.epic == "epic-12" and "retro" in first.tags
    assert second.title == "Deploy blocked by a port conflict"
    assert second.prevention == []  # what went well is not every failure's prevention
    if name == "retro.yaml":
        # its own solution only: the key learning addresses the first failure
        assert [s.text for s in second.solutions] == ["Ask the port registry"]
        assert second.severity == "high" and first.category == "security"
        assert "Small commits per fix" not in first.prevention  # related to no failure
    else:
        assert second.solutions == []
    # the same retrospective again: near-duplicates, nothing new written
    again = lore("extract", "retro", str(path), env=clean_env(store))
    assert again.code == 0
    assert again.out.count("not written: near-duplicate") == 2
    assert len(drafts(store)) == 2


@pytest.mark.parametrize(
    ("name", "text", "needles"),
    [
        ("r.yaml", "failure_patterns: [a\n", ["r.yaml:1", "invalid YAML"]),
        ("r.yaml", "title: x\n", ["r.yaml", "no failures to extract"]),
        ("r.yaml", "title: x\nfailure_patterns: 3\n", ["r.yaml:2", "must be a list"]),
        ("r.yaml", "failure_patterns:\n  - {severity: high}\n", ["r.yaml:1", "'summary'"]),
        (
            "r.yaml",
            "failure_patterns: [ok]\nkey_learnings:\n  - [1]\n",
            ["r.yaml:2", "'key_learnings' item must be text"],
        ),
        ("r.json", '{"failure_patterns": [1,\n}', ["r.json:2", "invalid JSON"]),
        ("r.md", "# Retro\n\n## Notes\n- nothing\n", ["r.md", "no failures to extract"]),
        ("r.yaml", "x: &a [1]\ny: *a\n", ["r.yaml:2", "aliases"]),
    ],
)
def test_extract_retro_bad_input(
    store: Path, tmp_path: Path, name: str, text: str, needles: list[str]
) -> None:
    path = tmp_path / name
    path.write_text(text)
    assert_one_error_line(cli_run(["extract", "retro", str(path)], env=env_of(store)), *needles)
    assert drafts(store) == [] and stored_actions(store) == []


def test_extract_retro_from_stdin_yaml_with_a_comment_and_markdown(store: Path) -> None:
    yaml_text = "# retrospective of epic 12\n" + RETRO_YAML
    result = cli_run(["extract", "retro", "-", "--json"], input=yaml_text, env=env_of(store))
    assert result.code == 0, result.err
    assert len(json.loads(result.out)) == 2
    md = RETRO_MD.replace("Refresh tokens were accepted twice", "Cache keys collided")
    result = cli_run(["extract", "retro", "-", "--json"], input=md, env=env_of(store))
    assert result.code == 0, result.err
    outcomes = json.loads(result.out)
    assert outcomes[0]["status"] == "written"
    assert outcomes[0]["title"] == "Cache keys collided"  # read as Markdown
