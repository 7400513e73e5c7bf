"""One `Lorebook` keeps its catalog connection open between reads, and every answer stays the
one a fresh `Lorebook` gives: appends and rebuilds by other processes are seen by the next call,
a deleted catalog is reopened, threads and a forked child get working answers, and no file
descriptor leaks."""

from __future__ import annotations

import gc
import json
import os
import sqlite3
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from conftest import clean_env, lore
from lorebook import Lorebook
from lorebook.log import catalog as catalog_module

T0 = datetime(2026, 2, 1, 9, 0, tzinfo=UTC)


def _history(store: Path) -> str:
    """A few sessions over several days; returns the id of one left open (the newest)."""
    book = Lorebook.open(store, env={})
    when = T0
    current = ""
    for n in range(6):
        when += timedelta(hours=9)
        current = book.start_session(agent="claude", project="consilio", now=when).id
        for k in range(3):
            book.log(
                "commit",
                session=current,
                outcome="success",
                epic=f"epic-{n}",
                now=when + timedelta(minutes=k + 1),
            )
        if n < 5:
            book.end_session(
                current, reason="error" if n == 2 else "normal", now=when + timedelta(minutes=9)
            )
    assert book.catalog.open(create=True) is not None  # built, as `lore catalog` would
    book.close()
    return current


def _kept(book: Lorebook) -> sqlite3.Connection | None:
    return book.catalog.catalog._idle


def _fresh(store: Path, now: datetime, **kwargs: Any) -> dict[str, Any]:
    with Lorebook.open(store, env={}) as other:
        return other.resume(now=now, **kwargs)


def _open_fds() -> int:
    gc.collect()  # a query iterator left unfinished closes its files when collected
    return len(os.listdir("/proc/self/fd"))


@pytest.fixture
def history(store: Path) -> tuple[Path, str]:
    return store, _history(store)


def test_the_connection_is_kept_and_an_append_by_another_process_is_seen(
    history: tuple[Path, str],
) -> None:
    store, open_session = history
    book = Lorebook.open(store, env={})
    now = T0 + timedelta(days=3)
    first = book.resume(now=now)
    assert first["session"]["id"] == open_session
    kept = _kept(book)
    assert kept is not None  # closed by the read, kept for the next one
    assert book.resume(now=now) == first == _fresh(store, now)
    assert _kept(book) is kept
    env = clean_env(store)
    done = lore(
        "log",
        "deploy",
        "--session",
        open_session,
        "--outcome",
        "failure",
        "--error",
        "boom",
        env=env,
    )
    assert done.code == 0, done.err
    later = datetime.now(UTC) + timedelta(minutes=1)
    second = book.resume(now=later)
    assert _kept(book) is kept  # the same connection saw the other process's append
    assert second["last_action"]["type"] == "deploy"
    assert second["last_action"]["outcome"] == "failure"
    assert second == _fresh(store, later)
    # the kept connection holds no write lock: another process syncs and rebuilds meanwhile
    assert lore("catalog", "--json", env=env).code == 0
    assert book.resume(now=later) == second
    book.close()
    assert _kept(book) is None


def test_a_catalog_rebuilt_or_deleted_by_another_process_is_followed(
    history: tuple[Path, str],
) -> None:
    store, _ = history
    env = clean_env(store)
    book = Lorebook.open(store, env={})
    now = T0 + timedelta(days=3)
    answer = book.resume(now=now)
    kept = _kept(book)
    rebuilt = lore("catalog", "--rebuild", "--json", env=env)  # in place: the same file
    assert rebuilt.code == 0, rebuilt.err
    assert json.loads(rebuilt.out)["sync"]["rebuilt"] is True
    assert book.resume(now=now) == answer
    assert _kept(book) is kept
    path = book.catalog.catalog.path
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    assert lore("catalog", "--json", env=env).code == 0  # a new file, built by another process
    assert book.resume(now=now) == answer == _fresh(store, now)
    assert _kept(book) is not kept  # the deleted file's connection was closed, the new one kept
    for suffix in ("", "-wal", "-shm"):  # deleted and not rebuilt: resume reads the shards
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    assert book.resume(now=now) == answer
    assert not path.exists()  # resume never builds a catalog
    book.close()


