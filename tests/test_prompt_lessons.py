"""Prompt-time lessons (`lore hook user-prompt-submit`) as Claude Code runs the hook: a real
subprocess fed Claude's payload. A long natural prompt still gets its lesson, the action log
plays no part in the answer, and eight agents prompting at once all get theirs."""

from __future__ import annotations

import json
import os
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from conftest import LORE, clean_env, lore, stored_actions
from lorebook import Lorebook
from search_fixtures import LEARNINGS, age_learnings, write_learning

SID = "5b7a1f0e-2c1d-4e8a-9f00-{:012d}"
# a loaded test machine needs longer than the default 1 s for a cold process; the budget
# itself is tested in test_hooks.py
GENEROUS = "hooks:\n  budget_seconds: 60\nembedding:\n  enabled: false\n"

MIGRATION = {
    "title": "A migration adding a column with a default locks a big table",
    "category": "database", "severity": "high", "tags": ["postgres", "alembic", "migration"],
    "created": "2026-10-20",
    "body": "## Problem\nALTER TABLE with a default rewrote the table under an exclusive lock.\n\n"
            "## Key Takeaway\nAdd the column nullable, backfill in batches, then set the default.",
}  # fmt: skip
# several sentences of ordinary chat around a few technical words, none of them the title's
# exact phrasing
LONG_PROMPT = (
    "Morning! Heads up, the release got stuck yesterday evening. The alembic upgrade on the "
    "orders table just hung for twenty minutes and every request to checkout timed out while "
    "it ran, so we had to kill it. The migration only adds one column with a default value, "
    "nothing fancy. What would be the safe way to ship this? I would love your take on it."
)
PROMPTS = {  # learning id -> a long natural prompt that needs it
    "alembic-default-lock": LONG_PROMPT,
    "rls-anon-insert": (
        "Good morning! I hope the weekend went well. So yesterday I was working on the signup "
        "flow again and whenever a new visitor registers from the browser, the insert just "
        "fails with permission denied for table profiles. It might be something with supabase "
        "but I am honestly not sure where to look. Could you take a look? Thanks a lot!"),
    "deploy-port-conflict": (
        "Hey, quick one before lunch. I tried to roll out the new version of the billing "
        "service this morning and the container refuses to start, it keeps saying the address "
        "is already in use on 8080. It worked fine last week and nobody changed the compose "
        "file as far as I know. Can you get it running again? Much appreciated."),
    "jwt-clock-skew": (
        "So this is a weird one and it has been bugging me all afternoon. Some of our users get "
        "logged out right after they sign in, but only on one of the servers. The jwt looks "
        "valid when I decode it by hand, yet the API rejects it as issued in the future. Would "
        "you mind digging into it with me? I have no idea why it only happens there."),
    "k8s-liveness": (
        "Hi there. After we added the big warm-up step to the search service, the pods keep "
        "restarting in a loop and never become ready. The logs look normal until they stop, "
        "and then kubectl shows another restart because the liveness check failed. I am a bit "
        "lost, I thought the deployment was fine. Can you suggest what to change?"),
    "pandas-memory": (
        "Okay so I have a favour to ask. The nightly report job crashed again last night, the "
        "box ran out of memory while it was loading the export, which is a CSV of about eleven "
        "gigabytes now. We use pandas for the whole thing. I would rather not buy a bigger "
        "machine, so could you see how we can make it fit? No rush."),
}  # fmt: skip


@pytest.fixture
def lessons(store: Path) -> Path:
    """A store with the search fixtures' learnings and the migration lesson, indexed by
    keywords (`lore index`), as a user has it."""
    (store / ".lore" / "config.yaml").write_text(GENEROUS)
    for learning_id, fields in LEARNINGS.items():
        write_learning(store, learning_id, **fields)
    write_learning(store, "alembic-default-lock", **MIGRATION)
    age_learnings(store)
    assert lore("index", env=clean_env(store)).code == 0
    return store


def payload(root: Path, prompt: str, n: int = 0) -> str:
    """A UserPromptSubmit payload as Claude Code 2.1 sends it."""
    return json.dumps({
        "session_id": SID.format(n), "transcript_path": str(root / "t.jsonl"), "cwd": str(root),
        "permission_mode": "default", "hook_event_name": "UserPromptSubmit", "prompt": prompt,
    })  # fmt: skip


def injected(out: str) -> str:
    return str(json.loads(out)["hookSpecificOutput"]["additionalContext"]) if out.strip() else ""


def prompt_hook(root: Path, prompt: str, n: int = 0) -> str:
    stdin = payload(root, prompt, n)
    done = lore("hook", "user-prompt-submit", cwd=root, env=clean_env(), stdin=stdin)
    assert (done.code, done.err) == (0, ""), done.err
    return injected(done.out)


@pytest.mark.parametrize("learning_id", sorted(PROMPTS))
def test_a_long_natural_prompt_gets_its_lesson(lessons: Path, learning_id: str) -> None:
    text = prompt_hook(lessons, PROMPTS[learning_id])
    assert learning_id in text, text
    assert text.count("\n- ") <= 3  # the lesson, not the whole store


def test_lore_index_saves_the_keyword_index_the_hook_reads(lessons: Path) -> None:
    """At 10,000 learnings, building the keyword index from the manifest takes longer than the
    hook's budget: `lore index` saves it, so the hook never has to."""
    saved = lessons / ".lore" / "cache" / "index" / "keyword.jsonl"
    assert saved.is_file()
    assert json.loads(saved.read_bytes().split(b"\n", 1)[0])["keys"]


