"""Redaction runs in linear time on hostile text, and a learning's long body is redacted once.

One committed file must not freeze every teammate's `lore show`, search and hooks: each rule
family that went quadratic on repetitive text ("sk-sk-sk-…", "password=password=…",
"eyJeyJ…") gets 1 MB of it, and every hostile shape is held to a count of calls linear in its
length. The ceiling is absolute and generous (10 s, where the linear code takes ~1 s and the
quadratic code took minutes); the real figures are in benchmarks/bench_redact.py and
docs/benchmarks.md.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from conftest import clean_env, git, lore
from lorebook import Lorebook
from lorebook.redact import sanitize as sanitize_module
from lorebook.redact.sanitize import Sanitizer
from test_redact_equivalence import LONG_SHAPES

# a unit repeated to the size of the input: each made a rule family quadratic before
ADVERSARIAL = {
    "openai prefix": "sk-",
    "glued openai prefix": "-sk-",
    "github prefix": "ghp_",
    "npm prefix": "npm_",
    "huggingface prefix": "hf_",
    "stripe prefix": "sk_live_",
    "glued aws prefix": "x-AKIA",
    "password assignment": "password=",
    "password colon": "password: ",
    "token assignment": "token=",
    "authorization header": "Authorization: ",
    "jwt header": "eyJ",
}
SIZE = 1 << 20
CEILING_S = 10.0

GITHUB = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
SECRETS = {
    "github": GITHUB,
    "aws": "AKIAIOSFODNN7EXAMPLE",
    "openai": "sk-proj-Q3vX9kLm2PzR8tYw4NbH6jFd1sCg5eTa7uKo0iVn",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
    "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "card": "4111 1111 1111 1111",
    "email": "jane.doe@example.com",
}


def _fill(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


@pytest.mark.parametrize("unit", list(ADVERSARIAL.values()), ids=list(ADVERSARIAL))
def test_a_megabyte_of_repetitive_text_redacts_in_linear_time(unit: str) -> None:
    text = _fill(unit, SIZE)
    start = time.perf_counter()
    out, _ = Sanitizer().redact_text(text)
    took = time.perf_counter() - start
    assert took < CEILING_S, f"{took:.1f} s for 1 MB of {unit!r}"
    assert out  # (what it redacts is held by the tests below and the secret corpus)


def _calls(sanitizer: Sanitizer, text: str) -> int:
    """How many Python and C functions redacting `text` calls (regex steps are not counted)."""
    count = 0

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    sys.setprofile(profile)
    try:
        sanitizer.redact_text(text)
    finally:
        sys.setprofile(None)
    return count


@pytest.mark.parametrize("unit", LONG_SHAPES)
def test_the_work_per_character_does_not_grow_with_the_text(unit: str) -> None:
    """Not timed: 16x the text makes at most 16x the calls (plus a few).  A rule that
    restarted at every offset, or rescanned from each candidate, would make 16x more."""
    sanitizer = Sanitizer()
    sanitizer.redact_text(_fill(unit, 3000))  # (the rules compile on first use)
    small = _calls(sanitizer, _fill(unit, 16 * 1024))
    large = _calls(sanitizer, _fill(unit, 256 * 1024))
    assert large <= 16 * small + 64, (unit, small, large)


@pytest.mark.parametrize("unit", list(ADVERSARIAL.values()), ids=list(ADVERSARIAL))
@pytest.mark.parametrize("kind", list(SECRETS))
def test_a_secret_anywhere_in_hostile_text_is_still_redacted(unit: str, kind: str) -> None:
    """At the start, in the middle, at the end, glued to the noise or set apart by blanks."""
    secret = SECRETS[kind]
    noise = _fill(unit, 20_000)
    sanitizer = Sanitizer()
    for cut in (0, 4096, 8191, 8192, 12_345, len(noise)):
        for text in (
            f"{noise[:cut]} {secret} {noise[cut:]}",
            f"{noise[:cut]}\n{secret}\n{noise[cut:]}",
        ):
            out, count = sanitizer.redact_text(text)
            assert secret not in out and count, (kind, unit, cut)


@pytest.mark.parametrize("unit", ["sk-", "ghp_", "glpat-", "xoxb-", "hf_"])
def test_a_provider_key_longer_than_any_real_one_is_redacted_whole(unit: str) -> None:
    """Provider patterns are bounded (KEY_MAX) to stay linear: a longer key is not cut there."""
    body = ("Q3vX9kLm2PzR8tYw4NbH6jFd1sCg5eTa7uKo0iVn" * 20)[:600]
    out, _ = Sanitizer().redact_text(f"key {unit}{body} done")
    assert body[-40:] not in out and body[:40] not in out
    assert out.startswith("key [REDACTED:") and out.endswith("] done")


def test_password_values_sharing_a_tail_are_each_judged(tmp_path: Path) -> None:
    """The assignment scan skips no key inside another key's value that it did not redact."""
    sanitizer = Sanitizer()
    out, _ = sanitizer.redact_text("url=$BASE&password=$P&token=hunter2hunter2 rest")
    assert "hunter2" not in out
    out, _ = sanitizer.redact_text(("password=" * 5000) + "s3cretValue42 tail")
    assert "s3cretValue42" not in out and out.endswith(" tail")