def test_threads_share_the_kept_connection_one_at_a_time(history: tuple[Path, str]) -> None:
    store, _ = history
    book = Lorebook.open(store, env={})
    now = T0 + timedelta(days=3)
    expected = _fresh(store, now)
    results: list[Any] = []

    def worker() -> None:
        for _ in range(8):
            try:
                results.append(book.resume(now=now))
                results.append(len(book.actions(epic="epic-3", limit=None)))
            except Exception as exc:  # pragma: no cover - reported by the assertion below
                results.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results.count(expected) == 24
    assert results.count(3) == 24
    assert len(results) == 48
    assert book.resume(now=now) == expected  # and the thread that opened the book still can
    book.close()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_forked_child_never_uses_the_parents_connection(history: tuple[Path, str]) -> None:
    store, _ = history
    book = Lorebook.open(store, env={})
    now = T0 + timedelta(days=3)
    expected = book.resume(now=now)
    parents = _kept(book)
    assert parents is not None
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: answer, and say whether the parent's connection was used
        code = 1
        try:
            os.close(read)
            answer = book.resume(now=now)
            out = {
                "answer": answer,
                "reused": _kept(book) is parents,
                "orphaned": any(c is parents for c in catalog_module._ORPHANS),
            }
            with os.fdopen(write, "w") as pipe:
                json.dump(out, pipe)
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read) as pipe:
        child = json.load(pipe)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert child["answer"] == json.loads(json.dumps(expected))
    assert child["reused"] is False
    assert child["orphaned"] is True
    assert book.resume(now=now) == expected  # the parent's connection still works
    assert _kept(book) is parents
    book.close()


def test_no_file_descriptor_leaks_over_many_calls(history: tuple[Path, str]) -> None:
    store, _ = history
    now = T0 + timedelta(days=3)
    expected = _fresh(store, now)
    before = _open_fds()
    book = Lorebook.open(store, env={})
    assert book.resume(now=now) == expected
    assert len(book.actions(limit=5)) == 5
    kept = _open_fds()
    assert kept <= before + 3  # the database, its WAL and its shared memory
    for n in range(40):
        assert book.resume(now=now) == expected
        book.actions(epic=f"epic-{n % 6}", limit=None)
        book.sessions(limit=3)
    assert _open_fds() == kept
    book.close()
    assert _open_fds() == before
    with Lorebook.open(store, env={}) as other:  # the context manager closes it too
        assert other.resume(now=now) == expected
    assert _open_fds() == before


def test_an_unfinished_read_does_not_block_the_next(history: tuple[Path, str]) -> None:
    """A query iterator still open holds the kept connection: the next read opens its own."""
    store, _ = history
    book = Lorebook.open(store, env={})
    now = T0 + timedelta(days=3)
    expected = _fresh(store, now)
    pending = book.iter_actions()
    first = next(pending)
    assert book.resume(now=now) == expected
    rest = list(pending)
    assert len(rest) + 1 == len(book.actions(limit=None))
    assert first["kind"] == "action"
    assert book.resume(now=now) == expected
    book.close()


def test_a_line_edited_to_hold_a_secret_between_two_calls_is_redacted(
    history: tuple[Path, str],
) -> None:
    """Lines found clean are remembered by their bytes: an edited line is redacted again."""
    store, open_session = history
    book = Lorebook.open(store, env={})
    now = T0 + timedelta(days=3)
    before = book.resume(now=now)
    assert before["last_action"]["error"] is None
    shard = next((store / "actionlog").rglob(f"{open_session}.jsonl"))
    lines = shard.read_bytes().splitlines(keepends=True)
    record = json.loads(lines[-1])
    token = "ghp_" + "x7Kq2Lm9Pw4Rt8Yv1Bn6Cz3Df5Gh0Jk2Ls4Q"
    record["error"] = f"push failed with {token}"
    lines[-1] = (json.dumps(record) + "\n").encode()
    shard.write_bytes(b"".join(lines))
    after = book.resume(now=now)
    assert token not in json.dumps(after)
    assert "push failed with" in after["last_action"]["error"]
    assert after == _fresh(store, now)
    book.close()


