"""Hardening: resume on damaged and huge shards, filtered reports, search on a read-only store
and while the cache is deleted under a running watcher."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from conftest import (
    LORE,
    assert_one_error_line,
    clean_env,
    git,
    lore,
    read_only_mount,
)
from lorebook import Lorebook, LoreError
from lorebook.log.reader import MAX_LINE_BYTES
from search_fixtures import open_book, write_learning

T0 = datetime(2026, 3, 4, 12, 0, tzinfo=UTC)


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def commit_all(root: Path, message: str = "work") -> None:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)


def only_shard(root: Path, session: str) -> Path:
    (shard,) = (root / "actionlog").rglob(f"{session}.jsonl")
    return shard


# -- resume: a bad last line (14) --------------------------------------------------------------
def test_resume_skips_an_oversize_last_line_with_a_warning(store: Path) -> None:
    book = Lorebook.open(store, env={})
    session = book.start_session(session_id="s-big-tail", agent="PS", project="p", now=at(0))
    session.log("plan", outcome="success", now=at(1))
    session.log("commit", outcome="success", now=at(2))
    shard = only_shard(store, "s-big-tail")
    with open(shard, "ab") as handle:
        handle.write(b'{"v":1,"junk":"' + b"x" * (MAX_LINE_BYTES + 10) + b'"}\n')

    listed = lore("sessions", "--json", env=clean_env(store))
    assert listed.code == 0, listed.err
    assert [s["id"] for s in listed.json()] == ["s-big-tail"]  # type: ignore[union-attr]

    result = lore("resume", "--json", env=clean_env(store))
    assert result.code == 0, result.err
    state = result.json()
    assert isinstance(state, dict)
    assert state["session"]["id"] == "s-big-tail"
    assert state["last_action"]["type"] == "commit"
    rel = shard.relative_to(store)
    warnings = result.err.strip().splitlines()
    assert warnings == [
        f"lore: warning: skipped {rel}:4: line longer than {MAX_LINE_BYTES} bytes, skipped"
    ]


def test_resume_skips_a_torn_last_line_of_the_only_session(store: Path) -> None:
    book = Lorebook.open(store, env={})
    session = book.start_session(session_id="s-torn", now=at(0))
    session.log("plan", outcome="success", now=at(1))
    shard = only_shard(store, "s-torn")
    with open(shard, "ab") as handle:
        handle.write(b'{"v":1,"kind":"act')
    result = lore("resume", "--json", env=clean_env(store))
    assert result.code == 0, result.err
    assert result.json()["last_action"]["type"] == "plan"  # type: ignore[index]
    assert f"{shard.relative_to(store)}:3: torn line at end of file" in result.err


# -- resume: a huge shard in bounded memory (18) -----------------------------------------------
def _ulid(n: int) -> str:
    alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
    digits = []
    for _ in range(16):
        n, r = divmod(n, 32)
        digits.append(alphabet[r])
    return "01JNK0000A" + "".join(reversed(digits))


def _huge_lines(template: dict[str, Any], count: int) -> bytes:
    """`count` distinct successful actions cloned from `template`, as shard bytes."""
    head, sep, rest = json.dumps(dict(template, id="@ID@"), separators=(",", ":")).partition("@ID@")
    assert sep
    pre, post = head.encode(), rest.encode() + b"\n"
    return b"".join(pre + _ulid(i).encode() + post for i in range(count))


def _resume_store(root: Path) -> Path:
    """A committed store with one session: a start, an old action, then a telling tail."""
    git(root.parent, "init", "-q", "-b", "main", str(root))
    Lorebook.init(root, env={})
    book = Lorebook.open(root, env={})
    s = book.start_session(session_id="s-huge", agent="PS", project="p", now=at(0))
    s.log("tool_call", outcome="success", now=at(1), context={"tool_name": "grep"})
    s.log("spawn", outcome="in_progress", now=at(2), context={"agent_id": "impl-1"})
    s.log("validate", outcome="failure", now=at(3), epic="e-9", context={"failures": ["test_a"]})
    for minute in range(4, 30):
        s.log("edit", outcome="success", now=at(minute), context={"task": f"step {minute}"})
    commit_all(root)
    return root


def _inflate(root: Path, filler_bytes: int) -> None:
    """Insert `filler_bytes` of old successful actions right after the session's start event."""
    shard = only_shard(root, "s-huge")
    start, old, *rest = shard.read_bytes().splitlines(keepends=True)
    per_line = len(_huge_lines(json.loads(old), 1))
    with open(shard, "wb") as handle:
        handle.write(start)
        handle.write(_huge_lines(json.loads(old), filler_bytes // per_line))
        handle.write(old + b"".join(rest))


def _peak_resume(root: Path) -> tuple[dict[str, Any], float, float]:
    """`lore resume --json` in a fresh helper process: (state, seconds, child peak RSS in MB)."""
    helper = (
        "import resource, subprocess, sys, time\n"
        "t = time.perf_counter()\n"
        "done = subprocess.run(sys.argv[1:], capture_output=True)\n"
        "took = time.perf_counter() - t\n"
        "sys.stderr.buffer.write(done.stderr)\n"
        "sys.stdout.buffer.write(done.stdout)\n"
        "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024\n"
        "print(f'\\n@@{took} {peak}')\n"
        "sys.exit(done.returncode)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", helper, *LORE, "resume", "--json"],
        env=clean_env(root),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    out, _, figures = done.stdout.rpartition("\n@@")
    took, peak = (float(x) for x in figures.split())
    return json.loads(out), took, peak


def _comparable(state: dict[str, Any]) -> dict[str, Any]:
    state = dict(state, session=dict(state["session"]))
    for key in ("git", "history"):
        state.pop(key)
    state["session"].pop("action_count")
    return state


def test_resume_on_a_huge_shard_reads_the_tail_in_bounded_memory(tmp_path: Path) -> None:
    small = _resume_store(tmp_path / "small")
    huge = tmp_path / "huge"
    shutil.copytree(small, huge, symlinks=True)
    _inflate(huge, 220 << 20)
    assert only_shard(huge, "s-huge").stat().st_size > 200 << 20

    big_state, took, peak = _peak_resume(huge)
    small_state, _, small_peak = _peak_resume(small)
    print(
        f"resume on a 220 MB shard: {took:.2f} s, peak RSS {peak:.0f} MB "
        f"(small shard: {small_peak:.0f} MB)"
    )
    assert peak < 150, peak
    assert _comparable(big_state) == _comparable(small_state)
    assert big_state["session"]["started"] == small_state["session"]["started"]  # head read
    assert big_state["history"]["skipped_bytes"] > 200 << 20
    assert small_state["history"] is None
    assert [a["type"] for a in big_state["open_actions"]] == ["spawn"]
    assert [a["epic"] for a in big_state["failed_validations"]] == ["e-9"]


# -- filtered report files never replace the team's report (15) --------------------------------
def _two_projects(store: Path) -> None:
    book = Lorebook.open(store, env={})
    for project, count in (("alpha", 3), ("beta/β", 2)):
        s = book.start_session(
            session_id=f"s-{len(project)}", project=project, agent="PS", now=at(0)
        )
        for i in range(count):
            s.log("edit", outcome="success", now=at(1 + i))


def test_filtered_daily_report_gets_its_own_file(store: Path) -> None:
    _two_projects(store)
    env = clean_env(store)
    team = lore("report", "daily", "--date", "2026-03-04", env=env)
    assert team.code == 0, team.err
    assert team.out.strip() == "wrote docs/reports/daily/2026-03-04.md (5 actions)"
    daily = store / "docs" / "reports" / "daily"
    before = (daily / "2026-03-04.md").read_bytes()

    for project, name, count in (
        ("alpha", "2026-03-04--project-alpha.md", 3),
        ("gamma", "2026-03-04--project-gamma.md", 0),
    ):
        only = lore("report", "daily", "--date", "2026-03-04", "--project", project, env=env)
        assert only.code == 0, only.err
        assert only.out.strip() == f"wrote docs/reports/daily/{name} ({count} actions)"
        heading = (daily / name).read_text().splitlines()[0]
        assert heading == f"# Agent activity report: 2026-03-04 (only project {project})"
    assert (daily / "2026-03-04.md").read_bytes() == before

    odd = lore(
        "report",
        "daily",
        "--date",
        "2026-03-04",
        "--project",
        "beta/β",
        "--agent",
        "PS",
        "--json",
        env=env,
    )
    assert odd.code == 0, odd.err
    info = odd.json()
    assert isinstance(info, dict)
    assert info["total_actions"] == 2
    name = Path(info["path"]).name
    assert name.startswith("2026-03-04--project-beta-") and name.endswith("--agent-PS.md")
    assert "/" not in name[len("2026-03-04") :] and (daily / name).is_file()
    assert (daily / "2026-03-04.md").read_bytes() == before


def test_filtered_weekly_report_with_a_secret_filter(store: Path) -> None:
    _two_projects(store)
    env = clean_env(store)
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    assert lore("report", "weekly", "--week", "2026-W10", env=env).code == 0
    weekly = store / "docs" / "reports" / "weekly"
    before = (weekly / "2026-W10.md").read_bytes()
    result = lore("report", "weekly", "--week", "2026-W10", "--project", secret, env=env)
    assert result.code == 0, result.err
    assert secret not in result.out + result.err
    assert (weekly / "2026-W10.md").read_bytes() == before
    (written,) = [p for p in weekly.iterdir() if p.name != "2026-W10.md"]
    assert written.name.startswith("2026-W10--project-")
    assert secret not in written.name and secret not in written.read_text()
    assert secret[:12] not in written.name


# -- a read-only store: reads work, writes fail with one line (11) -----------------------------
def test_search_on_a_read_only_store_in_process(search_store: Path) -> None:
    book = open_book(search_store)
    book.index.update()
    write_learning(search_store, "new-one", title="A lesson the index has not seen yet")
    with read_only_mount(search_store) as ro:
        index = open_book(ro).index
        for refresh in (False, True):
            hits = index.search("deploy port conflict", refresh=refresh)
            assert hits and hits[0].id == "deploy-port-conflict", refresh
            assert hits.degraded is not None and hits.degraded.startswith("keyword-only: ")
        assert len(index.warnings) == 2, index.warnings  # one per cause, each said once
        assert all("searched by keywords only" in w for w in index.warnings)
        with pytest.raises(LoreError, match="cannot write the search index"):
            index.update()


def test_commands_on_a_read_only_store(search_store: Path) -> None:
    (search_store / ".lore" / "config.yaml").write_text("embedding:\n  enabled: false\n")
    write_learning(
        search_store,
        "2026-03-01-a-draft-bcdfghj",
        folder="learnings/drafts",
        title="A draft to promote",
        status="draft",
        created="2026-03-01",
        category="build",
        severity="low",
        body="## Key Takeaway\nx",
    )
    for path in (search_store / "learnings").rglob("*.md"):  # not just written: stat is trusted
        os.utime(path, (time.time() - 60, time.time() - 60))
    assert lore("index", env=clean_env(search_store)).code == 0
    commit_all(search_store)
    with read_only_mount(search_store) as ro:
        env = clean_env(ro)
        found = lore("search", "deploy port conflict", "--json", env=env)
        assert found.code == 0, found.err
        data = found.json()
        assert isinstance(data, dict)
        assert data["results"][0]["id"] == "deploy-port-conflict"
        # the index is fresh: nothing to write, so the read-only mount changes nothing
        assert data["degraded"] is None and found.err == "", found.err

        stale = lore("search", "deploy port conflict", "--no-refresh", "--json", env=env)
        assert stale.code == 0 and stale.err == "", stale.err

        brief = lore(
            "preflight", "deploy the api service", "--json", env={**env, "LORE_SESSION": "ro-1"}
        )
        assert brief.code == 0, brief.err
        assert "Traceback" not in brief.err
        assert any("not logged" in w for w in brief.json()["warnings"])  # type: ignore[index]

        assert_one_error_line(
            lore("index", env=env), "cannot write the search index", "Read-only file system"
        )
        assert_one_error_line(
            lore("promote", "2026-03-01-a-draft-bcdfghj", env=env), "Read-only file system"
        )
        assert_one_error_line(lore("log", "plan", env=env), "Read-only file system")


# -- search while the cache is deleted under a running watcher (17) ----------------------------
_DELETER = """
import pathlib, shutil, sys, time
root, seconds = pathlib.Path(sys.argv[1]), float(sys.argv[2])
learning = root / "learnings" / "k8s-liveness.md"
end, rounds = time.monotonic() + seconds, 0
while time.monotonic() < end:
    time.sleep(1.0)
    shutil.rmtree(root / ".lore" / "cache", ignore_errors=True)
    with open(learning, "a") as handle:  # a change: the watcher rebuilds the deleted index
        handle.write("\\n")
    rounds += 1
print(rounds)
"""


def test_searches_never_fail_or_come_back_empty_while_the_cache_churns(
    search_store: Path,
) -> None:
    book = open_book(search_store)
    book.index.update()
    watch = subprocess.Popen(
        [*LORE, "watch", "--debounce", "0.3"],
        env=clean_env(search_store),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert watch.stdout is not None
        for line in watch.stdout:  # the catch-up pass is done
            if line.startswith("Watching "):
                break
        deleter = subprocess.Popen(
            [sys.executable, "-c", _DELETER, str(search_store), "20"],
            stdout=subprocess.PIPE,
            text=True,
        )
        searches, empty, degraded = 0, 0, 0
        failures: list[str] = []
        index = book.index
        while deleter.poll() is None:
            try:
                # every other one refreshes first (the API's default), the others do not
                hits = index.search("deploy port conflict", refresh=searches % 2 == 1)
            except Exception as exc:  # the defect: Chroma's InternalError escaped search()
                failures.append(f"{type(exc).__name__}: {exc}")
                continue
            finally:
                searches += 1
            if not hits:
                empty += 1
            elif hits.degraded:
                degraded += 1
            assert not hits or hits[0].id == "deploy-port-conflict", [h.id for h in hits]
        rounds = int(deleter.communicate()[0])
        print(
            f"{searches} searches over {rounds} deletions: {len(failures)} failed, "
            f"{empty} empty, {degraded} degraded"
        )
        assert rounds >= 10 and searches > rounds
        assert failures == [] and empty == 0
        assert len(index.warnings) == len(set(index.warnings))
    finally:
        watch.terminate()
        watch.wait(timeout=60)


def test_a_rust_panic_in_chroma_is_an_index_failure_not_a_crash() -> None:
    """Chroma's Rust core raises pyo3's PanicException (a BaseException) when its files vanish
    mid-call (seen under the churn above: "no such table: migrations"); search falls back to
    keywords on ChromaUnavailable, so the panic must arrive as one — and Ctrl-C must not."""
    from lorebook.index.chroma_store import ChromaUnavailable, _panics_as_errors

    class PanicException(BaseException):  # what pyo3_runtime raises
        pass

    with pytest.raises(ChromaUnavailable, match="no such table"), _panics_as_errors("/x/index"):
        raise PanicException('Expect it to be fetched: "no such table: migrations"')
    with pytest.raises(KeyboardInterrupt), _panics_as_errors("/x/index"):
        raise KeyboardInterrupt
    with pytest.raises(ValueError), _panics_as_errors("/x/index"):
        raise ValueError("an ordinary error keeps its own handling")


def test_a_client_close_that_never_returns_is_left_behind() -> None:
    """Chroma's Rust `stop` was seen spinning for good while the store's files were deleted
    under it (a search's refresh hung the whole process there): closing a client is cleanup,
    waited for only so long."""
    import threading
    import time

    from lorebook.index.chroma_store import _close_within

    released = threading.Event()

    class Stuck:
        def close(self) -> None:
            released.wait()  # as Rust's stop did

    started = time.monotonic()
    _close_within(Stuck(), 0.2)
    assert time.monotonic() - started < 5
    released.set()
