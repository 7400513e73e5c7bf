"""Identifiers and error messages never carry a secret: ids that look like one are refused
without echoing them, `lore check` finds secrets in file names, and every error or warning line
is redacted before it is printed."""

from __future__ import annotations

import json
import random
import string
import time
import uuid
from pathlib import Path

import pytest

from conftest import Run, assert_one_error_line, clean_env, lore, stored
from lorebook import Lorebook
from lorebook.errors import UsageError
from lorebook.ids import new_ulid
from lorebook.log.writer import auto_session_id, check_identifier, check_session_id
from lorebook.redact.sanitize import Sanitizer

_rng = random.Random(1124)


def _rnd(n: int, chars: str = string.ascii_letters + string.digits) -> str:
    return "".join(_rng.choice(chars) for _ in range(n))


GHP = "ghp_" + _rnd(36)  # GitHub personal access token
STRIPE = "sk_live_" + _rnd(24)  # Stripe secret key
AKIA = "AKIA" + _rnd(16, string.ascii_uppercase + string.digits)  # AWS access key id
SECRETS = [GHP, STRIPE, AKIA]


def assert_no_leak(secret: str, root: Path, *results: Run) -> None:
    """Neither the secret nor its first 8 characters in any output, file name or file."""
    for needle in {secret, secret[:8], secret[-12:]}:
        for result in results:
            assert needle not in result.out, result.out
            assert needle not in result.err, result.err
        raw = needle.encode()
        for path in root.rglob("*"):
            if ".git" in path.relative_to(root).parts:
                continue
            assert needle not in str(path.relative_to(root)), path
            if path.is_file() and not path.is_symlink():
                assert raw not in path.read_bytes(), path


def assert_refused(result: Run, label: str) -> str:
    line = assert_one_error_line(result, label, "looks like a secret", "identifier")
    return line


def sync_catalog(store: Path) -> None:
    """Build the action catalog so that a row, had one been written, would be on disk."""
    listed = lore("actions", "--json", env=clean_env(store))
    assert listed.code == 0, listed.err
    assert listed.json() == []


# -- item 1: a secret used as an identifier -------------------------------------------------
@pytest.mark.parametrize("secret", SECRETS)
def test_secret_as_session_option_is_refused_on_the_fast_path(store: Path, secret: str) -> None:
    result = lore("log", "commit", "--session", secret, env=clean_env(store))
    assert_refused(result, "session")
    assert stored(store) == []
    sync_catalog(store)
    assert_no_leak(secret, store, result)


def test_secret_as_session_option_is_refused_with_the_root_option(store: Path) -> None:
    # the store named by `--root` before `log` (not LORE_ROOT)
    result = lore("--root", str(store), "log", "commit", "--session", GHP, env=clean_env())
    assert_refused(result, "session")
    sync_catalog(store)
    assert_no_leak(GHP, store, result)


def test_secret_in_lore_session_is_refused_naming_the_variable(store: Path) -> None:
    result = lore("log", "commit", env=clean_env(store, LORE_SESSION=STRIPE))
    assert_refused(result, "LORE_SESSION")
    sync_catalog(store)
    assert_no_leak(STRIPE, store, result)


@pytest.mark.parametrize("option", ["--agent", "--project", "--epic", "--issue"])
def test_secret_as_agent_project_epic_or_issue_is_refused(store: Path, option: str) -> None:
    result = lore("log", "commit", option, GHP, env=clean_env(store))
    assert_refused(result, option.lstrip("-"))
    assert stored(store) == []
    sync_catalog(store)
    assert_no_leak(GHP, store, result)


@pytest.mark.parametrize("variable", ["LORE_AGENT", "LORE_PROJECT"])
def test_secret_in_lore_agent_or_project_is_refused(store: Path, variable: str) -> None:
    result = lore("log", "commit", env=clean_env(store, **{variable: AKIA}))
    assert_refused(result, variable)
    assert stored(store) == []
    assert_no_leak(AKIA, store, result)