def test_what_a_sync_remembers_is_dropped_when_another_process_writes_the_catalog(
    history: tuple[Path, str],
) -> None:
    """Each kept connection remembers its directories' shard rows; a rebuild by another
    process renumbers them, and the next sync must not append to the old numbers."""
    store, open_session = history
    env = clean_env(store)
    assert lore("log", "deploy", "--session", open_session, env=env).code == 0
    shard = next(
        p
        for p in (store / "actionlog").rglob(f"{open_session}.jsonl")
        if p.stat().st_mtime > (T0 + timedelta(days=30)).timestamp()
    )
    day_dir = shard.parent
    old = day_dir.stat().st_mtime - 60  # not "just changed": its listing may be remembered
    os.utime(day_dir, (old, old))
    book = Lorebook.open(store, env={})
    later = datetime.now(UTC) + timedelta(minutes=1)
    book.resume(now=later)
    book.resume(now=later)
    kept = _kept(book)
    assert kept is not None
    key = "d/" + "-".join(day_dir.parts[-3:])
    assert key in kept.sync_memo.dirs  # type: ignore[attr-defined]
    assert lore("log", "commit", "--session", open_session, env=env).code == 0  # same file
    assert book.resume(now=later)["last_action"]["type"] == "commit"
    book.resume(now=later)  # nothing changed since: the listing is remembered again
    assert key in kept.sync_memo.dirs  # type: ignore[attr-defined]
    oldest = sorted((store / "actionlog").rglob("*.jsonl"))[0]
    oldest.unlink()  # one shard fewer: a rebuild numbers the newer ones differently
    assert lore("catalog", "--rebuild", "--json", env=env).code == 0
    assert (
        lore("log", "validate", "--session", open_session, "--outcome", "failure", env=env).code
        == 0
    )
    answer = book.resume(now=later)
    assert answer["last_action"]["type"] == "validate"
    assert answer == _fresh(store, later)
    problems: list[Any] = []
    mine = book.actions(limit=None, on_problem=problems.append)
    with Lorebook.open(store, env={}) as other:
        assert mine == other.actions(limit=None)
    assert problems == []
    assert [a["type"] for a in mine[:3]] == ["validate", "commit", "deploy"]
    book.close()


def test_a_full_check_on_the_same_book_forgets_what_its_syncs_remembered(
    history: tuple[Path, str],
) -> None:
    """`sync_catalog` re-reads a shard edited in place under a new row: the next quick sync
    must not work from the row it remembered."""
    store, open_session = history
    env = clean_env(store)
    with Lorebook.open(store, env={}) as first:
        ended = next(s.id for s in first.sessions() if s.id != open_session)
    for session in (ended, open_session):  # two shards today: the edited one is not the last
        assert lore("log", "deploy", "--session", session, env=env).code == 0
    shard = max((store / "actionlog").rglob(f"{ended}.jsonl"))
    old = shard.parent.stat().st_mtime - 60
    os.utime(shard.parent, (old, old))
    book = Lorebook.open(store, env={})
    later = datetime.now(UTC) + timedelta(minutes=1)
    book.resume(now=later)
    book.resume(now=later)
    kept = _kept(book)
    assert kept is not None and kept.sync_memo.dirs  # type: ignore[attr-defined]
    lines = shard.read_bytes().splitlines(keepends=True)
    record = json.loads(lines[-1])
    record["error"] = "edited by hand, longer than before"
    shard.write_bytes(b"".join([*lines[:-1], (json.dumps(record) + "\n").encode()]))
    assert book.sync_catalog()["sync"]["shards_reindexed"] == 1
    assert lore("log", "commit", "--session", ended, env=env).code == 0
    answer = book.resume(now=later)
    assert answer == _fresh(store, later)
    with Lorebook.open(store, env={}) as other:
        assert book.actions(limit=None) == other.actions(limit=None)
    assert book.actions(limit=1)[0]["type"] == "commit"
    book.close()
