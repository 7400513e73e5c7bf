"""`lore log`: through the real executable (subprocess) and in-process (`lorebook.cli.main`)."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from conftest import (
    ULID,
    assert_one_error_line,
    clean_env,
    cli_run,
    lore,
    shard_files,
    stored,
    stored_actions,
)
from lorebook import Lorebook
from lorebook.log.writer import auto_session_id, host_name

SECRET_TOKEN = "ghp_" + "Ab3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5"
ACTION_KEYS = {
    "v",
    "kind",
    "id",
    "ts",
    "session",
    "agent",
    "project",
    "type",
    "category",
    "outcome",
    "context",
    "error",
    "duration_s",
    "parent",
    "epic",
    "issue",
    "meta",
}


# -- the fast path -----------------------------------------------------------------------------
def test_log_prints_id_and_writes_a_v1_action(store: Path) -> None:
    result = lore(
        "log",
        "commit",
        "--context",
        '{"files": ["src/auth.py"], "commit_hash": "a1b2"}',
        "--epic",
        "epic-012",
        "--issue",
        "ISS-7",
        "--duration",
        "1.5",
        "--agent",
        "PS",
        "--project",
        "consilio",
        env=clean_env(store),
    )
    assert result.code == 0, result.err
    assert result.err == ""
    action_id = result.out.strip()
    assert result.out == action_id + "\n"
    assert ULID.match(action_id)

    records = stored(store)
    assert [r["kind"] for r in records] == ["session", "action"]
    start, action = records
    assert set(action) == ACTION_KEYS
    day = action["ts"][:10]
    assert action == {
        "v": 1,
        "kind": "action",
        "id": action_id,
        "ts": action["ts"],
        "session": auto_session_id("PS", "consilio", host_name(), day),
        "agent": "PS",
        "project": "consilio",
        "type": "commit",
        "category": "git",
        "outcome": "success",
        "context": {"files": ["src/auth.py"], "commit_hash": "a1b2"},
        "error": None,
        "duration_s": 1.5,
        "parent": None,
        "epic": "epic-012",
        "issue": "ISS-7",
        "meta": {},
    }
    assert re.match(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$", action["ts"])
    assert start == {
        "v": 1,
        "kind": "session",
        "event": "start",
        "id": start["id"],
        "ts": action["ts"],
        "session": action["session"],
        "agent": "PS",
        "project": "consilio",
        "session_type": "cli",
        "meta": {"host": host_name(), "auto": True},
    }
    assert start["id"] < action_id
    (shard,) = shard_files(store)
    assert shard.relative_to(store).as_posix() == (
        f"actionlog/{day[:4]}/{day[5:7]}/{day[8:10]}/{action['session']}.jsonl"
    )


def test_lines_are_canonical_json(store: Path) -> None:
    env = clean_env(store)
    assert (
        lore("log", "plan", "--context", '{"z": 1, "a": {"y": "é", "b": [1, 2]}}', env=env).code
        == 0
    )
    assert lore("log", "deploy", "--outcome", "failure", "--error", "boom", env=env).code == 0
    shards = shard_files(store)  # one, or two when midnight UTC passed between the two calls
    assert 1 <= len(shards) <= 2
    for shard in shards:
        data = shard.read_bytes()
        assert data.endswith(b"\n")
        for line in data.decode("utf-8").splitlines():
            record = json.loads(line)
            assert line == json.dumps(record, ensure_ascii=False, separators=(",", ":"),
                                      sort_keys=True)  # fmt: skip
    assert "é" in shards[0].read_text(encoding="utf-8")  # UTF-8, not \u escapes


def test_second_process_reuses_the_automatic_session(store: Path) -> None:
    env = clean_env(store, LORE_AGENT="PS", LORE_PROJECT="consilio")
    first = lore("log", "plan", env=env).out.strip()
    second = lore("log", "spawn", "--outcome", "in_progress", env=env).out.strip()
    records = stored(store)
    assert [(r["kind"], r.get("event") or r["type"]) for r in records] == [
        ("session", "start"),
        ("action", "plan"),
        ("action", "spawn"),
    ]
    assert [r["id"] for r in records[1:]] == [first, second]
    assert len({r["session"] for r in records}) == 1
    assert records[1]["agent"] == "PS" and records[1]["project"] == "consilio"
    assert records[2]["outcome"] == "in_progress"
    assert records[2]["category"] == "execution"


def test_defaults_agent_and_project(store: Path) -> None:
    result = lore("log", "search", "--json", env=clean_env(store))
    action = json.loads(result.out)
    assert action["agent"] == "agent"
    assert action["project"] == store.name
    assert action["outcome"] == "success"
    assert action["category"] == "learning"
    assert action["context"] == {}


def test_session_from_env_and_option(store: Path) -> None:
    env = clean_env(store, LORE_SESSION="sess-env")
    from_env = json.loads(lore("log", "plan", "--json", env=env).out)
    assert from_env["session"] == "sess-env"
    from_option = json.loads(lore("log", "plan", "--session", "sess-opt", "--json", env=env).out)
    assert from_option["session"] == "sess-opt"
    # explicit sessions get no automatic start event
    assert [r["kind"] for r in stored(store)] == ["action", "action"]
    assert {p.name for p in shard_files(store)} == {"sess-env.jsonl", "sess-opt.jsonl"}


def test_json_output_is_the_stored_action(store: Path) -> None:
    result = lore(
        "log",
        "validate",
        "--outcome",
        "failure",
        "--error",
        "2 criteria failed",
        "--epic",
        "epic-1",
        "--json",
        env=clean_env(store),
    )
    assert result.code == 0, result.err
    printed = json.loads(result.out)
    assert printed == stored_actions(store)[0]
    assert printed["category"] == "execution"
    assert printed["error"] == "2 criteria failed"


def test_context_from_file_and_stdin(store: Path, tmp_path: Path) -> None:
    context_file = tmp_path / "ctx.json"
    context_file.write_text('{\n  "tool_name": "Read",\n  "n": 3\n}\n')
    env = clean_env(store)
    assert lore("log", "tool_call", "--context", f"@{context_file}", env=env).code == 0
    assert lore("log", "spawn", "--context", "-", stdin='{"agent_id": "abc123"}', env=env).code == 0
    first, second = stored_actions(store)
    assert first["context"] == {"tool_name": "Read", "n": 3}
    assert second["context"] == {"agent_id": "abc123"}


def test_inline_equals_options(store: Path) -> None:
    result = lore(
        "log",
        '--context={"k": "v"}',
        "--outcome=blocked",
        "pr",
        "--parent=01HZZZZZZZZZZZZZZZZZZZZZZZ",
        env=clean_env(store),
    )
    assert result.code == 0, result.err
    (action,) = stored_actions(store)
    assert action["context"] == {"k": "v"}
    assert action["outcome"] == "blocked"
    assert action["type"] == "pr" and action["category"] == "git"
    assert action["parent"] == "01HZZZZZZZZZZZZZZZZZZZZZZZ"


def test_secrets_are_redacted_on_disk(store: Path) -> None:
    result = lore(
        "log",
        "tool_call",
        "--context",
        '{"api_key": "abc123", "path": "src/a.py"}',
        "--error",
        f"push failed with {SECRET_TOKEN}",
        "--json",
        env=clean_env(store),
    )
    assert result.code == 0, result.err
    printed = json.loads(result.out)
    (shard,) = shard_files(store)
    text = shard.read_text()
    assert "abc123" not in text
    assert SECRET_TOKEN not in text
    assert SECRET_TOKEN not in result.out
    (action,) = stored_actions(store)
    assert action == printed
    assert action["context"]["api_key"] == "[REDACTED]"
    assert action["context"]["path"] == "src/a.py"
    assert action["error"].startswith("push failed with ")
    assert action["meta"]["redactions"] == 2


@pytest.mark.parametrize(
    ("action_type", "category"),
    [
        ("commit", "git"),
        ("push", "git"),
        ("pr", "git"),
        ("deploy", "deployment"),
        ("plan", "planning"),
        ("spawn", "execution"),
        ("tool_call", "execution"),
        ("validate", "execution"),
        ("search", "learning"),
        ("apply_learning", "learning"),
        ("frobnicate", "other"),
    ],
)
def test_category_is_inferred_from_type(book: Lorebook, action_type: str, category: str) -> None:
    assert book.log(action_type)["category"] == category
    assert book.log(action_type, category="custom")["category"] == "custom"


# -- bad input on the fast path ----------------------------------------------------------------
BAD_INPUT = [
    (["commit", "--context", '{"a": 1,}'], ["--context", "1:9", "invalid JSON"]),
    (["commit", "--context", "[1, 2]"], ["context must be a JSON object"]),
    (["commit", "--context", "@missing.json"], ["missing.json"]),
    (["commit", "--outcome", "exploded"], ["exploded", "success, failure, blocked, in_progress"]),
    (["Commit"], ["'Commit'", "lowercase"]),
    (["bad type"], ["'bad type'", "lowercase"]),
    (["commit", "--duration", "-5"], ["-5", "non-negative"]),
    (["commit", "--duration", "inf"], ["inf"]),
    (["commit", "--duration", "nan"], ["nan"]),
    (["commit", "--parent", "not-a-ulid"], ["not-a-ulid", "ULID"]),
    (["commit", "--session", "has space"], ["has space"]),
]


@pytest.mark.parametrize(("args", "needles"), BAD_INPUT)
def test_bad_input_subprocess(
    store: Path, tmp_path: Path, args: list[str], needles: list[str]
) -> None:
    result = lore("log", *args, env=clean_env(store), cwd=tmp_path)
    assert_one_error_line(result, *needles)
    assert shard_files(store) == []


@pytest.mark.parametrize(("args", "needles"), BAD_INPUT)
def test_bad_input_in_process(
    store: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    needles: list[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    result = cli_run(["--root", str(store), "log", *args])
    assert_one_error_line(result, *needles)
    assert shard_files(store) == []


def test_invalid_json_in_a_file_names_file_line_and_column(store: Path, tmp_path: Path) -> None:
    bad = tmp_path / "ctx.json"
    bad.write_text('{\n  "a": oops\n}\n')
    assert_one_error_line(
        lore("log", "x", "--context", f"@{bad}", env=clean_env(store)), f"{bad}:2:8", "invalid JSON"
    )
    assert_one_error_line(
        lore("log", "x", "--context", "-", stdin="{\n\n  nope", env=clean_env(store)),
        "stdin",
        "3:3",
    )


def test_not_initialised(tmp_path: Path) -> None:
    bare = tmp_path / "bare"
    bare.mkdir()
    line = assert_one_error_line(lore("log", "commit", env=clean_env(bare)), "lore init")
    assert str(bare) in line
    line = assert_one_error_line(lore("log", "commit", cwd=bare), "lore init")
    assert not (bare / "actionlog").exists()
    assert_one_error_line(lore("--root", str(bare), "log", "commit"), "lore init")


def test_errors_as_json(store: Path) -> None:
    for result in (
        lore("log", "commit", "--outcome", "nope", "--json", env=clean_env(store)),
        lore("--root", str(store), "log", "commit", "--outcome", "nope", "--json"),
    ):
        assert result.code == 1
        assert result.out == ""
        lines = result.err.strip().splitlines()
        assert len(lines) == 1
        error = json.loads(lines[0])
        assert list(error) == ["error"]
        assert "nope" in error["error"] and "in_progress" in error["error"]


def _today_and_tomorrow() -> list[str]:
    now = datetime.now(UTC)
    return [(now + timedelta(days=n)).strftime("%Y/%m/%d") for n in (0, 1)]


def test_shard_path_is_a_directory(store: Path) -> None:
    for day in _today_and_tomorrow():
        (store / "actionlog" / day / "blocked.jsonl").mkdir(parents=True)
    for result in (
        lore("log", "commit", "--session", "blocked", env=clean_env(store)),
        lore("--root", str(store), "log", "commit", "--session", "blocked"),
    ):
        assert_one_error_line(result, "blocked.jsonl", "nothing was written")
    for day in _today_and_tomorrow():
        assert list((store / "actionlog" / day / "blocked.jsonl").iterdir()) == []
    assert shard_files(store) == []


def test_actionlog_is_a_file(store: Path) -> None:
    actionlog = store / "actionlog"
    for child in actionlog.iterdir():
        child.unlink()
    actionlog.rmdir()
    actionlog.write_text("not a directory\n")
    result = lore("log", "commit", env=clean_env(store))
    assert_one_error_line(result, "nothing was written")
    assert actionlog.read_text() == "not a directory\n"


def test_failed_append_leaves_an_existing_shard_intact(store: Path) -> None:
    env = clean_env(store, LORE_SESSION="keep")
    assert lore("log", "plan", env=env).code == 0
    (shard,) = shard_files(store)
    before = shard.read_bytes()
    assert_one_error_line(lore("log", "plan", "--duration", "-1", env=env), "non-negative")
    assert shard.read_bytes() == before


# -- in-process: `lorebook.cli.main` ---------------------------------------------------------
def test_in_process_appends(store: Path) -> None:
    result = cli_run(
        [
            "--root",
            str(store),
            "log",
            "deploy",
            "--context",
            "-",
            "--outcome",
            "in_progress",
            "--epic",
            "e-1",
            "--json",
        ],
        input='{"service": "api", "password": "hunter2"}',
    )
    assert result.code == 0, result.err
    printed = json.loads(result.out)
    (action,) = stored_actions(store)
    assert printed == action
    assert action["type"] == "deploy" and action["category"] == "deployment"
    assert action["outcome"] == "in_progress" and action["epic"] == "e-1"
    assert action["context"]["service"] == "api"
    assert action["context"]["password"] == "[REDACTED]"
    assert "hunter2" not in shard_files(store)[0].read_text()


def test_in_process_prints_the_id(store: Path) -> None:
    result = cli_run(
        ["--root", str(store), "log", "plan", "--duration", "2"], env={"LORE_SESSION": "s1"}
    )
    assert result.code == 0, result.err
    (action,) = stored_actions(store)
    assert result.out == action["id"] + "\n"
    assert action["session"] == "s1"
    assert action["duration_s"] == 2.0


def test_in_process_lore_errors_are_one_line(store: Path) -> None:
    result = cli_run(["--root", str(store), "log", "commit", "--duration", "-3"])
    assert_one_error_line(result, "non-negative")
    assert shard_files(store) == []


def test_log_help() -> None:
    result = lore("log", "--help")
    assert result.code == 0
    assert "Append one action of TYPE" in result.out
    for option in (
        "--context",
        "--outcome",
        "--epic",
        "--issue",
        "--parent",
        "--duration",
        "--error",
        "--category",
        "--agent",
        "--project",
        "--session",
        "--json",
    ):
        assert option in result.out
    assert "Examples:" in result.out


def test_a_value_may_start_with_a_dash(store: Path) -> None:
    """An option that takes a value takes the next word, whatever it looks like."""
    env = clean_env(store)
    result = lore("log", "test", "--error", "-x: no such flag", "--epic", "--json", env=env)
    assert result.code == 0, result.err
    (action,) = stored_actions(store)
    assert (action["error"], action["epic"]) == ("-x: no such flag", "--json")
    assert result.out.strip() == action["id"]  # --json was the epic, not the flag


def test_root_option_form(store: Path, tmp_path: Path) -> None:
    result = lore("--root", str(store), "log", "push", "--agent", "PS", cwd=tmp_path)
    assert result.code == 0, result.err
    (action,) = stored_actions(store)
    assert result.out.strip() == action["id"]
    assert action["type"] == "push" and action["agent"] == "PS"


def test_double_dash_and_repeated_flags(store: Path) -> None:
    env = clean_env(store)
    assert lore("log", "--epic", "e-1", "--", "commit", env=env).code == 0
    result = lore("log", "tool_call", "--json", "--json", env=env)
    assert result.code == 0, result.err
    first, second = stored_actions(store)
    assert (first["type"], first["epic"]) == ("commit", "e-1")
    assert json.loads(result.out) == second