def test_secret_as_action_type_is_refused(store: Path) -> None:
    token = "sk_live_" + _rnd(24, string.ascii_lowercase + string.digits)  # a valid type word
    result = lore("log", token, env=clean_env(store))
    assert result.code == 1
    assert len(result.err.strip().splitlines()) == 1, result.err
    assert stored(store) == []
    assert_no_leak(token, store, result)


def test_secret_as_session_id_of_session_start_and_end_is_refused(store: Path) -> None:
    started = lore("session", "start", "--id", GHP, env=clean_env(store))
    assert_refused(started, "session")
    ended = lore("session", "end", "--session", GHP, env=clean_env(store))
    assert_refused(ended, "session")
    agent = lore("session", "start", "--agent", STRIPE, env=clean_env(store))
    assert_refused(agent, "agent")
    assert stored(store) == []
    assert_no_leak(GHP, store, started, ended)
    assert_no_leak(STRIPE, store, agent)


def test_secret_ids_are_refused_through_the_python_api(store: Path) -> None:
    book = Lorebook.open(store, env={})
    with pytest.raises(UsageError) as info:
        book.log("commit", session=GHP)
    assert GHP[:8] not in str(info.value)
    with pytest.raises(UsageError), book.session(session_id=STRIPE):
        pass
    with pytest.raises(UsageError):
        book.log("commit", epic=AKIA)
    with pytest.raises(UsageError):
        Lorebook.open(store, env={"LORE_SESSION": GHP}).log("commit")
    assert stored(store) == []
    for secret in SECRETS:
        assert_no_leak(secret, store)


def test_secret_as_expertise_domain_is_refused(store: Path) -> None:
    token = "sk_live_" + _rnd(24, string.ascii_lowercase + string.digits)  # a valid domain word
    for args in (
        ["expertise", "show", token],
        ["expertise", "improve", token],
        ["expertise", "history", token],
        ["expertise", "show", GHP],
        ["expertise", "learn", "--session", GHP],
        ["expertise", "learn", "--session", "01JD8Z3M5Q7R9T1V3X5Z7B9D1F", "--domain", token],
    ):
        result = lore(*args, env=clean_env(store))
        assert result.code == 1, (args, result.out, result.err)
        assert len(result.err.strip().splitlines()) == 1, result.err
        assert_no_leak(token, store, result)
        assert_no_leak(GHP, store, result)
    book = Lorebook.open(store, env={})
    with pytest.raises(UsageError, match="looks like a secret"):
        book.expertise.path(token)


NORMAL_IDS = [
    "PS",
    "consilio",
    "epic-012",
    "issue-7",
    "agent",
    "claude-code",
    "lorebook",
    "mobile",
    "database",
    "01JD8Z3M5Q7R9T1V3X5Z7B9D1F",
    "auto-20261124-1a2b3c4d5e6f",
    "session-01JD8Z3M5Q7R9T1V3X5Z7B9D1F",
    "ci-build-4412",
    "feature/login-flow",
    "c3283bc",
    "ee763734d1f0c8f8a4b1e2d9f7a6b5c4d3e2f1a0",
]


def test_normal_identifiers_are_accepted() -> None:
    sanitizer = Sanitizer()
    ids = list(NORMAL_IDS)
    ids += [auto_session_id(f"agent-{i}", "proj", "host", "2026-11-24") for i in range(2000)]
    ids += [new_ulid() for _ in range(500)]
    ids += [new_ulid().lower() for _ in range(500)]
    ids += [f"session-{new_ulid()}" for _ in range(500)]
    ids += [str(uuid.uuid4()) for _ in range(500)]
    ids += [uuid.uuid4().hex for _ in range(500)]
    for value in ids:
        assert check_identifier("id", value, sanitizer) == value
    for value in ids[: len(NORMAL_IDS) + 2000]:
        if "/" not in value:
            assert check_session_id(value) == value


