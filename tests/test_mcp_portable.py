"""Every tool schema `lore mcp` serves is in the subset every MCP client accepts.

The schemas are read through a real `mcp` Client over stdio, as a client sees them, and walked
with the rules of `schema_rules`; planted schemas prove each rule is caught. Calls check that
the portable forms keep the tools' meaning: an omitted optional argument is "not given", a
`null` from an older caller still is, and a result with no value for a field leaves it out.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal

from conftest import git, lore, stored_actions
from schema_rules import problems

SRC = Path(__file__).resolve().parents[1] / "src"


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[BlockingPortal, Any, Path]]:
    from mcp import Client, StdioServerParameters

    root = tmp_path_factory.mktemp("portable") / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    assert lore("init", cwd=root).code == 0
    env = {k: os.environ[k] for k in ("PATH", "HOME", "LORE_MODEL_CACHE") if k in os.environ}
    env.update(PYTHONPATH=str(SRC), LORE_ROOT=str(root), LORE_PROJECT="proj", LORE_AGENT="PS")
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "lorebook", "mcp"], env=env, cwd=str(root)
    )
    with (
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(Client(params)) as mcp_client,
    ):
        yield portal, mcp_client, root


def served_problems(portal: BlockingPortal, mcp_client: Any) -> list[str]:
    tools = portal.call(mcp_client.list_tools).tools
    found: list[str] = []
    for tool in tools:
        wire = tool.model_dump(mode="json", by_alias=True, exclude_none=True)
        found += problems(tool.name, "inputSchema", wire["inputSchema"])
        found += problems(tool.name, "outputSchema", wire.get("outputSchema", {}))
    return found


def test_every_served_schema_is_in_the_portable_subset(client: tuple[Any, Any, Path]) -> None:
    portal, mcp_client, _ = client
    found = served_problems(portal, mcp_client)
    assert found == [], f"{len(found)} non-portable constructs:\n" + "\n".join(found)


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        (
            {
                "type": "object",
                "properties": {"tags": {"type": ["array", "null"], "items": {"type": "string"}}},
            },
            "t inputSchema #/properties/tags: `type` must be one of",
        ),
        (
            {
                "type": "object",
                "properties": {"tags": {"anyOf": [{"type": "array"}, {"type": "null"}]}},
            },
            "t inputSchema #/properties/tags: keyword 'anyOf' is outside the portable subset",
        ),
        (
            {
                "type": "object",
                "$defs": {"Hit": {"type": "object"}},
                "properties": {"hits": {"type": "array", "items": {"$ref": "#/$defs/Hit"}}},
            },
            "t inputSchema #: keyword '$defs' is outside the portable subset",
        ),
        (
            {
                "type": "object",
                "properties": {"hits": {"type": "array", "items": {"$ref": "#/$defs/Hit"}}},
            },
            "t inputSchema #/properties/hits/items: keyword '$ref' is outside the portable subset",
        ),
        (
            {
                "type": "object",
                "properties": {"context": {"type": "object", "additionalProperties": True}},
            },
            "t inputSchema #/properties/context: keyword 'additionalProperties' is outside",
        ),
        (
            {"type": "object", "properties": {"value": {"description": "anything"}}},
            "t inputSchema #/properties/value: `type` must be one of",
        ),
        (
            {"type": "object", "properties": {"epic": {"type": "string", "default": None}}},
            "t inputSchema #/properties/epic/default: None does not match type 'string'",
        ),
        (
            {"type": "object", "properties": {"kind": {"type": "string", "enum": ["a", None]}}},
            "t inputSchema #/properties/kind/enum: value None does not match type 'string'",
        ),
        (
            {"type": "object", "properties": {"tags": {"type": "array"}}},
            "t inputSchema #/properties/tags: an array needs `items`",
        ),
        (
            {"type": "object", "properties": {"value": True}},
            "t inputSchema #/properties/value: a schema must be an object, not True",
        ),
        (
            {"type": "object", "properties": {"n": {"type": "integer", "default": True}}},
            "t inputSchema #/properties/n/default: True does not match type 'integer'",
        ),
        (
            {"type": "object", "properties": {}, "required": ["query"]},
            "t inputSchema #/required: 'query' is not a property",
        ),
        (
            {"type": "object", "properties": {"x": {"type": "object", "nullable": True}}},
            "t inputSchema #/properties/x: keyword 'nullable' is outside the portable subset",
        ),
    ],
)
def test_a_planted_bad_schema_is_named_by_tool_and_path(schema: Any, expected: str) -> None:
    found = problems("t", "inputSchema", schema)
    assert any(line.startswith(expected) for line in found), found


def test_a_portable_schema_passes() -> None:
    schema = {
        "type": "object",
        "required": ["query"],
        "properties": {
            "query": {"type": "string", "description": "what to find"},
            "limit": {"type": "integer", "default": 5, "minimum": 1, "maximum": 50},
            "rate": {"type": "number", "default": 1},
            "kind": {"type": "string", "enum": ["lesson", "pattern"]},
            "tags": {"type": "array", "items": {"type": "string"}, "default": []},
            "context": {"type": "object"},
        },
    }
    assert problems("t", "inputSchema", schema) == []


def test_omitted_and_null_optional_arguments_both_mean_not_given(
    client: tuple[BlockingPortal, Any, Path],
) -> None:
    portal, mcp_client, root = client
    omitted = portal.call(mcp_client.call_tool, "log_action", {"action_type": "plan"})
    nulls = portal.call(
        mcp_client.call_tool,
        "log_action",
        {"action_type": "plan", "error": None, "epic": None, "context": None, "duration_s": None},
    )
    assert not omitted.is_error and not nulls.is_error, (omitted.content, nulls.content)
    stored = {a["id"]: a for a in stored_actions(root)}
    for result in (omitted, nulls):
        record = stored[result.structured_content["id"]]
        assert (record["error"], record["epic"], record["duration_s"]) == (None, None, None)
    found = portal.call(mcp_client.call_tool, "search_actions", {"type": "plan", "outcome": None})
    assert not found.is_error and found.structured_content["count"] == 2


def test_a_result_leaves_out_a_field_with_no_value(
    client: tuple[BlockingPortal, Any, Path],
) -> None:
    portal, mcp_client, _ = client
    result = portal.call(mcp_client.call_tool, "get_expertise", {})
    assert not result.is_error, result.content
    assert set(result.structured_content) == {"domains"}  # no `"domain": null` and the like
