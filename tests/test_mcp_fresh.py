"""`lore mcp` on a fresh clone: no tool waits for the search index to be built.

The store holds enough learnings that building the index takes a while; the index is built in
the background, and meanwhile the log tools answer, and `search_learnings` answers by keywords
and says so. Whether the build had finished is read from the index manifest (written last),
never from timings.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from anyio.from_thread import start_blocking_portal

from conftest import lore
from lorebook import Lorebook
from search_fixtures import age_learnings, write_learning
from test_mcp import Served, server_env

LEARNINGS = 500
TOPICS = ("cache", "deploy", "token", "queue", "schema", "probe", "bundle", "socket", "quota")


def manifest(root: Path) -> Path:
    return root / ".lore" / "cache" / "index" / "manifest.json"


@contextmanager
def serving(root: Path, seeded: dict[str, Any]) -> Iterator[Served]:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=["-m", "lorebook", "mcp"],
                                   env=server_env(root), cwd=str(root))
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(
        Client(params)
    ) as client:
        yield Served(portal, client, root, seeded)


@pytest.fixture()
def fresh(store: Path, embedder: Any) -> Iterator[Served]:
    """A clone with many learnings and an earlier session, never indexed, and its server."""
    for n in range(LEARNINGS):
        topic = TOPICS[n % len(TOPICS)]
        write_learning(store, f"l-{n:04d}", title=f"The {topic} fails after change {n}",
                       category="ops", severity="low", created="2026-10-01",
                       body=f"## Problem\nThe {topic} broke in step {n} of the rollout.\n\n"
                            f"## Key Takeaway\nCheck the {topic} settings before step {n}.")
    write_learning(store, "zebrafish-lesson", title="Zebrafish fixtures leak file handles",
                   category="testing", severity="high", created="2026-11-01",
                   body="## Key Takeaway\nClose the zebrafish fixture after each test.")
    age_learnings(store)
    earlier = Lorebook.open(store, env={}).start_session(agent="PS", project="proj")
    earlier.log("deploy", outcome="failure", error="port 8080 in use")
    with serving(store, {"session": earlier.id}) as served:
        yield served


def test_tools_answer_while_the_index_is_built_and_search_says_it_is_keyword_only(
    fresh: Served,
) -> None:
    root = fresh.root
    logged = fresh.ok("log_action", {"action_type": "plan"})
    assert logged["type"] == "plan"
    brief = fresh.ok("get_recent_actions", {})
    assert brief["found"] is True and brief["session"]["id"] == fresh.seeded["session"]
    found = fresh.ok("search_learnings", {"query": "zebrafish fixture"})
    assert not manifest(root).exists(), "the calls waited for the index build"
    assert found["learnings"][0]["id"] == "zebrafish-lesson"
    assert found["mode"] == "keyword"
    assert "being built" in found["degraded"]
    brief = fresh.ok("preflight", {"task": "zebrafish fixture tests"})
    assert "being built" in brief["degraded"]
    busy = fresh.error("index_learning", {})  # an answer now, not after the build
    assert "being built in the background" in busy
    assert not manifest(root).exists()

    deadline = time.monotonic() + 600
    while not manifest(root).exists():  # the build goes on in the background
        assert time.monotonic() < deadline, "the index was never built"
        time.sleep(0.5)
    after = fresh.ok("search_learnings", {"query": "zebrafish fixture"})
    assert after["mode"] == "hybrid" and after["degraded"] is None
    assert after["learnings"][0]["id"] == "zebrafish-lesson"


def test_get_recent_actions_resumes_the_session_lore_resume_resumes_not_the_newest(
    store: Path,
) -> None:
    """The brief of `lore resume` (the catalog's choice, not a listing of every session): a
    session that ended normally after a disconnected one does not hide the failed deploy."""
    book = Lorebook.open(store, env={})
    cut = book.start_session(agent="PS", project="proj")
    cut.log("deploy", outcome="failure", error="port 8080 in use")
    with book.session(agent="PS", project="proj") as later:
        later.log("plan")
    resumed = lore("resume", "--json", "--project", "proj", cwd=store)
    assert resumed.code == 0, resumed.err
    assert json.loads(resumed.out)["session"]["id"] == cut.id
    with serving(store, {}) as served:
        served.ok("log_action", {"action_type": "plan"})  # the server's own session is newest
        brief = served.ok("get_recent_actions", {})
        assert brief["found"] is True and brief["session"]["id"] == cut.id
        assert brief["recent_actions"][0]["error"] == "port 8080 in use"
        missing = served.ok("get_recent_actions", {"project": "elsewhere"})
        assert missing["found"] is False and "elsewhere" in missing["message"]