def test_normal_identifiers_are_accepted_by_the_cli(store: Path) -> None:
    auto = auto_session_id("agent-7", "proj", "host", "2026-11-24")
    ulid = new_ulid()
    for session, extra in ((ulid, ["--project", "PS"]), (auto, ["--agent", "consilio"])):
        result = lore(
            "log",
            "commit",
            "--session",
            session,
            "--epic",
            "epic-012",
            "--issue",
            "issue-7",
            *extra,
            env=clean_env(store),
        )
        assert result.code == 0, result.err
    sessions = {r["session"] for r in stored(store)}
    assert sessions == {ulid, auto}


def test_identifier_check_is_cheap() -> None:
    sanitizer = Sanitizer()
    ids = [auto_session_id(f"a{i}", "p", "h", "2026-11-24") for i in range(1000)] + [
        new_ulid() for _ in range(1000)
    ]
    start = time.perf_counter()
    for value in ids:
        check_identifier("session", value, sanitizer)
    first = (time.perf_counter() - start) / len(ids)
    start = time.perf_counter()
    for _ in range(5):
        for value in ids:
            check_identifier("session", value, sanitizer)
    again = (time.perf_counter() - start) / (5 * len(ids))
    assert first < 100e-6, first  # a new id: the triage and at most one scan
    assert again < 5e-6, again  # an id seen before: one set lookup


# -- item 1: `lore check` finds secrets in file names ----------------------------------------
def _record(session: str) -> str:
    return json.dumps(
        {
            "v": 1,
            "kind": "action",
            "id": new_ulid(),
            "ts": "2026-11-24T10:00:00.000Z",
            "session": session,
            "agent": "a",
            "project": "p",
            "type": "commit",
            "category": "git",
            "outcome": "success",
            "context": {},
            "error": None,
            "duration_s": None,
            "parent": None,
            "epic": None,
            "issue": None,
            "meta": {},
        },
        sort_keys=True,
    )


def test_check_reports_a_shard_named_like_a_secret(store: Path) -> None:
    day = store / "actionlog" / "2026" / "11" / "24"
    day.mkdir(parents=True)
    (day / f"{GHP}.jsonl").write_text(_record(GHP) + "\n", encoding="utf-8")
    result = lore("check", env=clean_env(store))
    assert result.code == 1, result.out
    assert "actionlog/2026/11/24/[REDACTED:github_token].jsonl" in result.out
    assert "file name looks like a secret" in result.out
    assert GHP[:8] not in result.out + result.err
    as_json = lore("check", "--json", env=clean_env(store))
    assert as_json.code == 1
    assert GHP[:8] not in as_json.out + as_json.err


def test_check_reports_a_secret_session_field(store: Path) -> None:
    day = store / "actionlog" / "2026" / "11" / "24"
    day.mkdir(parents=True)
    (day / "plain.jsonl").write_text(_record(STRIPE) + "\n", encoding="utf-8")
    result = lore("check", env=clean_env(store))
    assert result.code == 1, result.out
    assert "actionlog/2026/11/24/plain.jsonl:1: possible secret (stripe_key) at session" in (
        result.out
    )
    assert STRIPE[:8] not in result.out + result.err


def test_check_reports_learning_and_expertise_files_named_like_secrets(store: Path) -> None:
    learning = store / "learnings" / f"{AKIA}.md"
    learning.parent.mkdir(parents=True, exist_ok=True)
    learning.write_text("---\nid: x\n---\nbody\n", encoding="utf-8")
    expertise = store / ".expertise" / f"{GHP}.yaml"
    expertise.parent.mkdir(parents=True, exist_ok=True)
    expertise.write_text("domain: testing\n", encoding="utf-8")
    result = lore("check", env=clean_env(store))
    assert result.code == 1, result.out
    assert "learnings/[REDACTED:aws_access_key].md: file name looks like a secret" in result.out
    assert ".expertise/[REDACTED:github_token].yaml: file name looks like a secret" in result.out
    for secret in (AKIA, GHP):
        assert secret[:8] not in result.out + result.err


