"""`lore mcp` end to end: a real `mcp` Client over stdio against `python -m lorebook mcp`.

One server process serves the whole module (its index and model stay warm, as in real use);
the tests check each tool's structured result against what the store holds, the errors a
client can cause, and that every call is logged as a redacted `tool_call` action.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal

from conftest import LORE, git, lore, stored_actions
from lorebook import Lorebook
from lorebook.mcp.reference import BEGIN, END, reference
from lorebook.render.framing import CLOSE, NOTICE, OPEN
from search_fixtures import LEARNINGS, write_learning

SRC = Path(__file__).resolve().parents[1] / "src"
DOCS = Path(__file__).resolve().parents[1] / "docs" / "mcp.md"
SECRET = "ghp_" + "Z" * 36  # a GitHub token shape the sanitizer knows
TOOLS = {
    "log_action",
    "get_recent_actions",
    "get_subagent_status",
    "search_actions",
    "get_activity_report",
    "export_training_data",
    "search_learnings",
    "index_learning",
    "track_learning_application",
    "get_learning_stats",
    "record_occurrence",
    "preflight",
    "draft_learning",
    "promote_learning",
    "get_expertise",
}
GIT_ID = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
}


def server_env(root: Path) -> dict[str, str]:
    """What the child needs, explicitly: the stdio client passes on only a few variables."""
    env = {k: os.environ[k] for k in ("PATH", "HOME", "LORE_MODEL_CACHE") if k in os.environ}
    env.update(
        GIT_ID, PYTHONPATH=str(SRC), LORE_ROOT=str(root), LORE_PROJECT="proj", LORE_AGENT="PS"
    )
    return env


def seed(root: Path) -> dict[str, Any]:
    """An earlier session that disconnected mid-work, learnings and a pattern."""
    assert lore("init", cwd=root).code == 0
    for learning_id, fields in LEARNINGS.items():
        write_learning(root, learning_id, **fields)
    write_learning(
        root,
        "port-pattern",
        kind="pattern",
        title="Port already in use on deploy",
        category="deployment",
        created="2026-11-01",
        solutions=[{"id": "s1", "text": "Stop the old one"}],
    )
    book = Lorebook.open(root, env={})
    earlier = book.start_session(agent="PS", project="proj")
    earlier.log("plan", epic="e-1", context={"approach": "JWT"})
    earlier.log(
        "spawn",
        outcome="in_progress",
        epic="e-1",
        context={"agent_id": "impl-0", "subagent_type": "implementation"},
    )
    earlier.log("spawn", outcome="success", epic="e-1", context={"agent_id": "impl-0"})
    earlier.log(
        "spawn",
        outcome="in_progress",
        epic="e-1",
        context={"agent_id": "impl-1", "task_description": "Write the token refresh"},
    )
    earlier.log("validate", outcome="failure", epic="e-1", error="2 checks failed")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "store")
    return {"session": earlier.id}


class Served:
    """The client of one running `lore mcp`, called from sync tests through a portal."""

    def __init__(self, portal: BlockingPortal, client: Any, root: Path, seeded: dict[str, Any]):
        self.portal, self.client, self.root, self.seeded = portal, client, root, seeded

    def call(self, name: str, args: dict[str, Any] | None = None) -> Any:
        return self.portal.call(self.client.call_tool, name, args or {})

    def ok(self, name: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        result = self.call(name, args)
        assert not result.is_error, result.content
        assert isinstance(result.structured_content, dict)
        return result.structured_content

    def error(self, name: str, args: dict[str, Any]) -> str:
        result = self.call(name, args)
        assert result.is_error, result.structured_content
        text = result.content[0].text
        assert "\n" not in text, text
        return str(text)

    def book(self) -> Lorebook:
        return Lorebook.open(self.root, env={})


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[Served]:
    from mcp import Client, StdioServerParameters

    root = tmp_path_factory.mktemp("mcp") / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "README.md").write_text("# sample\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    seeded = seed(root)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "lorebook", "mcp"], env=server_env(root), cwd=str(root)
    )
    with (
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(Client(params)) as client,
    ):
        index = root / ".lore" / "cache" / "index" / "manifest.json"
        deadline = time.monotonic() + 300
        while not index.exists() and time.monotonic() < deadline:  # built in the background:
            time.sleep(0.2)  # these tests are about the tools over a built index
        yield Served(portal, client, root, seeded)


def tool_calls(root: Path, tool: str) -> list[dict[str, Any]]:
    return [
        a
        for a in stored_actions(root)
        if a["type"] == "tool_call" and a["context"].get("tool_name") == tool
    ]


def test_lists_every_tool_with_short_descriptions_and_both_schemas(served: Served) -> None:
    tools = served.portal.call(served.client.list_tools).tools
    assert {t.name for t in tools} == TOOLS
    for tool in tools:
        assert tool.description and len(tool.description) <= 100, tool.name
        assert tool.input_schema["type"] == "object"
        assert tool.output_schema and tool.output_schema["type"] == "object", tool.name
        assert "title" not in tool.input_schema and "title" not in tool.output_schema  # lean


def test_the_docs_hold_the_reference_generated_from_the_served_schemas(served: Served) -> None:
    tools = served.portal.call(served.client.list_tools).tools
    wire = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]
    expected = reference(wire)
    page = DOCS.read_text(encoding="utf-8")
    start, end = page.index(BEGIN), page.index(END) + len(END) + 1
    assert page[start:end] == expected, "docs/mcp.md is stale: run `lore mcp --list-tools`"
    listed = lore("mcp", "--list-tools")
    assert listed.code == 0, listed.err
    assert listed.out == expected


def test_log_action_is_stored_and_found_by_search_actions(served: Served) -> None:
    logged = served.ok(
        "log_action",
        {"action_type": "deploy", "epic": "e-9", "context": {"service": "api", "port": 8080}},
    )
    stored = {a["id"]: a for a in stored_actions(served.root)}
    record = stored[logged["id"]]
    assert (record["type"], record["epic"], record["context"]) == (
        "deploy",
        "e-9",
        {"service": "api", "port": 8080},
    )
    assert record["session"] == logged["session"] != served.seeded["session"]
    found = served.ok("search_actions", {"type": "deploy", "epic": "e-9"})
    assert found["count"] == 1 and found["actions"][0]["id"] == logged["id"]


def test_get_recent_actions_resumes_the_earlier_session_not_its_own(served: Served) -> None:
    served.ok("log_action", {"action_type": "plan"})  # the server's own session is newer
    brief = served.ok("get_recent_actions", {})
    assert brief["found"] is True
    assert brief["session"]["id"] == served.seeded["session"]
    assert brief["epic"] == "e-1"
    assert "impl-1" in brief["work_in_progress"]
    assert brief["suggested_next_steps"]
    assert brief["recent_actions"][0]["type"] == "validate"
    # the same brief as `lore resume` (framed as data) and its parts
    assert brief["last_failure"]["type"] == "validate"
    assert set(brief["files"]) == {"edited", "read", "edited_count", "read_count"}
    assert brief["brief"].startswith(NOTICE) and "Last failure:" in brief["brief"]
    assert served.ok("get_recent_actions", {"project": "elsewhere"})["found"] is False


def test_get_subagent_status_from_spawn_actions(served: Served) -> None:
    agents = {a["agent_id"]: a for a in served.ok("get_subagent_status", {})["subagents"]}
    assert agents["impl-1"]["status"] == "running"
    assert agents["impl-1"]["task"] == "Write the token refresh"
    assert agents["impl-0"]["status"] == "success"
    assert agents["impl-0"]["subagent_type"] == "implementation"
    one = served.ok("get_subagent_status", {"agent_id": "impl-0"})
    assert [a["agent_id"] for a in one["subagents"]] == ["impl-0"]
    assert "agent_id 'ghost'" in served.error("get_subagent_status", {"agent_id": "ghost"})


def test_activity_report_matches_the_library(served: Served) -> None:
    report = served.ok("get_activity_report", {"days": 7, "group_by": "type"})
    after = served.book().report(days=7, group_by="type")
    # the library sees one action more: the tool_call of the report itself
    assert after["summary"]["total_actions"] == report["summary"]["total_actions"] + 1
    assert report["group_by"] == "type"
    assert any(f["type"] == "validate" for f in report["recent_failures"])
    since = served.ok("get_activity_report", {"since": "3d"})  # replaces the default 7 days
    assert since["window"]["since"] > report["window"]["since"]


def test_export_training_data_writes_what_the_manifest_says(served: Served) -> None:
    manifest = served.ok("export_training_data", {"path": "exports/train.jsonl"})
    path = served.root / "docs" / "training-data" / "exports" / "train.jsonl"
    assert served.root / manifest["path"] == path  # relative to the export folder
    lines = path.read_text(encoding="utf-8").splitlines()
    assert manifest["record_count"] == len(lines) > 0
    assert (served.root / manifest["manifest"]).is_file()


def test_search_learnings_with_applications_and_effectiveness(served: Served) -> None:
    tracked = served.ok(
        "track_learning_application",
        {"learning_id": "rls-anon-insert", "outcome": "success", "epic": "e-1"},
    )
    assert (tracked["applications"], tracked["success_rate"]) == (1, 1.0)
    found = served.ok("search_learnings", {"query": "row level security blocks anonymous insert"})
    top = found["learnings"][0]
    assert top["id"] == "rls-anon-insert"
    assert found["results_count"] == len(found["learnings"])
    assert top["applications"] == 1 and top["success_rate"] == 1.0
    assert [a["epic"] for a in top["applied"]] == ["e-1"]
    assert found["recommendation"].startswith("rls-anon-insert")
    bare = served.ok(
        "search_learnings",
        {
            "query": "row level security",
            "limit": 1,
            "include_applications": False,
            "include_effectiveness": False,
        },
    )
    assert "applied" not in bare["learnings"][0]  # a field with no value is left out
    assert "success_rate" not in bare["learnings"][0]
    stats = served.ok("get_learning_stats", {"learning_id": "rls-anon-insert"})["learnings"]
    assert stats[0]["applications"] == 1
    applied = [a for a in stored_actions(served.root) if a["type"] == "apply_learning"]
    assert [a["id"] for a in applied] == [tracked["action_id"]]


def test_record_occurrence_of_a_pattern(served: Served) -> None:
    done = served.ok(
        "record_occurrence",
        {"pattern_id": "port-pattern", "solution": "s1", "success": True, "minutes": 12},
    )
    assert (done["occurrence_count"], done["success_rate"], done["outcome"]) == (1, 1.0, "success")
    stored = {a["id"]: a for a in stored_actions(served.root)}[done["action_id"]]
    assert stored["type"] == "occurrence" and stored["context"]["minutes"] == 12
    assert "no solution 's9'" in served.error(
        "record_occurrence", {"pattern_id": "port-pattern", "solution": "s9", "success": True}
    )


def test_index_learning_makes_a_new_file_searchable(served: Served) -> None:
    write_learning(
        served.root,
        "zebra-outage",
        title="The zebracorn outage of the queue",
        category="ops",
        created="2026-11-02",
        body="## Key Takeaway\nDrain the zebracorn queue first.",
    )
    done = served.ok("index_learning", {"learning_id": "zebra-outage"})
    assert done["added"] + done["updated"] == 1
    found = served.ok("search_learnings", {"query": "zebracorn outage", "limit": 1})
    assert found["learnings"][0]["id"] == "zebra-outage"


def test_preflight_brings_the_lesson_and_is_logged(served: Served) -> None:
    brief = served.ok("preflight", {"task": "deploy the new container on port 8080"})
    assert "deploy-port-conflict" in [item["id"] for item in brief["learnings"]]
    assert "RELEVANT PAST LEARNINGS" in brief["text"]
    lines = brief["text"].splitlines()  # prompt-ready text is framed as quoted data
    assert lines[:2] == [NOTICE, OPEN] and CLOSE in lines
    searches = [a for a in stored_actions(served.root) if a["type"] == "search"]
    assert searches[-1]["context"]["query"] == "deploy the new container on port 8080"


def test_draft_then_promote_in_a_commit(served: Served) -> None:
    draft = served.ok(
        "draft_learning",
        {
            "title": "Pin the base image digest",
            "problem": "Builds changed overnight.",
            "takeaway": "Pin by digest.",
            "tags": ["docker"],
        },
    )
    assert draft["status"] == "written"
    learning = served.book().learnings.get(draft["id"])
    assert learning.status == "draft" and "Pin by digest." in learning.body
    promoted = served.ok("promote_learning", {"learning_id": draft["id"]})
    assert served.book().learnings.get(draft["id"]).status == "published"
    assert git(served.root, "log", "-1", "--format=%H").strip() == promoted["commit"]
    assert "exactly one of title, epic or issue" in served.error("draft_learning", {})


def test_get_expertise_lists_domains_and_reads_one(served: Served) -> None:
    listed = served.ok("get_expertise", {})
    assert "database" in [d["domain"] for d in listed["domains"]]
    one = served.ok("get_expertise", {"domain": "database"})
    assert (one["domain"], one["exists"], one.get("content")) == ("database", False, None)
    assert "content" not in one  # a field with no value is left out, not null
    lines = one["prompt"].splitlines()  # prompt-ready text is framed as quoted data
    assert lines[:2] == [NOTICE, OPEN] and lines[-1] == CLOSE
    assert "\\## Domain Expertise: Database" in lines  # a heading inside is escaped


@pytest.mark.parametrize(
    ("tool", "args", "field"),
    [
        ("search_learnings", {"query": "x", "limit": "many"}, "limit"),
        ("search_learnings", {}, "query"),
        ("log_action", {"action_type": "deploy", "context": "not an object"}, "context"),
        (
            "track_learning_application",
            {"learning_id": "rls-anon-insert", "outcome": "maybe"},
            "outcome",
        ),
        ("get_activity_report", {"days": 0}, "days"),
        (
            "record_occurrence",
            {"pattern_id": "port-pattern", "solution": "s1", "success": "often"},
            "success",
        ),
    ],
)
def test_wrong_arguments_are_one_line_tool_errors_naming_the_field(
    served: Served, tool: str, args: dict[str, Any], field: str
) -> None:
    message = served.error(tool, args)
    assert message.startswith(f"{tool}: invalid arguments: {field}: "), message
    assert served.ok("get_learning_stats", {})["learnings"]  # the server is still serving


@pytest.mark.parametrize(
    ("tool", "args", "needle"),
    [
        (
            "track_learning_application",
            {"learning_id": "no-such", "outcome": "success"},
            "'no-such'",
        ),
        ("promote_learning", {"learning_id": "no-such"}, "'no-such'"),
        ("log_action", {"action_type": "Not A Type"}, "action type"),
        ("search_actions", {"since": "last tuesday"}, "since"),
    ],
)
def test_library_refusals_are_one_line_tool_errors(
    served: Served, tool: str, args: dict[str, Any], needle: str
) -> None:
    message = served.error(tool, args)
    assert message.startswith(f"{tool}: ") and needle in message, message
    assert "Traceback" not in message


def test_every_call_is_logged_as_a_tool_call_with_secrets_redacted(served: Served) -> None:
    served.ok("log_action", {"action_type": "deploy", "context": {"token": SECRET}})
    served.error(
        "track_learning_application", {"learning_id": f"id {SECRET}", "outcome": "success"}
    )
    calls = tool_calls(served.root, "log_action")
    last = calls[-1]
    assert last["outcome"] == "success" and last["duration_s"] >= 0
    assert last["context"]["params"]["action_type"] == "deploy"
    assert last["context"]["params"]["context"]["token"] != SECRET
    assert last["meta"]["via"] == "mcp"
    failed = tool_calls(served.root, "track_learning_application")[-1]
    assert failed["outcome"] == "failure" and failed["error"]
    shards = "".join(p.read_text() for p in (served.root / "actionlog").rglob("*.jsonl"))
    assert SECRET not in shards
    logged = {
        a["context"]["tool_name"] for a in stored_actions(served.root) if a["type"] == "tool_call"
    }
    assert {"get_subagent_status", "search_actions", "log_action"} <= logged


def test_lore_mcp_outside_a_store_or_with_a_bad_option_is_one_error_line(tmp_path: Path) -> None:
    for args in (["mcp", "--root", str(tmp_path)], ["mcp", "--bogus"]):
        done = lore(*args)
        assert done.code == 1, done
        lines = done.err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("lore: error: "), done.err


def test_lore_help_lists_mcp_and_mcp_help_describes_it() -> None:
    assert "mcp" in lore("--help").out
    helped = lore("mcp", "--help")
    assert helped.code == 0 and "--root" in helped.out


def test_the_server_ends_its_own_session_when_the_client_leaves(tmp_path: Path) -> None:
    from mcp import Client, StdioServerParameters

    Lorebook.init(tmp_path, env={})
    params = StdioServerParameters(
        command=LORE[0], args=[*LORE[1:], "mcp"], env=server_env(tmp_path), cwd=str(tmp_path)
    )

    async def one_call() -> None:
        async with Client(params) as client:
            assert not (await client.call_tool("search_actions", {})).is_error

    anyio.run(one_call)
    sessions = Lorebook.open(tmp_path, env={}).sessions()
    assert [(s.session_type, s.status, s.end_reason) for s in sessions] == [
        ("mcp", "ended", "normal")
    ]


def test_a_call_with_params_nested_past_the_limit_is_clipped_and_logged(served: Served) -> None:
    deep: dict[str, Any] = {}
    inner = deep
    for _ in range(70):  # deeper than log.max_depth (64)
        inner["a"] = {}
        inner = inner["a"]
    logged = served.ok("log_action", {"action_type": "plan", "context": deep})
    (plan,) = [a for a in stored_actions(served.root) if a["id"] == logged["id"]]
    assert plan["meta"]["clipped"] == ["context.a.a.a.a…"]
    last = tool_calls(served.root, "log_action")[-1]
    assert last["outcome"] == "success" and last["context"]["params"]["context"]["a"]
    assert last["meta"]["clipped"] == ["context.params.context.a.a…"]


def test_a_bug_in_a_tool_is_a_one_line_internal_error_and_still_logged(
    book: Lorebook, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from lorebook.mcp.server import LoreServer

    def broken(**_: Any) -> Any:
        raise RuntimeError("a bug")

    server = LoreServer(book)
    monkeypatch.setattr(book, "actions", broken)
    result = anyio.run(server.call_tool, "search_actions", {"limit": 1})
    assert result.is_error
    assert result.content[0].text == (
        "search_actions: internal error (RuntimeError); the server's stderr has the details"
    )
    assert "RuntimeError: a bug" in capsys.readouterr().err  # the traceback, for the maintainer
    server.end()
    logged = [a for a in stored_actions(book.root) if a["type"] == "tool_call"]
    assert [(a["context"]["tool_name"], a["outcome"]) for a in logged] == [
        ("search_actions", "failure")
    ]


def test_a_warning_belongs_to_the_call_that_caused_it(served: Served) -> None:
    # the defect: the index kept every warning, so one over-long query made every later
    # search and preflight of the server say "the query is ... characters long"
    long_query = "row level security " * 600  # past the 10,000 characters searched
    found = served.ok("search_learnings", {"query": long_query, "limit": 1})
    assert any("characters long" in w for w in found["warnings"]), found["warnings"]
    again = served.ok("search_learnings", {"query": "row level security", "limit": 1})
    assert again["learnings"] and not any("characters long" in w for w in again["warnings"])
    brief = served.ok("preflight", {"task": "deploy the new container on port 8080"})
    assert not any("characters long" in w for w in brief["warnings"]), brief["warnings"]
    long_brief = served.ok("preflight", {"task": long_query})
    assert any("characters long" in w for w in long_brief["warnings"])
