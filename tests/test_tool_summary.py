"""A captured tool call names its tool and telling argument (command, file, pattern...), and the
brief's action lines show them: `Bash: mise run test [failure]`, not `tool_call [failure]`.

The payload shapes are Claude Code's, as found in real transcripts
(../shared/data/claude-sessions)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import clean_env, lore, stored_actions
from lorebook import Sanitizer, tool_summary
from lorebook.log.open_work import describe

SID = "7c2e9d1a-4b3f-4e8a-9c1d-0a1b2c3d4e5f"
SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
ROOT = "/Users/dev/src/cli"

# (tool_name, tool_input as Claude Code sends it, the summary fields expected)
REAL_SHAPES: list[tuple[str, dict[str, Any], dict[str, str]]] = [
    (
        "Bash",
        {
            "command": "git diff main...HEAD --stat",
            "description": "Show diff stats between main and current branch",
        },
        {"command": "git diff main...HEAD --stat"},
    ),
    (
        "Read",
        {"file_path": f"{ROOT}/.github/workflows/release.yml", "offset": 10, "limit": 40},
        {"file": ".github/workflows/release.yml"},
    ),
    (
        "Edit",
        {
            "file_path": f"{ROOT}/.goreleaser.yaml",
            "old_string": "timeout: 20m",
            "new_string": "timeout: 45m",
            "replace_all": False,
        },
        {"file": ".goreleaser.yaml"},
    ),
    (
        "Write",
        {"file_path": f"{ROOT}/CHANGELOG.md", "content": "# Changelog\n"},
        {"file": "CHANGELOG.md"},
    ),
    ("MultiEdit", {"file_path": f"{ROOT}/cmd/main.go", "edits": []}, {"file": "cmd/main.go"}),
    (
        "NotebookEdit",
        {"notebook_path": f"{ROOT}/nb/a.ipynb", "new_source": "x = 1"},
        {"file": "nb/a.ipynb"},
    ),
    (
        "LSP",
        {
            "operation": "findReferences",
            "filePath": f"{ROOT}/cmd/messages.go",
            "line": 64,
            "character": 6,
        },
        {"file": "cmd/messages.go"},
    ),
    (
        "Grep",
        {"pattern": "errUnsupportedShell", "path": f"{ROOT}/cmd", "output_mode": "content"},
        {"pattern": "errUnsupportedShell"},
    ),
    ("Glob", {"pattern": "**/.goreleaser*"}, {"pattern": "**/.goreleaser*"}),
    (
        "WebFetch",
        {
            "url": "https://goreleaser.com/customization/notarize/",
            "prompt": "What are the valid fields?",
        },
        {"url": "https://goreleaser.com/customization/notarize/"},
    ),
    (
        "WebSearch",
        {"query": "goreleaser notarize macos configuration options 2025"},
        {"query": "goreleaser notarize macos configuration options 2025"},
    ),
    (
        "Task",
        {
            "description": "Explore session/checkpoint creation",
            "prompt": "Explore how...",
            "subagent_type": "Explore",
        },
        {"subagent": "Explore", "description": "Explore session/checkpoint creation"},
    ),
    (
        "Skill",
        {"skill": "entire-engineering:workflows:review"},
        {"skill": "entire-engineering:workflows:review"},
    ),
    (
        "mcp__linear-server__get_issue",
        {"id": "ENT-98"},
        {"mcp_server": "linear-server", "mcp_tool": "get_issue"},
    ),
    ("TodoWrite", {"todos": [{"content": "Run tests", "status": "pending"}]}, {}),
]


@pytest.mark.parametrize(
    ("tool", "given", "expected"), REAL_SHAPES, ids=[s[0] for s in REAL_SHAPES]
)
def test_summary_of_each_real_payload_shape(
    tool: str, given: dict[str, Any], expected: dict[str, str]
) -> None:
    assert tool_summary(tool, given, ROOT) == {"tool": tool, **expected}


def test_a_file_outside_the_repository_keeps_its_path() -> None:
    out = tool_summary("Read", {"file_path": "/Users/dev/.claude/plans/p.md"}, ROOT)
    assert out["file"] == "/Users/dev/.claude/plans/p.md"
    assert (
        tool_summary("Read", {"file_path": "/Users/dev/src/cli-other/x.go"}, ROOT)["file"]
        == "/Users/dev/src/cli-other/x.go"
    )


def test_odd_input_gives_the_tool_alone() -> None:
    assert tool_summary("", None) == {"tool": "unknown"}
    assert tool_summary("Bash", {"command": 3}) == {"tool": "Bash"}
    assert tool_summary("Bash", "ls") == {"tool": "Bash"}


def test_values_are_redacted_then_cut() -> None:
    redact = Sanitizer().redact_text
    command = f"curl -H 'Authorization: token {SECRET}' " + "x" * 500
    out = tool_summary("Bash", {"command": command}, None, lambda t: redact(t)[0])
    assert SECRET[:10] not in out["command"] and "[REDACTED" in out["command"]
    assert len(out["command"]) <= 200


def test_describe_names_the_tool_and_its_argument() -> None:
    def action(context: dict[str, Any], outcome: str = "success") -> dict[str, Any]:
        return {"type": "tool_call", "outcome": outcome, "context": context}

    assert (
        describe(action({"tool": "Bash", "command": "pytest -q\n  tests"}, "failure"))
        == "Bash: pytest -q tests [failure]"
    )
    assert describe(action({"tool": "Edit", "file": "src/x.py"})) == "Edit: src/x.py [success]"
    assert (
        describe(action({"tool": "Task", "subagent": "Explore", "description": "Find x"}))
        == "Task: Explore (Find x) [success]"
    )
    # records logged by the MCP server, or before the summary fields, name the tool alone
    assert describe(action({"tool_name": "get_recent_actions"})) == "get_recent_actions [success]"
    assert describe(action({"tool": "Bash"})) == "Bash [success]"


# -- the real hooks ---------------------------------------------------------------------------
def payload(event: str, cwd: Path, **fields: Any) -> str:
    base = {"session_id": SID, "transcript_path": str(cwd / "t.jsonl"), "cwd": str(cwd),
            "permission_mode": "default", "hook_event_name": event}  # fmt: skip
    return json.dumps({**base, **fields})


def hook(event: str, stdin: str, store: Path) -> None:
    done = lore("hook", event, cwd=store, env=clean_env(LORE_HOOK_DETACH="0"), stdin=stdin)
    assert (done.code, done.out, done.err) == (0, "", "")


def test_post_tool_use_stores_the_summary_fields(store: Path) -> None:
    hook(
        "post-tool-use",
        payload(
            "PostToolUse",
            store,
            tool_name="Edit",
            tool_use_id="toolu_01Edit",
            tool_input={
                "file_path": str(store / "src" / "auth.py"),
                "old_string": "a",
                "new_string": "b",
                "replace_all": False,
            },
            tool_response={
                "filePath": str(store / "src" / "auth.py"),
                "oldString": "a",
                "newString": "b",
                "userModified": False,
                "replaceAll": False,
            },
        ),
        store,
    )
    (action,) = stored_actions(store)
    ctx = action["context"]
    assert (ctx["tool"], ctx["file"]) == ("Edit", "src/auth.py")
    assert ctx["input"]["old_string"] == "a"  # the clipped input stays beside them


def test_post_tool_use_failure_stores_the_command_redacted(store: Path) -> None:
    command = f"GH_TOKEN={SECRET} mise run test:integration 2>&1"
    hook(
        "post-tool-use-failure",
        payload(
            "PostToolUseFailure",
            store,
            tool_name="Bash",
            tool_use_id="toolu_01Fail",
            tool_input={"command": command, "description": "Run integration tests"},
            error="Exit code 1\nFAIL cmd/entire/cli 3.2s",
            is_interrupt=False,
        ),
        store,
    )
    (action,) = stored_actions(store)
    assert action["outcome"] == "failure"
    assert action["context"]["tool"] == "Bash"
    assert "mise run test:integration 2>&1" in action["context"]["command"]
    assert SECRET[:10] not in json.dumps(action)


def test_resume_after_a_failed_bash_call_names_the_command(store: Path) -> None:
    hook("user-prompt-submit", payload("UserPromptSubmit", store, prompt="run the tests"), store)
    hook(
        "post-tool-use",
        payload(
            "PostToolUse",
            store,
            tool_name="Read",
            tool_use_id="toolu_01Read",
            tool_input={"file_path": str(store / "README.md")},
            tool_response={
                "type": "text",
                "file": {
                    "filePath": str(store / "README.md"),
                    "content": "# sample\n",
                    "numLines": 1,
                },
            },
        ),
        store,
    )
    hook(
        "post-tool-use-failure",
        payload(
            "PostToolUseFailure",
            store,
            tool_name="Bash",
            tool_use_id="toolu_01Test",
            tool_input={"command": "mise run test", "description": "Run the tests"},
            error="Exit code 2\nFAIL TestCheckpoint",
            is_interrupt=False,
        ),
        store,
    )
    done = lore("resume", cwd=store, env=clean_env())
    assert done.code == 0, done.err
    assert "Bash: mise run test [failure]" in done.out
    assert "Read: README.md [success]" in done.out
    assert "tool_call [" not in done.out