def test_the_hook_reads_only_the_prompts_terms_from_the_sqlite_copy(lessons: Path) -> None:
    """With `keyword.sqlite` beside it, the JSON index (parsed whole, its size growing with the
    store) is not read at all: garbage in its place changes nothing."""
    folder = lessons / ".lore" / "cache" / "index"
    assert (folder / "keyword.sqlite").is_file()
    before = prompt_hook(lessons, LONG_PROMPT)
    (folder / "keyword.jsonl").write_text("not json\n")
    assert prompt_hook(lessons, LONG_PROMPT, n=1) == before
    assert "alembic-default-lock" in before
    assert not (lessons / ".lore" / "cache" / "hooks.log").exists()


def test_a_copy_saved_with_its_manifest_is_checked_by_digest_then_trusted(lessons: Path) -> None:
    """`lore index` writes the manifest and the SQLite copy within the same second, too close
    to trust the manifest's identity alone: the first reader checks the manifest's digest and
    marks the copy checked; a copy of another manifest is never used."""
    import sqlite3

    from lorebook.index.terms_db import open_terms

    folder = lessons / ".lore" / "cache" / "index"
    db = sqlite3.connect(folder / "keyword.sqlite")
    db.execute("UPDATE meta SET value = ? WHERE name = 'checked_ns'", ("0",))
    db.commit()
    terms = open_terms(folder)  # racy: checked by digest
    assert terms is not None
    terms.close()
    (checked,) = db.execute("SELECT value FROM meta WHERE name = 'checked_ns'").fetchone()
    assert int(checked) > 0
    db.execute("UPDATE meta SET value = ? WHERE name = 'checked_ns'", ("0",))
    db.execute("UPDATE meta SET value = ? WHERE name = 'key'", (json.dumps("0" * 32),))
    db.commit()
    db.close()
    assert open_terms(folder) is None  # another manifest's copy: the JSON index answers
    assert "alembic-default-lock" in prompt_hook(lessons, LONG_PROMPT)
    assert lore("index", env=clean_env(lessons)).code == 0  # and the next index mends it
    mended = open_terms(folder)
    assert mended is not None
    mended.close()


def test_resume_finds_the_same_learnings_from_the_saved_index(lessons: Path) -> None:
    """`lore resume`'s related learnings come from the saved keyword index (its SQLite copy,
    else the JSON one) as they came from re-tokenizing the manifest's documents."""
    book = Lorebook.open(lessons, env={})
    with book.session(session_id="s-migrate") as session:
        session.log("deploy", outcome="failure", error="alembic migration locked the orders table")
    folder = lessons / ".lore" / "cache" / "index"
    answers = [lore("resume", "--json", env=clean_env(lessons)).json()["learnings"]]
    (folder / "keyword.sqlite").unlink()
    answers.append(lore("resume", "--json", env=clean_env(lessons)).json()["learnings"])
    (folder / "keyword.jsonl").unlink()
    answers.append(lore("resume", "--json", env=clean_env(lessons)).json()["learnings"])
    assert answers[0] and answers[0][0]["id"] == "alembic-default-lock"
    assert answers[0] == answers[1] == answers[2]


def test_a_prompt_about_nothing_the_team_learned_gets_nothing(lessons: Path) -> None:
    chatter = (
        "Thanks, that looks great! Could you also rename the headline of the README to "
        "Welcome and tidy up the wording of the first paragraph a little? Cheers."
    )
    assert prompt_hook(lessons, chatter) == ""


def test_the_action_log_plays_no_part_in_the_prompt_hook(lessons: Path) -> None:
    """A shard that blocks whoever reads it (a FIFO no one writes): the hook answers the same,
    within its budget, so nothing on its path read the log; the prompt is still recorded."""
    before = prompt_hook(lessons, LONG_PROMPT)
    assert "alembic-default-lock" in before
    day = datetime.now(UTC)
    folder = lessons / "actionlog" / f"{day:%Y}" / f"{day:%m}" / f"{day:%d}"
    folder.mkdir(parents=True, exist_ok=True)
    os.mkfifo(folder / "blocking-reader.jsonl")
    (lessons / ".lore" / "config.yaml").write_text(GENEROUS.replace("60", "20"))
    after = prompt_hook(lessons, LONG_PROMPT, n=1)
    assert after == before
    assert not (lessons / ".lore" / "cache" / "hooks.log").exists()
    (folder / "blocking-reader.jsonl").unlink()
    prompts = [a for a in stored_actions(lessons) if a["type"] == "prompt"]
    assert [p["session"] for p in prompts] == [SID.format(0), SID.format(1)]


def test_eight_agents_prompting_at_once_all_get_their_lesson(lessons: Path) -> None:
    """Eight real hook processes started together, each for its own session and prompt."""
    cases = [sorted(PROMPTS)[k % len(PROMPTS)] for k in range(8)]
    procs: list[tuple[str, Any]] = []
    for learning_id in cases:
        proc = subprocess.Popen([*LORE, "hook", "user-prompt-submit"], cwd=lessons,
                                env=clean_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)  # fmt: skip
        procs.append((learning_id, proc))
    answers = []
    for k, (learning_id, proc) in enumerate(procs):
        out, err = proc.communicate(payload(lessons, PROMPTS[learning_id], 10 + k), timeout=120)
        assert (proc.returncode, err) == (0, "")
        answers.append(learning_id in injected(out))
    assert answers == [True] * 8
    assert not (lessons / ".lore" / "cache" / "hooks.log").exists()
    sessions = {a["session"] for a in stored_actions(lessons) if a["type"] == "prompt"}
    assert sessions == {SID.format(10 + k) for k in range(8)}
