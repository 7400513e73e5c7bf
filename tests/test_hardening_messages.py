"""Error and warning lines, search echoes and search records, against the store's own rules.

A token that only the store's `redaction.extra_patterns` knows is redacted in what lorebook
prints, not only in what it writes; a query is redacted before it is echoed or recorded; and
lorebook's own words in a message (a key named `passwd`) are not taken for a secret.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from anyio.from_thread import start_blocking_portal

from conftest import clean_env, git, lore, stored_actions
from lorebook import Sanitizer
from search_fixtures import LEARNINGS, write_learning
from test_mcp import server_env

ITK = "itk_" + "Q4w8" * 8  # only the store's extra pattern knows this shape
GHP = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
CONFIG = (
    "redaction:\n"
    '  extra_patterns: {internal_token: "itk_[A-Za-z0-9]{32}"}\n'
    "embedding:\n"
    "  enabled: false\n"
    "hooks:\n"
    "  budget_seconds: 60\n"
)


def _configured(store: Path) -> Path:
    (store / ".lore" / "config.yaml").write_text(CONFIG)
    return store


def _everything(root: Path) -> str:
    """Every file under the store (the git directory included), as text."""
    return "\n".join(
        p.read_bytes().decode("utf-8", "replace") for p in root.rglob("*") if p.is_file()
    )


# -- case 4: errors and warnings redacted with the store's sanitizer ----------------------------
@pytest.mark.parametrize(
    "args",
    [
        ("actions", "--since", ITK),
        ("log", "commit", "--outcome", ITK),
        ("log", "commit", "--context", "@" + ITK),
        ("sessions", "--status", ITK),
        ("report", "--since", ITK),
    ],
)
def test_error_lines_use_the_stores_extra_patterns(store: Path, args: tuple[str, ...]) -> None:
    env = clean_env(_configured(store))
    for extra in ((), ("--json",)):
        run = lore(*args, *extra, env=env)
        assert run.code == 1 and "Traceback" not in run.err, run.err
        assert ITK not in run.err + run.out and ITK[:12] not in run.err, run.err
        assert "[REDACTED:internal_token]" in run.err, run.err
        if extra:
            assert "error" in json.loads(run.err.strip().splitlines()[-1])


def test_a_warning_uses_the_stores_extra_patterns(store: Path) -> None:
    """A shard a teammate committed under a token's name, with a damaged line: the warning
    that names it is redacted with the store's rules, through LORE_ROOT and through `--root`."""
    env = clean_env(_configured(store))
    day = store / "actionlog" / "2026" / "11" / "27"
    day.mkdir(parents=True)
    (day / f"{ITK}.jsonl").write_text('{"torn\n')
    for args in (("actions",), ("actions", "--json"), ("sessions",)):
        run = lore(*args, env=env)
        assert "lore: warning: skipped actionlog/2026/11/27/" in run.err, (args, run.err)
        assert ITK not in run.err and "[REDACTED:internal_token].jsonl:1" in run.err, run.err


def test_the_hooks_error_log_uses_the_stores_extra_patterns(store: Path) -> None:
    """A hook's failure is noted in `.lore/cache/hooks.log` (on disk): redacted with the
    store's rules, and with the default ones when the store's config is what failed."""
    from lorebook.hooks.failopen import note_error

    _configured(store)
    note_error(store, "post-tool-use", f"UsageError: outcome {ITK!r} is not one of: success")
    (store / ".lore" / "config.yaml").write_text("log: [\n")
    note_error(store, "post-tool-use", f"LoreError: broken, and {GHP}")
    noted = (store / ".lore" / "cache" / "hooks.log").read_text()
    assert ITK not in noted and "[REDACTED:internal_token]" in noted, noted
    assert GHP not in noted and len(noted.splitlines()) == 2, noted


# -- case 5: queries redacted before they are echoed or recorded --------------------------------
def _searchable(store: Path) -> Path:
    _configured(store)
    for learning_id, fields in LEARNINGS.items():
        write_learning(store, learning_id, **fields)
    return store


