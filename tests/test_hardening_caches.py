"""Secrets in hand-written files never reach a derived file or a command's output.

A shard line edited by hand, a learning or an expertise file someone pasted a token into: the
catalog, the search manifest, the learnings parse cache, manifests and every read command
redact what they copy or print (and redact before they shorten), while `lore check` still
names the file and line.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import Run, clean_env, git, lore
from lorebook.ids import new_ulid
from lorebook.timeutil import format_ts, utcnow
from search_fixtures import write_learning

TOKEN = "ghp_" + "Zq8Lr2Vt6Xw0Yb4Nc7Md1Pf5Hs9Jk3Ga8Ue"  # a GitHub token's shape (36 after ghp_)
STEM = TOKEN[:8]  # no part of the token that identifies it may survive anywhere
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8Lr2Vt6X"
MARK = "[REDACTED"
OLD = time.time() - 3600  # mtime for hand-written files: older than the caches' racy window


def leaks(text: str) -> list[str]:
    return [s for s in (TOKEN, STEM, AWS_SECRET[:12]) if s in text]


def cache_leaks(root: Path) -> list[str]:
    """Files under .lore/cache whose bytes hold any part of a planted secret."""
    found = []
    for path in (root / ".lore" / "cache").rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            if any(s.encode() in data for s in (TOKEN, STEM, AWS_SECRET[:12])):
                found.append(str(path.relative_to(root)))
    return found


def run(root: Path, *args: str) -> Run:
    result = lore(*args, env=clean_env(root))
    assert not leaks(result.out + result.err), (args, result.out, result.err)
    return result


def plant(root: Path, session: str, **fields: Any) -> dict[str, Any]:
    """Append a hand-written (never redacted) record to the session's shard of today."""
    now = utcnow()
    record: dict[str, Any] = {
        "v": 1, "kind": "action", "id": new_ulid(int(now.timestamp() * 1000)),
        "ts": format_ts(now), "session": session, "agent": "claude", "project": "shop",
        "type": "tool_call", "category": "development", "outcome": "success", "context": {},
        "error": None, "duration_s": None, "parent": None, "epic": None, "issue": None,
        "meta": {},
    }  # fmt: skip
    record.update(fields)
    ts = record["ts"]
    shard = root / "actionlog" / ts[:4] / ts[5:7] / ts[8:10] / f"{session}.jsonl"
    shard.parent.mkdir(parents=True, exist_ok=True)
    with shard.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")
    return record


@pytest.fixture
def edited_log(store: Path) -> Path:
    """A session whose shard carries a token in free-form fields, added by hand."""
    env = clean_env(store)
    assert lore("session", "start", "--id", "s1", "--project", "shop", env=env).code == 0
    assert lore("log", "commit", "--session", "s1", "--project", "shop", env=env).code == 0
    plant(store, "s1", project=f"shop {TOKEN}", agent=f"bot {TOKEN}", epic=f"epic {TOKEN}",
          outcome="failure", error=f"push failed: token {TOKEN} rejected",
          context={"command": f"git push https://x:{TOKEN}@github.com/a/b"})  # fmt: skip
    plant(
        store,
        "s1",
        type="deploy",
        outcome="failure",
        error=f"auth {TOKEN}",
        context={"service": f"api {TOKEN}"},
    )
    return store


# -- the action log: catalog and read commands --------------------------------------------------
def test_catalog_and_log_queries_redact_hand_edited_lines(edited_log: Path) -> None:
    root = edited_log
    for args in (["actions"], ["actions", "--outcome", "failure"], ["sessions"], ["resume"],
                 ["report"], ["report", "--group-by", "type"]):  # fmt: skip
        for form in ([], ["--json"]):
            result = run(root, *args, *form)
            assert result.code == 0, (args, result.err)
    actions = run(root, "actions", "--json").json()
    assert isinstance(actions, list)
    assert any(MARK in json.dumps(a) for a in actions)
    resume = run(root, "resume", "--json").json()
    assert MARK in json.dumps(resume)
    report = run(root, "report", "--json").json()
    assert MARK in json.dumps(report)
    assert (root / ".lore" / "cache" / "catalog.sqlite").exists()
    assert cache_leaks(root) == []


def test_check_still_sees_the_planted_secret(edited_log: Path) -> None:
    result = run(edited_log, "check")
    assert result.code != 0
    assert "s1.jsonl:3" in result.out + result.err


# -- expertise: redact first, then truncate ------------------------------------------------------
def test_expertise_learn_redacts_before_truncating(store: Path) -> None:
    env = clean_env(store)
    assert lore("session", "start", "--id", "s2", env=env).code == 0
    # the 200-character cut of a failure's error falls inside the token, or the key
    plant(store, "s2", outcome="failure", error="x" * 184 + f" {TOKEN} rejected")
    plant(
        store,
        "s2",
        type="deploy",
        outcome="failure",
        error="y" * 150 + f" aws_secret_access_key={AWS_SECRET}",
    )
    result = run(store, "expertise", "learn", "--session", "s2", "--no-commit", "--json")
    assert result.code == 0, result.err
    text = (store / ".expertise" / "general.yaml").read_text(encoding="utf-8")
    assert leaks(text) == [] and AWS_SECRET[:8] not in text, text
    assert MARK in text
    assert AWS_SECRET[:8] not in result.out


