"""`lore extract retro`: the common retrospective formats, and each solution paired with the
failure it addresses (same bullet or sub-list, an explicit reference, else related words) —
never every key learning for every failure."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import assert_one_error_line, clean_env, cli_run, lore, stored_actions
from lorebook import Lorebook

WWW = """\
# Sprint 14 retro

Epic: epic-14

### What went well 🎉
- Validation caught the reuse before release
- Pairing sessions were fun

### What went WRONG
1. Refresh tokens were accepted twice
   - root cause: the rotation kept the old token valid
2. Deploy blocked by a port conflict on 5000 — fix: stop the old container first
3. Flaky CI on Mondays

**Action items:**
- Allocate deploy ports from the registry
- Revoke the whole token family on reuse (fixes #1)
- Buy more coffee
"""

SSC = """\
# Start / Stop / Continue

#### start
* Pin the base image digest in the Dockerfile
#### STOP
* Deploying with an unpinned base image
* Merging without review on Fridays
#### Continue
* Small pull requests
"""

FOUR_LS = """\
title: Epic 9 retro
epic: epic-9
Liked:
  - The migration dry-run
Learned:
  - text: Take a backup first
    fixes: 1
  - Index the orders table before the backfill
Lacked:
  - Schema migration ran without a backup
  - summary: Backfill query timed out on the orders table
    severity: high
Longed for:
  - A staging database
"""

JSON_RETRO = json.dumps(
    {
        "what_went_well": ["Dashboards showed the cache hit rate clearly"],
        "what_went_wrong": ["Cache keys collided between tenants", "Release notes were late"],
        "action_items": [
            "Prefix cache keys with the tenant id (re: cache keys collided)",
            "Hire a designer",
        ],
    }
)


def extract(store: Path, tmp_path: Path, name: str, text: str) -> list[dict[str, Any]]:
    """The drafts `lore extract retro` wrote, as {title, solutions, prevention, ...}."""
    path = tmp_path / name
    path.write_text(text)
    result = lore("extract", "retro", str(path), "--json", env=clean_env(store))
    assert result.code == 0, result.err
    book = Lorebook.open(store, env={})
    out = []
    for outcome in json.loads(result.out):
        assert outcome["status"] == "written"
        learning = book.learnings.get(outcome["id"])
        out.append(
            {
                "title": learning.title,
                "solutions": [s.text for s in learning.solutions],
                "prevention": learning.prevention,
                "severity": learning.severity,
                "epic": learning.source.epic,
                "root_cause": learning.sections().get("Root Cause", ""),
            }
        )
    return out


def test_what_went_well_wrong_and_action_items(store: Path, tmp_path: Path) -> None:
    drafts = extract(store, tmp_path, "retro.md", WWW)
    assert [d["title"] for d in drafts] == [
        "Refresh tokens were accepted twice",
        "Deploy blocked by a port conflict on 5000",
        "Flaky CI on Mondays",
    ]
    tokens, deploy, flaky = drafts
    assert tokens["solutions"] == ["Revoke the whole token family on reuse"]  # (fixes #1)
    assert "the rotation kept the old token valid" in tokens["root_cause"]  # its sub-item
    # its own bullet first, then the related action item
    assert deploy["solutions"] == [
        "stop the old container first",
        "Allocate deploy ports from the registry",
    ]
    assert flaky["solutions"] == []  # nothing addresses it: no solution
    # nothing that went well is about these failures: nobody's prevention
    assert [d["prevention"] for d in drafts] == [[], [], []]
    assert {d["epic"] for d in drafts} == {"epic-14"}


def test_start_stop_continue_any_case_and_level(store: Path, tmp_path: Path) -> None:
    drafts = extract(store, tmp_path, "ssc.md", SSC)
    assert [(d["title"], d["solutions"]) for d in drafts] == [
        ("Deploying with an unpinned base image", ["Pin the base image digest in the Dockerfile"]),
        ("Merging without review on Fridays", []),
    ]


def test_four_ls_in_yaml(store: Path, tmp_path: Path) -> None:
    drafts = extract(store, tmp_path, "4ls.yaml", FOUR_LS)
    assert [(d["title"], d["solutions"], d["severity"]) for d in drafts] == [
        ("Schema migration ran without a backup", ["Take a backup first"], "medium"),
        (
            "Backfill query timed out on the orders table",
            ["Index the orders table before the backfill"],
            "high",
        ),
    ]
    assert {d["epic"] for d in drafts} == {"epic-9"}


def test_json_with_a_text_reference(store: Path, tmp_path: Path) -> None:
    drafts = extract(store, tmp_path, "retro.json", JSON_RETRO)
    assert [(d["title"], d["solutions"], d["prevention"]) for d in drafts] == [
        ("Cache keys collided between tenants", ["Prefix cache keys with the tenant id"], []),
        ("Release notes were late", [], []),
    ]


def test_what_went_well_is_prevention_only_for_its_own_failure(store: Path, tmp_path: Path) -> None:
    text = (
        "**What went wrong**\n- Deploy blocked by a port conflict\n- Login page loops\n\n"
        "**What went well**\n- Checking the deploy ports before the release\n"
    )
    drafts = extract(store, tmp_path, "bold.md", text)
    assert [d["prevention"] for d in drafts] == [
        ["Checking the deploy ports before the release"],
        [],
    ]


def test_stdin_markdown_with_a_bold_heading(store: Path) -> None:
    text = "__Things that went wrong__\n- Cache keys collided\n"
    result = cli_run(["extract", "retro", "-", "--json"], input=text, env={"LORE_ROOT": str(store)})
    assert result.code == 0, result.err
    [outcome] = json.loads(result.out)
    assert outcome["title"] == "Cache keys collided"


@pytest.mark.parametrize(
    ("name", "text", "needles"),
    [
        (
            "empty.md",
            "",
            [
                "empty.md: no failures to extract",
                "'What went wrong'",
                "'Start'",
                "'Lacked'",
                "'Action items'",
            ],
        ),
        ("empty.yaml", "", ["empty.yaml: no failures to extract", "'What went wrong'"]),
        (
            "notes.md",
            "# Notes\n\n## Agenda\n- coffee\n",
            ["notes.md: no failures to extract", "headings", "'Stop'"],
        ),
        (
            "well.md",
            "## What went well\n- all of it\n",
            ["well.md: no failures to extract", "found only What went well"],
        ),
        ("r.yaml", "title: x\nagenda: [a]\n", ["r.yaml: no failures to extract", "keys like"]),
        (
            "ref.md",
            "## What went wrong\n- A\n## Action items\n- B (fixes #3)\n",
            ["ref.md:4", "refers to failure #3", "lists 1 failure"],
        ),
        (
            "re.md",
            "## What went wrong\n- Cache keys collided\n## Action items\n"
            "- Hire a designer (re: release notes)\n",
            ["re.md:4", "'release notes'", "names no failure"],
        ),
    ],
)
def test_unknown_or_empty_retro_is_one_line(
    store: Path, tmp_path: Path, name: str, text: str, needles: list[str]
) -> None:
    path = tmp_path / name
    path.write_text(text)
    line = assert_one_error_line(
        cli_run(["extract", "retro", str(path)], env={"LORE_ROOT": str(store)}), *needles
    )
    assert "\n" not in line.strip()
    assert not list((store / "learnings" / "drafts").glob("*.md"))
    assert stored_actions(store) == []
