"""A rebuild of the search index is built beside the live one and swapped in whole: a killed
`lore index --rebuild` leaves the old index serving searches, and its leftovers are cleaned."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from conftest import LORE, clean_env, cli_run, lore
from search_fixtures import age_learnings, write_learning


def _many_learnings(root: Path, count: int) -> None:
    """Enough learnings that a rebuild embeds for a while (a kill lands mid-build)."""
    topics = ["deploy", "database", "auth", "cache", "queue", "build", "network", "storage"]
    for i in range(count):
        topic = topics[i % len(topics)]
        write_learning(
            root,
            f"lesson-{i:04d}",
            title=f"{topic.title()} lesson {i}: retry with backoff",
            category=topic,
            severity="low",
            created="2026-05-01",
            body=f"## Problem\nThe {topic} step {i} failed under load with a timeout.\n\n"
            f"## Key Takeaway\nBound the {topic} retries ({i}) and log every attempt.",
        )


def test_a_killed_rebuild_leaves_the_old_index_serving(search_store: Path, embedder: Any) -> None:
    _many_learnings(search_store, 400)
    age_learnings(search_store)  # the search after the kill must have nothing to re-hash
    env = clean_env(search_store)
    built = lore("index", env=env, timeout=600)
    assert built.code == 0, built.err
    cache = search_store / ".lore" / "cache"
    live = cache / "index"
    manifest = (live / "manifest.json").read_bytes()
    beside = cache / "index.building"

    proc = subprocess.Popen(
        [*LORE, "index", "--rebuild"],
        cwd=search_store,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 300
        # mid-build: the new index has appeared beside the live one (or, as a rebuild in
        # place did, the live vectors are gone)
        while not (beside.is_dir() or not (live / "chroma").is_dir()):
            assert proc.poll() is None, "the rebuild finished before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.01)
        time.sleep(0.3)  # into the embedding
        assert proc.poll() is None, "the rebuild finished before it could be killed"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    assert (live / "manifest.json").read_bytes() == manifest

    done = lore("search", "row level security anon insert", "--json", env=env, timeout=600)
    assert done.code == 0, done.err
    data = json.loads(done.out)
    assert data["results"][0]["id"] == "rls-anon-insert"
    assert (data["mode"], data["degraded"], data["warnings"]) == ("hybrid", None, [])
    assert (live / "manifest.json").read_bytes() == manifest  # nothing was rebuilt
    assert not beside.exists() and not (cache / "index.trash").exists()


def test_a_crash_between_the_two_renames_recovers_the_new_index(search_store: Path) -> None:
    """The live index was moved aside and the complete new one not yet moved in."""
    age_learnings(search_store)
    assert cli_run(["--root", str(search_store), "index"]).code == 0
    cache = search_store / ".lore" / "cache"
    (cache / "index").rename(cache / "index.trash")
    assert cli_run(["--root", str(search_store), "index", "--rebuild"]).code == 0
    complete = (cache / "index" / "manifest.json").read_bytes()
    (cache / "index").rename(cache / "index.building")  # built, then the crash
    (cache / "index.old").mkdir()
    (cache / "index.old").rename(cache / "index.trash")  # the live one, moved aside

    done = cli_run(["--root", str(search_store), "search", "deploy port", "--json"])
    assert done.code == 0, done.err
    data = json.loads(done.out)
    assert data["results"][0]["id"] == "deploy-port-conflict"
    assert (data["degraded"], data["warnings"]) == (None, [])
    assert (cache / "index" / "manifest.json").read_bytes() == complete
    assert not (cache / "index.building").exists() and not (cache / "index.trash").exists()


def test_a_long_lived_process_writes_into_the_index_swapped_in_under_it(
    search_store: Path,
) -> None:
    """Chroma caches one client system per path and process: after another process swapped a
    rebuilt index in, this one's next update must reach the new folder, not the deleted one."""
    from lorebook import Lorebook

    book = Lorebook.open(search_store, env={})
    assert book.index.update().added  # the client is open on the first index
    rebuilt = lore("index", "--rebuild", env=clean_env(search_store), timeout=600)
    assert rebuilt.code == 0, rebuilt.err
    write_learning(
        search_store,
        "zebracorn-outage",
        title="Zebracorn outage in payments",
        body="## Key Takeaway\nPage the payments on-call for zebracorn alerts.",
    )
    assert book.index.update().added == ["learnings/zebracorn-outage.md"]
    book.close()
    done = lore(
        "search",
        "zebracorn payments outage",
        "--mode",
        "semantic",
        "--json",
        env=clean_env(search_store),
        timeout=600,
    )
    data = json.loads(done.out)
    assert (data["degraded"], data["warnings"]) == (None, []), data
    assert data["results"][0]["id"] == "zebracorn-outage"