def test_expertise_prompt_redacts_before_truncating(store: Path) -> None:
    folder = store / ".expertise"
    folder.mkdir(exist_ok=True)
    issue = "a" * 40 + f" {TOKEN}"  # the prompt shows an issue's first 50 characters
    (folder / "general.yaml").write_text(
        "domain: general\nlearned_from_failures:\n"
        f"  - issue: {json.dumps(issue)}\n    error: {json.dumps('e' * 90 + ' ' + TOKEN)}\n",
        encoding="utf-8",
    )
    prompt = run(store, "expertise", "prompt", "general")  # (run: no part of it leaks)
    assert prompt.code == 0, prompt.err
    assert "a" * 40 in prompt.out
    shown = run(store, "expertise", "show", "general")
    assert shown.code == 0 and MARK in shown.out, shown.err


# -- manifests and filters ------------------------------------------------------------------------
def test_export_manifest_and_report_filters_are_redacted(edited_log: Path) -> None:
    root = edited_log
    secret_project = f"shop password={TOKEN}"
    out = root / "export.jsonl"
    result = run(root, "export", "--project", secret_project, "-o", str(out), "--json")
    if result.code == 0:  # (an id that looks like a secret may be refused outright)
        manifest = Path(f"{out}.manifest.json").read_text(encoding="utf-8")
        assert leaks(manifest) == [] and MARK in manifest
        assert leaks(out.read_text(encoding="utf-8")) == []
    result = run(root, "report", "--project", secret_project, "--json")
    if result.code == 0:
        assert MARK in json.dumps(result.json()["filters"])
    result = run(root, "report", "daily", "--project", secret_project)
    for path in (root / "docs").rglob("*"):
        if path.is_file():
            assert leaks(path.read_text(encoding="utf-8")) == [], path


# -- learnings: parse cache, listing, show, stats -------------------------------------------------
def secret_learning(root: Path) -> Path:
    path = write_learning(
        root, "lsn-20261101-secret-push", title=f"Push with token {TOKEN} failed",
        category="deployment", severity="high", tags=["git"], created="2026-11-01",
        body=f"## Problem\nThe remote said: bad credentials for {TOKEN}.\n\n"
             f"## Key Takeaway\nNever paste {TOKEN} into a remote URL; git push uses the "
             "credential helper.",
    )  # fmt: skip
    os.utime(path, (OLD, OLD))
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "a learning with a pasted token")
    return path


def test_learnings_cache_and_read_commands_redact(store: Path) -> None:
    secret_learning(store)
    lid = "lsn-20261101-secret-push"
    for args in (["learnings"], ["learnings", "--json"], ["show", lid], ["show", lid, "--json"],
                 ["stats"], ["stats", "--json"], ["stats", lid, "--json"], ["drafts"]):  # fmt: skip
        result = run(store, *args)
        assert result.code == 0, (args, result.err)
    assert MARK in run(store, "show", lid).out
    assert MARK in run(store, "learnings", "--json").out
    assert (store / ".lore" / "cache" / "learnings-v1.json").exists()
    assert cache_leaks(store) == []
    result = run(store, "check")
    assert result.code != 0 and "lsn-20261101-secret-push.md" in result.out + result.err


# -- the search index ---------------------------------------------------------------------------
def test_search_index_manifest_and_output_redact(store: Path) -> None:
    secret_learning(store)
    assert run(store, "index").code == 0
    for args in (["search", "git push remote token"],
                 ["search", "bad credentials", "--mode", "keyword", "--json"],
                 ["preflight", "push to the git remote"]):  # fmt: skip
        result = run(store, *args)
        assert result.code == 0, (args, result.err)
    found = run(store, "search", "git push credential", "--json").json()
    assert isinstance(found, dict) and found["results"]
    assert MARK in json.dumps(found["results"][0])
    assert (store / ".lore" / "cache" / "index" / "manifest.json").exists()
    assert cache_leaks(store) == []


# -- drafts from documents: redact, then shorten titles and file names ---------------------------
def names_and_texts(folder: Path) -> str:
    """Every file name and text under `folder`, lower-cased (slugs lower-case a token)."""
    parts = []
    for path in folder.rglob("*"):
        parts.append(path.name)
        if path.is_file():
            parts.append(path.read_text(encoding="utf-8"))
    return "\n".join(parts).lower()


def slug_leaks(text: str) -> bool:
    """Whether lower-cased `text` holds the token's start, as written or as a slug has it."""
    stem = STEM.lower()
    return stem in text or stem.replace("_", "-") in text or stem.replace("_", "") in text


def test_retro_draft_titles_are_redacted_before_they_are_cut(store: Path) -> None:
    retro = store / "retro.md"
    summary = "x" * 100 + f" {TOKEN} was pasted into the CI logs"  # the title keeps 120 chars
    retro.write_text(
        "# Retro epic 7\n\n## Failure patterns\n"
        f"- {summary}\n\n## Key learnings\n- Rotate the token and use the secret store\n",
        encoding="utf-8",
    )
    result = run(store, "extract", "retro", str(retro), "--json")
    assert result.code == 0, result.err
    written = names_and_texts(store / "learnings")
    assert not slug_leaks(written), written
    assert not slug_leaks(result.out.lower())


def test_skipped_line_reasons_show_no_prefix_of_a_bad_value(store: Path) -> None:
    env = clean_env(store)
    assert lore("log", "commit", "--session", "s3", env=env).code == 0
    plant(store, "s3", id=f"id-{TOKEN}")  # not a ULID: skipped, with a reason
    for args in (["actions"], ["actions", "--json"], ["sessions"]):
        result = run(store, *args)
        assert result.code == 0, result.err
    result = run(store, "check")
    assert result.code != 0 and "s3.jsonl:2" in result.out + result.err
    assert "'id' is not a ULID" in result.out + result.err
    assert cache_leaks(store) == []
