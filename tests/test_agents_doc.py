"""docs/agents.md "Use from any agent": its example lines and its standard-library writer give a
store that the schema, `lore check` and the readers accept; what the hooks write is schema-valid
too; and a line that breaks the schema is refused by both the schema and `lore check`.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from conftest import clean_env, lore, stored
from test_hooks import bash_payload, hook, payload

DOCS = Path(__file__).resolve().parent.parent / "docs"
PAGE = (DOCS / "agents.md").read_text(encoding="utf-8")
SCHEMA = json.loads((DOCS / "schema" / "action-v1.schema.json").read_text(encoding="utf-8"))
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def block(language: str) -> str:
    """The page's first code block in `language`."""
    return str(re.findall(rf"```{language}\n(.*?)```", PAGE, re.S)[0])


def example_lines() -> list[dict[str, Any]]:
    return [json.loads(line) for line in block("jsonl").splitlines() if line.strip()]


def schema_errors(record: Any) -> list[str]:
    return [e.message for e in VALIDATOR.iter_errors(record)]


def run(store: Path, *args: str) -> Any:
    return lore(*args, cwd=store, env=clean_env(store))


def test_the_example_lines_are_schema_valid() -> None:
    lines = example_lines()
    assert [r["kind"] for r in lines] == ["session", "action", "action", "session"]
    for record in lines:
        assert schema_errors(record) == [], record


def test_the_example_lines_appended_by_hand_are_read_like_any_other(store: Path) -> None:
    lines = example_lines()
    shard = store / "actionlog" / "2026" / "11" / "22" / "ci-build-4711.jsonl"
    shard.parent.mkdir(parents=True)
    shard.write_text("".join(json.dumps(r) + "\n" for r in lines))  # keys unsorted, spaced
    checked = run(store, "check")
    assert checked.code == 0, checked.out + checked.err
    listed = run(store, "actions", "--session", "ci-build-4711", "--json")
    assert listed.code == 0, listed.err
    actions = listed.json()
    assert isinstance(actions, list)
    assert sorted(a["type"] for a in actions) == ["commit", "validate"]
    sessions = run(store, "sessions", "--json").json()
    assert isinstance(sessions, list)
    (mine,) = [s for s in sessions if s["id"] == "ci-build-4711"]
    assert mine["status"] == "ended" and mine["action_count"] == 2


def test_the_standard_library_writer_of_the_page_writes_a_valid_store(store: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-I", "-c", block("python")],
        cwd=store,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    records = stored(store)
    assert [r["kind"] for r in records] == ["session", "action", "session"]
    for record in records:
        assert schema_errors(record) == [], record
    checked = run(store, "check")
    assert checked.code == 0, checked.out + checked.err
    resumed = run(store, "resume", "--session", "ci-build-4711", "--json")
    assert resumed.code == 0, resumed.err


def test_what_the_hooks_write_is_schema_valid(store: Path) -> None:
    for event, stdin in (
        ("session-start", payload("SessionStart", store, source="startup")),
        ("post-tool-use", bash_payload(store, "ok\n")),
        (
            "post-tool-use-failure",
            payload(
                "PostToolUseFailure",
                store,
                tool_name="Bash",
                tool_input={"command": "false"},
                error="exit 1",
            ),
        ),
        ("subagent-start", payload("SubagentStart", store, agent_id="a1", agent_type="fix")),
        ("subagent-stop", payload("SubagentStop", store, agent_id="a1", agent_type="fix")),
        ("pre-compact", payload("PreCompact", store, trigger="auto")),
        ("session-end", payload("SessionEnd", store, reason="prompt_input_exit")),
    ):
        assert hook(event, stdin, store).code == 0
    records = stored(store)
    assert {r.get("type") or r.get("event") for r in records} >= {
        "start",
        "tool_call",
        "spawn",
        "checkpoint",
        "end",
    }
    for record in records:
        assert schema_errors(record) == [], record


@pytest.mark.parametrize(
    ("name", "change"),
    [
        ("id not a ULID", {"id": "1234"}),
        ("ts without milliseconds", {"ts": "2026-11-22T10:01:30Z"}),
        ("an unknown outcome", {"outcome": "done"}),
        ("a type with capitals", {"type": "Validate"}),
        ("no session", {"session": None}),
    ],
)
def test_a_line_breaking_the_schema_is_refused_by_schema_and_check(
    store: Path, name: str, change: dict[str, Any]
) -> None:
    good = example_lines()[1]
    bad = {k: v for k, v in {**good, **change}.items() if v is not None}
    assert schema_errors(bad), name
    shard = store / "actionlog" / "2026" / "11" / "22" / "ci-build-4711.jsonl"
    shard.parent.mkdir(parents=True)
    shard.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    checked = run(store, "check")
    assert checked.code == 1, (name, checked.out)
    assert "ci-build-4711.jsonl:2" in checked.out, (name, checked.out)