def test_an_escaped_quoted_value_after_a_key_inside_a_value_is_redacted() -> None:
    """A key at the end of another key's unquoted value, followed by an escaped-JSON quoted
    value (`\\"…\\"`): that value reaches past the first one, so its key is not skipped."""
    sanitizer = Sanitizer()
    for text in (
        'password=token=\\"s3cr3tValue9\\"',
        'echo password=token=\\"hunter2hunter\\" done',
        'passwd: x token:   \\"hunter2hunter\\" done',
    ):
        out, count = sanitizer.redact_text(text)
        assert "s3cr3t" not in out and "hunter2" not in out, out
        assert count == 2, out


def _adversarial_learning(root: Path, size: int = 300_000) -> str:
    lid = "2026-11-22-hostile-body"
    (root / "learnings").mkdir(exist_ok=True)
    (root / "learnings" / f"{lid}.md").write_text(
        f"---\nid: {lid}\ntitle: Hostile body\nkind: lesson\nstatus: published\n"
        f"created: 2026-11-22\n---\n## Problem\n{_fill('sk-', size)}\n## Solution\n"
        f"Rotate the zebra key {GITHUB}\n",
        encoding="utf-8",
    )
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "a committed learning with a 300 KB body")
    return lid


def test_a_committed_hostile_learning_does_not_freeze_show_or_search(store: Path) -> None:
    """300 KB of "sk-sk-…": `lore show` took minutes before (the issue measured 19-24 s for
    200 KB); now about as long as a plain body. The search also builds the index (model and
    Chroma start-up, tens of seconds on a loaded machine), hence its wider ceiling."""
    lid = _adversarial_learning(store)
    env = clean_env(store)
    for args, ceiling in (
        (["show", lid], 15),
        (["learnings"], 15),
        (["search", "--mode", "keyword", "zebra"], 90),
        (["show", lid], 15),
    ):
        start = time.perf_counter()
        done = lore(*args, cwd=store, env=env, timeout=ceiling)
        took = time.perf_counter() - start
        assert done.code == 0, done.err
        assert took < ceiling, f"lore {' '.join(args)} took {took:.1f} s"
        assert GITHUB not in done.out
        if args[0] != "learnings":
            assert "[REDACTED:github_token]" in done.out, args


def test_an_unchanged_learning_reuses_its_redaction(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lid = _adversarial_learning(store, 20_000)
    path = store / "learnings" / f"{lid}.md"
    then = time.time() - 10  # out of the parse cache's racy window: listings cache it
    os.utime(path, (then, then))
    calls: list[int] = []
    real = sanitize_module.Sanitizer.redact_text

    def counted(self: Sanitizer, text: str) -> tuple[str, int]:
        if len(text) >= 4096:
            calls.append(len(text))
        return real(self, text)

    monkeypatch.setattr(sanitize_module.Sanitizer, "redact_text", counted)
    first = Lorebook.open(store, env={}).learnings.get(lid)
    assert len(calls) == 1 and GITHUB not in first.body
    for _ in range(3):  # new processes would open the store afresh, as these do
        again = Lorebook.open(store, env={})
        assert again.learnings.get(lid).body == first.body
        assert [x.body for x in again.learnings.all() if x.id == lid] == [first.body]
    assert len(calls) == 1, "an unchanged body was redacted again"

    # other rules are another result: the store's own extra pattern applies at once
    config = store / ".lore" / "config.yaml"
    config.write_text("redaction:\n  extra_patterns:\n    striped: 'zebra'\n", encoding="utf-8")
    changed = Lorebook.open(store, env={}).learnings
    assert "Rotate the [REDACTED:striped] key" in changed.get(lid).body
    assert len(calls) == 2
    assert ["zebra" in x.body for x in changed.all() if x.id == lid] == [False]

    # a changed body is redacted again, once
    path.write_text(path.read_text(encoding="utf-8").replace("Rotate", "Revoke"), "utf-8")
    Lorebook.open(store, env={}).learnings.get(lid)
    Lorebook.open(store, env={}).learnings.get(lid)
    assert len(calls) == 3