# -- item 5: error and warning lines are redacted --------------------------------------------
def test_error_for_a_secret_action_type_is_redacted(store: Path) -> None:
    fast = lore("log", GHP, env=clean_env(store))
    line = assert_one_error_line(fast, "action type")
    assert "[REDACTED:github_token]" in line
    as_json = lore("log", GHP, "--json", env=clean_env(store))
    assert as_json.code == 1
    assert json.loads(as_json.err)["error"].startswith("action type '[REDACTED:github_token]'")
    click_path = lore("--root", str(store), "log", GHP, env=clean_env())
    assert_one_error_line(click_path, "[REDACTED:github_token]")
    assert_no_leak(GHP, store, fast, as_json, click_path)


def test_error_for_a_secret_end_reason_is_redacted(store: Path) -> None:
    started = lore("session", "start", env=clean_env(store))
    assert started.code == 0, started.err
    sid = started.out.strip()
    result = lore(
        "session",
        "end",
        "--session",
        sid,
        "--reason",
        "password=Hunter2Hunter2",
        env=clean_env(store),
    )
    assert_one_error_line(result, "end reason", "[REDACTED")
    assert "Hunter2" not in result.err


def test_usage_errors_are_redacted(store: Path) -> None:
    results = [
        lore("log", "commit", "--outcome", GHP, env=clean_env(store)),
        lore("actions", "--outcome", GHP, env=clean_env(store)),
        lore("actions", f"--{GHP}", env=clean_env(store)),
        lore("show", GHP, env=clean_env(store)),
    ]
    for result in results:
        assert result.code == 1, (result.out, result.err)
        assert len(result.err.strip().splitlines()) == 1, result.err
    assert_no_leak(GHP, store, *results)


def test_skipped_line_warnings_are_redacted(store: Path) -> None:
    day = store / "actionlog" / "2026" / "11" / "24"
    day.mkdir(parents=True)
    (day / f"{GHP}.jsonl").write_text("{not json\n", encoding="utf-8")
    result = lore("actions", "--since", "30000d", env=clean_env(store))
    assert "lore: warning: skipped" in result.err
    assert "[REDACTED:github_token]" in result.err
    assert GHP[:8] not in result.out + result.err


def test_check_findings_never_echo_a_secret_read_from_a_file(store: Path) -> None:
    (store / ".expertise").mkdir(exist_ok=True)
    (store / ".expertise" / "testing.yaml").write_text(f"domain: {GHP}\n", encoding="utf-8")
    day = store / "actionlog" / "2026" / "11" / "24"
    day.mkdir(parents=True)
    (day / "plain.jsonl").write_text(_record(STRIPE) + "\n", encoding="utf-8")
    text = lore("check", env=clean_env(store))
    as_json = lore("check", "--json", env=clean_env(store))
    assert text.code == as_json.code == 1
    assert "domain '[REDACTED:github_token]' does not match the file name" in text.out
    assert "session '[REDACTED:stripe_key]' does not match the shard name 'plain'" in text.out
    findings = json.loads(as_json.out)["findings"]
    assert any("[REDACTED:github_token]" in f["reason"] for f in findings)
    for secret in (GHP, STRIPE):
        assert secret[:8] not in text.out + text.err + as_json.out + as_json.err


def test_messages_naming_files_like_secret_keys_are_kept_whole() -> None:
    """`learnings/passwd.md: …` names a file; a message must still say which one and why."""
    from lorebook.redact.identifiers import redact_message

    for text in (
        "learnings/passwd.md: symlink outside the repository",
        "learnings/token-refresh.md:3: bad front matter",
        ".expertise/secrets.yaml:2: expected a mapping",
    ):
        assert redact_message(text) == text
    for text, secret in (
        ("password=hunter2 failed", "hunter2"),
        ("db.password: hunter2", "hunter2"),
        ("learnings/a.md:3: password=hunter2", "hunter2"),
    ):
        assert secret not in redact_message(text)
