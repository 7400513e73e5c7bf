"""`lore mcp` on a fresh clone: no tool waits for the search index to be built.

The store holds enough learnings that building the index takes a while; the index is built in
the background, and meanwhile the log tools answer, and `search_learnings` answers by keywords
and says so. Whether the build had finished is read from the index manifest (written last),
never from timings.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager, suppress
from datetime import UTC, datetime, timedelta
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

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "lorebook", "mcp"], env=server_env(root), cwd=str(root)
    )
    with (
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(Client(params)) as client,
    ):
        yield Served(portal, client, root, seeded)


@pytest.fixture()
def fresh(store: Path, embedder: Any) -> Iterator[Served]:
    """A clone with many learnings and an earlier session, never indexed, and its server."""
    for n in range(LEARNINGS):
        topic = TOPICS[n % len(TOPICS)]
        write_learning(
            store,
            f"l-{n:04d}",
            title=f"The {topic} fails after change {n}",
            category="ops",
            severity="low",
            created="2026-10-01",
            body=f"## Problem\nThe {topic} broke in step {n} of the rollout.\n\n"
            f"## Key Takeaway\nCheck the {topic} settings before step {n}.",
        )
    write_learning(
        store,
        "zebrafish-lesson",
        title="Zebrafish fixtures leak file handles",
        category="testing",
        severity="high",
        created="2026-11-01",
        body="## Key Takeaway\nClose the zebrafish fixture after each test.",
    )
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
    # the manifest is written before the build lets go of the index: until it has, a search
    # answers by keyword and says why; then by hybrid search
    after = fresh.ok("search_learnings", {"query": "zebrafish fixture"})
    while "degraded" in after:
        assert after["mode"] == "keyword", after
        assert time.monotonic() < deadline, "the index build never finished"
        time.sleep(0.5)
        after = fresh.ok("search_learnings", {"query": "zebrafish fixture"})
    assert after["mode"] == "hybrid"
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


# -- the action catalog, built in a child process: held there, every tool still answers -------
def catalog_built(root: Path) -> bool:
    """The catalog's own marker of a finished build (a file alone is a build under way)."""
    path = root / ".lore" / "cache" / "catalog.sqlite"
    if not path.exists():
        return False
    try:
        with closing(sqlite3.connect(path, timeout=0)) as conn:
            return conn.execute("SELECT 1 FROM meta WHERE key = 'built'").fetchone() is not None
    except sqlite3.Error:  # created, not yet a database: not built
        return False


def catalog_children(root: Path) -> list[int]:
    """The processes building this store's catalog (`python -c <build> ROOT`)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if (
            b"-c" in argv
            and argv[-2:] == [str(root).encode(), b""]
            and any(b"sync_catalog" in word for word in argv)
        ):
            found.append(int(entry.name))
    return found


class Held:
    """The catalog build's process, stopped the moment it appears (`wait`), until `release`."""

    def __init__(self, root: Path) -> None:
        self.root, self.pids = root, list[int]()
        self.stop = threading.Event()
        self.watcher = threading.Thread(target=self._hold, daemon=True)

    def _hold(self) -> None:
        while not self.stop.is_set() and not self.pids:
            for pid in catalog_children(self.root):
                os.kill(pid, signal.SIGSTOP)
                self.pids.append(pid)
            time.sleep(0.001)

    def wait(self) -> None:
        deadline = time.monotonic() + 120
        while not self.pids:
            assert time.monotonic() < deadline, "the server started no catalog build process"
            time.sleep(0.01)

    def release(self) -> None:
        self.stop.set()
        self.watcher.join()
        for pid in self.pids:
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)


@contextmanager
def catalog_build_held(root: Path) -> Iterator[Held]:
    """Hold the catalog build of a server started inside: its calls meanwhile answer while
    the build is deterministically unfinished."""
    held = Held(root)
    held.watcher.start()
    try:
        yield held
    finally:
        held.release()