def test_search_never_echoes_a_secret_in_the_query(store: Path) -> None:
    env = clean_env(_searchable(store))
    for query in (f"deploy port 8080 {GHP}", f"deploy port 8080 {ITK}", "nothing matches " + GHP):
        for args in (("--json",), (), ("--mode", "keyword", "--json")):
            run = lore("search", query, *args, env=env)
            assert run.code == 0, run.err
            assert GHP not in run.out + run.err and ITK not in run.out + run.err, run.out
            if args and args[-1] == "--json":
                assert "[REDACTED:" in json.loads(run.out)["query"]
        pre = lore("preflight", query, "--json", "--mode", "keyword", env=env)
        assert pre.code == 0 and GHP not in pre.out and ITK not in pre.out, pre.out


@pytest.fixture
def mcp_client(store: Path) -> Iterator[Any]:
    from mcp import Client, StdioServerParameters

    _searchable(store)
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", "store")
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "lorebook", "mcp"],
        env=server_env(store),
        cwd=str(store),
    )
    with (
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(Client(params)) as client,
    ):
        yield lambda name, args: portal.call(client.call_tool, name, args)


def test_mcp_search_learnings_never_echoes_a_secret(store: Path, mcp_client: Any) -> None:
    for query in (f"deploy port 8080 {GHP}", f"deploy port 8080 {ITK}"):
        result = mcp_client("search_learnings", {"query": query})
        assert not result.is_error, result.content
        reply = json.dumps(result.structured_content) + result.content[0].text
        assert GHP not in reply and ITK not in reply, reply
        assert "[REDACTED:" in result.structured_content["query"]
    assert GHP not in _everything(store) and ITK not in _everything(store)


@pytest.mark.parametrize("phrase", ["my password is hunter2xyz", "the password was S3cr3t!pass"])
def test_a_password_in_a_prompt_reaches_no_file(store: Path, phrase: str) -> None:
    _searchable(store)
    secret = phrase.split()[-1]
    prompt = f"Why is the anonymous INSERT blocked by row level security? {phrase}"
    payload = json.dumps(
        {
            "session_id": "5b7a1f0e-2c1d-4e8a-9f00-1234567890ab",
            "transcript_path": str(store / "t.jsonl"),
            "cwd": str(store),
            "hook_event_name": "UserPromptSubmit",
            "prompt": prompt,
        }
    )
    done = lore(
        "hook",
        "user-prompt-submit",
        cwd=store,
        env=clean_env(store, LORE_HOOK_DETACH="0"),
        stdin=payload,
    )
    assert done.code == 0, done.err
    searches = [a for a in stored_actions(store) if a["type"] == "search"]
    assert searches and "row level security" in searches[0]["context"]["query"], searches
    assert secret not in _everything(store), phrase


def test_free_text_password_phrases_are_redacted_and_plain_prose_kept() -> None:
    sanitizer = Sanitizer()
    for text, secret in (
        ("my password is hunter2xyz", "hunter2xyz"),
        ("The PASSWORD was S3cr3t!pass.", "S3cr3t!pass"),
        ("pwd: Zq9-long", "Zq9-long"),
        ("passwd=Xyz12!ab", "Xyz12!ab"),
    ):
        out = sanitizer.redact_text(text)[0]
        assert secret not in out and "[REDACTED:" in out, out
    for prose in ("the password is required", "a password is stored hashed, never in clear"):
        assert sanitizer.redact_text(prose)[0] == prose


# -- case 6: lorebook's own words are not redacted, the values in them are ----------------------
def test_a_message_about_key_passwd_keeps_its_text(store: Path) -> None:
    env = clean_env(store)
    run = lore("actions", "--since", "passwd", env=env)
    assert run.code == 1 and "REDACTED" not in run.err, run.err
    assert "--since 'passwd': expected a duration like 7d" in run.err
    config = store / ".lore" / "config.yaml"
    config.write_text("paths:\n  passwd: learnings\n")
    run = lore("actions", env=env)
    assert run.code == 1 and "REDACTED" not in run.err, run.err
    assert "config.yaml:2: paths.passwd: unknown key, expected one of" in run.err
    # the value typed in the same message is still redacted
    config.write_text("log:\n  max_depth: 'passwd: S3cr3t!pass'\n")
    run = lore("actions", env=env)
    assert run.code == 1 and "S3cr3t!pass" not in run.err, run.err
    assert "config.yaml:2: log.max_depth: expected an integer, got" in run.err, run.err
    config.write_text("")
    run = lore("actions", "--since", f"passwd {GHP}", env=env)
    assert run.code == 1 and GHP not in run.err and "expected a duration" in run.err, run.err