def long_log(root: Path) -> dict[str, Any]:
    """Seventy days of work (more than a query builds a catalog for), a learning applied a
    month ago and yesterday, a pattern, and subagents spawned then and now."""
    book = Lorebook.open(root, env={})
    now = datetime.now(UTC)
    for day in range(70, 0, -1):
        when = now - timedelta(days=day)
        session = book.start_session(agent="PS", project="proj", now=when)
        for n in range(20):
            book.log("tool_call", session=session.id, context={"n": n}, now=when)
        book.end_session(session.id, now=when + timedelta(minutes=5))
    old = book.start_session(agent="PS", project="proj", now=now - timedelta(days=30))
    old.log(
        "spawn",
        outcome="in_progress",
        context={"agent_id": "old-agent"},
        now=now - timedelta(days=30),
    )
    old.log(
        "apply_learning",
        outcome="success",
        context={"learning": "zebrafish-lesson"},
        now=now - timedelta(days=30),
    )
    recent = book.start_session(agent="PS", project="proj", now=now - timedelta(days=1))
    recent.log(
        "spawn",
        outcome="in_progress",
        context={"agent_id": "new-agent"},
        now=now - timedelta(days=1),
    )
    recent.log(
        "apply_learning",
        outcome="failure",
        context={"learning": "zebrafish-lesson"},
        now=now - timedelta(days=1),
    )
    recent.log("deploy", outcome="failure", error="port 8080 in use", now=now - timedelta(hours=2))
    return {"session": recent.id}


def test_every_tool_answers_while_the_catalog_build_is_held_and_says_what_is_partial(
    store: Path,
) -> None:
    write_learning(
        store,
        "zebrafish-lesson",
        title="Zebrafish fixtures leak file handles",
        category="testing",
        severity="high",
        created="2026-11-01",
        body="## Key Takeaway\nClose the zebrafish fixture after each test.",
    )
    write_learning(
        store,
        "port-pattern",
        kind="pattern",
        title="Port already in use on deploy",
        category="deployment",
        created="2026-11-01",
        solutions=[{"id": "s1", "text": "Stop the old one"}],
    )
    age_learnings(store)
    seeded = long_log(store)
    assert not catalog_built(store)
    with catalog_build_held(store) as held, serving(store, seeded) as served:
        held.wait()  # the server starts its build before it answers the handshake
        answers = {
            "log_action": served.ok("log_action", {"action_type": "plan"}),
            "get_recent_actions": served.ok("get_recent_actions", {}),
            "search_actions": served.ok("search_actions", {"type": "deploy"}),
            "get_activity_report": served.ok("get_activity_report", {"days": 7}),
            "get_subagent_status": served.ok("get_subagent_status", {}),
            "get_learning_stats": served.ok("get_learning_stats", {}),
            "track_learning_application": served.ok(
                "track_learning_application",
                {"learning_id": "zebrafish-lesson", "outcome": "success"}),
            "record_occurrence": served.ok(
                "record_occurrence", {"pattern_id": "port-pattern", "solution": "s1",
                                      "success": True}),
            "search_learnings": served.ok("search_learnings", {"query": "zebrafish fixture"}),
            "preflight": served.ok("preflight", {"task": "zebrafish fixture tests"}),
            "export_training_data": served.ok("export_training_data", {"path": "held.jsonl"}),
            "draft_learning": served.ok("draft_learning", {"title": "Held builds answer"}),
            "get_expertise": served.ok("get_expertise", {}),
        }  # fmt: skip
        assert not catalog_built(store), "the build was not held"
        assert answers["get_recent_actions"]["session"]["id"] == seeded["session"]
        assert answers["search_actions"]["actions"][0]["error"] == "port 8080 in use"
        failures = answers["get_activity_report"]["recent_failures"]
        assert [f["error"] for f in failures] == ["port 8080 in use"]
        assert answers["export_training_data"]["record_count"] > 70 * 20
        assert answers["search_learnings"]["learnings"][0]["id"] == "zebrafish-lesson"
        # figures over the whole log: from its last days, and said so
        for name in ("get_subagent_status", "get_learning_stats", "track_learning_application",
                     "record_occurrence"):  # fmt: skip
            assert "being built" in answers[name]["partial"], (name, answers[name])
        agents = [a["agent_id"] for a in answers["get_subagent_status"]["subagents"]]
        assert agents == ["new-agent"]
        stats = {e["id"]: e for e in answers["get_learning_stats"]["learnings"]}
        assert stats["zebrafish-lesson"]["applications"] == 1
        assert answers["track_learning_application"]["applications"] == 2  # with its own
        missing = served.error("get_subagent_status", {"agent_id": "old-agent"})
        assert "being built" in missing
        assert not catalog_built(store)

        # let go: the build finishes, and the same server then counts the whole log
        held.release()
        deadline = time.monotonic() + 300
        while "partial" in (stats := served.ok("get_learning_stats", {})):
            assert time.monotonic() < deadline, "the catalog was never built"
            time.sleep(0.2)
        assert catalog_built(store)
        counted = {e["id"]: e for e in stats["learnings"]}
        assert counted["zebrafish-lesson"]["applications"] == 3
        agents = [a["agent_id"] for a in served.ok("get_subagent_status", {})["subagents"]]
        assert "old-agent" in agents and "new-agent" in agents
