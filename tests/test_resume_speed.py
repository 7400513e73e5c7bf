"""`lore resume` at database speed: a catalog sync limited to the days the candidate sessions span
and a cached git state give the answers of the reference paths (a sync of every day, the shards'
tails, git asked every time), whatever changed in between."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from conftest import clean_env, git, lore
from lorebook import Lorebook
from lorebook.git import binary, statecache
from lorebook.git.binary import git_state, start_git_state
from lorebook.log import resume_state
from lorebook.log.catalog import day_names

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
PROJECTS = ("consilio", "lorebook")
AGENTS = ("claude", "codex")
RACY = 0.06  # seconds: the racy window the git-state tests use (the default is 2 s)


# -- the catalog sync limited to the candidates' days ----------------------------------------
def _sessions(book: Lorebook, start: datetime, count: int, seed: int) -> datetime:
    """`count` sessions, a few hours apart over many days, in all states resume tells apart."""
    when = start
    for n in range(count):
        when += timedelta(hours=7 + (n * seed) % 11)
        current = book.start_session(agent=AGENTS[n % 2], project=PROJECTS[(n // 2) % 2], now=when)
        for i in range((n + seed) % 4):
            when += timedelta(minutes=9)
            book.log(
                "validate" if i % 2 else "commit",
                session=current.id,
                now=when,
                outcome=("success", "failure", "in_progress")[(n + i) % 3],
                epic="epic-3",
            )
        if n % 3 == 0:
            book.end_session(
                current.id, reason="normal" if n % 2 else "error", now=when + timedelta(minutes=1)
            )
    return when


def _answers(root: Path, now: datetime) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for project in (None, *PROJECTS, "nowhere"):
        for agent in (None, *AGENTS):
            try:
                out[f"{project}/{agent}"] = Lorebook.open(root, env={}).resume(
                    project=project, agent=agent, now=now
                )
            except Exception as exc:
                out[f"{project}/{agent}"] = f"{type(exc).__name__}: {exc}"
    return out


def _reference(root: Path, now: datetime) -> dict[str, Any]:
    """The answers without a catalog: the tails of the newest shards."""
    catalog = root / ".lore" / "cache" / "catalog.sqlite"
    saved = root.parent / "catalog.saved"  # outside the repository: git shows the same
    for suffix in ("", "-wal", "-shm"):
        if Path(f"{catalog}{suffix}").exists():
            shutil.move(f"{catalog}{suffix}", f"{saved}{suffix}")
    try:
        return _answers(root, now)
    finally:
        for suffix in ("", "-wal", "-shm"):
            if Path(f"{saved}{suffix}").exists():
                shutil.move(f"{saved}{suffix}", f"{catalog}{suffix}")


def _no_tails(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("the shards' tails were read although the catalog is fresh")


def _changes(root: Path, book: Lorebook, last: datetime) -> list[Callable[[], datetime]]:
    """What happens to a log between two resumes, each returning the `now` to resume at."""
    log = root / "actionlog"

    def append_new() -> datetime:
        return _sessions(book, last, 3, seed=5)

    def shard_in_an_old_day() -> datetime:  # as a merge brings a teammate's old session
        day = sorted(day_names(str(log)))[2]
        other = Lorebook.open(root, env={})
        when = datetime.fromisoformat(f"{day}T23:00:00+00:00")
        current = other.start_session(agent="claude", project="consilio", now=when)
        other.log("deploy", session=current.id, outcome="in_progress", now=when)
        return last + timedelta(days=2)

    def remove_recent_days() -> datetime:  # a checkout of an older state: sessions vanish
        for day in sorted(day_names(str(log)))[-3:]:
            shutil.rmtree(log / day[:4] / day[5:7] / day[8:10])
        return last + timedelta(days=2)

    def remove_almost_everything() -> datetime:  # fewer sessions than resume looks back at
        for day in sorted(day_names(str(log)))[:-1]:
            shutil.rmtree(log / day[:4] / day[5:7] / day[8:10])
        return last + timedelta(days=2)

    return [append_new, shard_in_an_old_day, remove_recent_days, remove_almost_everything]


@pytest.mark.parametrize("seed", [1, 2])
def test_a_sync_of_the_candidates_days_answers_as_the_shards_do(
    store: Path, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    (store / ".lore" / "config.yaml").write_text("resume:\n  lookback_sessions: 6\n")
    book = Lorebook.open(store, env={})
    last = _sessions(book, T0, 40, seed)
    assert book.catalog.open(create=True) is not None
    first = last + timedelta(hours=1)
    for change in [lambda: first, *_changes(store, book, last)]:
        now = change()
        expected = _reference(store, now)
        with monkeypatch.context() as patch:
            patch.setattr(resume_state, "find_candidates", _no_tails)
            assert _answers(store, now) == expected, change


def test_resume_syncs_only_the_days_its_sessions_span(store: Path) -> None:
    (store / ".lore" / "config.yaml").write_text("resume:\n  lookback_sessions: 4\n")
    book = Lorebook.open(store, env={})
    _sessions(book, T0, 60, 3)
    assert book.catalog.open(create=True) is not None
    days = len(list(day_names(str(store / "actionlog"))))
    # a day directory changed long before the candidates' days waits for a later sync
    old = sorted((store / "actionlog").rglob("*.jsonl"))[0]
    (old.parent / "stray.jsonl").write_text("")
    view = Lorebook.open(store, env={}).catalog
    assert view.last_sessions(project=None, agent=None, limit=4) is not None
    assert view.last_sync is not None
    assert view.last_sync.shards_checked < 12, view.last_sync  # not every shard of `days`
    assert days > 15
    assert view.sync()["sync"]["shards_checked"] > 60  # a full sync still finds it


# -- the cached git state --------------------------------------------------------------------
def _cached(root: Path) -> dict[str, Any] | None:
    return start_git_state(root, exclude=("actionlog",), cache=_cache_file(root))()


def _cache_file(root: Path) -> Path:
    return root / ".lore" / "cache" / "git-state.json"


def _settle() -> None:
    time.sleep(RACY * 1.5)  # past the racy window: the answer may be kept


@pytest.fixture
def racy(monkeypatch: pytest.MonkeyPatch) -> None:
    window = int(RACY * 1e9)  # a shorter racy window than store.RACY_NS, for the git state only
    monkeypatch.setattr(statecache, "settled", lambda changed, seen: seen - changed >= window)


def _git_is_not_run(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("git was run although nothing changed")

    monkeypatch.setattr(binary, "_spawn", refuse)


def _edits(root: Path) -> list[Callable[[], None]]:
    """Changes git sees (or must not see), each made right after a cached answer."""

    def write(rel: str, text: str) -> Callable[[], None]:
        def edit() -> None:
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)

        return edit

    def run(*args: str) -> Callable[[], None]:
        return lambda: (git(root, *args), None)[1]

    def chmod() -> None:
        os.chmod(root / "src" / "a.py", 0o755)

    def log_append() -> None:  # the log is left out: the answer stays the same
        Lorebook.open(root, env={}).log("commit", now=T0)

    def remove(rel: str) -> Callable[[], None]:
        return lambda: (root / rel).unlink()

    return [
        write("src/a.py", "x = 2\n"),  # tracked, same size
        write("notes.txt", "new\n"),  # untracked
        write("deep/er/still/file.txt", "x\n"),  # a new untracked tree
        write("deep/er/more.txt", "x\n"),  # inside an untracked directory
        write("build/out.o", "x\n"),  # ignored
        write(".gitignore", "build/\n*.tmp\nnotes.txt\n"),  # the ignore rules change
        write("build/out.o", "y\n"),
        write("cache.tmp", "x\n"),
        run("add", "src/a.py"),  # staged
        run("commit", "-q", "-m", "edit"),  # HEAD moves
        run("checkout", "-q", "-b", "topic"),  # another branch
        run("branch", "-q", "--set-upstream-to", "main"),  # an upstream to count against
        run("checkout", "-q", "main"),
        write("src/b.py", "y = 1\n"),
        run("add", "-A"),
        run("commit", "-q", "-m", "b"),
        run("checkout", "-q", "topic"),  # behind its upstream now
        chmod,
        remove("src/a.py"),
        log_append,
        write(".lore/cache/other.json", "{}"),  # the cache folder is ignored
        run("checkout", "-q", "--detach"),
        run("config", "status.showUntrackedFiles", "no"),
        write("other.txt", "x\n"),
        run("config", "core.excludesFile", str(root.parent / "my-ignore")),
        write("../my-ignore", "other.txt\n"),  # a file the config names, outside the repository
        write("../my-ignore", "other.tx?\nsrc/\n"),
    ]


def _kept(root: Path) -> dict[str, Any]:
    """The answer once it is cached (git refreshes its index for a second or so after files
    change: until then nothing is kept), read as the cache gives it, without git."""
    deadline = time.monotonic() + 5
    key = statecache.key_for(root, ("actionlog",), 50)
    assert key is not None
    while (kept := statecache.load(_cache_file(root), key)) is None:
        assert time.monotonic() < deadline, "the git state was never kept"
        _cached(root)
        _settle()
    return kept


def test_cached_git_state_is_what_git_says_after_every_change(
    store: Path, racy: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    (store / "src").mkdir()
    (store / "src" / "a.py").write_text("x = 1\n")
    (store / ".gitignore").write_text("build/\n*.tmp\n")
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", "src")
    for edit in _edits(store):
        kept = _kept(store)
        with monkeypatch.context() as patch:
            _git_is_not_run(patch)
            assert _cached(store) == kept  # reused: git is not asked
        assert kept == git_state(store, exclude=("actionlog",))
        edit()  # right after: within the racy window too
        fresh = git_state(store, exclude=("actionlog",))
        assert _cached(store) == fresh, edit
        if edit.__name__ == "log_append":
            assert fresh == kept


def test_an_answer_given_while_files_change_is_not_kept(store: Path, racy: None) -> None:
    """An entry changed within the racy window of git's start may change again in the same
    clock tick without a new identity: that answer is never reused."""
    (store / "a.txt").write_text("one\n")
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", "a")
    (store / "a.txt").write_text("two\n")  # just now
    assert _cached(store) == git_state(store, exclude=("actionlog",))
    assert not _cache_file(store).exists()
    assert _kept(store) == git_state(store, exclude=("actionlog",))  # once it settled


def test_a_damaged_or_foreign_cache_file_is_ignored(store: Path, racy: None) -> None:
    _settle()
    expected = git_state(store, exclude=("actionlog",))
    for text in (
        "not json",
        "[]",
        '{"version": 1}',
        json.dumps(
            {"version": 1, "key": {}, "state": {"branch": "wrong"}, "paths": [], "identities": []}
        ),
    ):
        _cache_file(store).write_text(text)
        assert _cached(store) == expected


def test_git_state_is_not_cached_for_a_nested_repository(store: Path, racy: None) -> None:
    nested = store / "vendor" / "lib"
    nested.mkdir(parents=True)
    git(nested, "init", "-q")
    _settle()
    assert _cached(store) == git_state(store, exclude=("actionlog",))
    assert not _cache_file(store).exists()


def test_cli_resume_reuses_the_git_state_and_answers_the_same(store: Path) -> None:
    book = Lorebook.open(store, env={})
    _sessions(book, T0, 3, 1)
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", "log")
    time.sleep(2.1)  # the default racy window
    first = lore("resume", "--json", env=clean_env(store))
    assert first.code == 0, first.err
    if not _cache_file(store).exists():  # git refreshed its index: kept from the next answer
        time.sleep(2.1)
        assert json.loads(lore("resume", "--json", env=clean_env(store)).out) == json.loads(
            first.out
        )
    assert _cache_file(store).exists()
    second = lore("resume", "--json", env=clean_env(store))
    assert json.loads(second.out) == json.loads(first.out)
    (store / "README.md").write_text("# changed\n")
    third = lore("resume", "--json", env=clean_env(store))
    assert json.loads(third.out)["git"]["dirty"] == ["README.md"]


def test_the_log_and_ignored_folders_never_invalidate_the_git_state(
    store: Path, racy: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    (store / ".gitignore").write_text("build/\n")
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", "ignore build")
    (store / "build").mkdir()
    kept = _kept(store)
    book = Lorebook.open(store, env={})
    book.log("commit", session=book.start_session(agent="a", now=T0).id, now=T0)
    book.log("commit", now=datetime.now(UTC))  # today's shard and directory
    (store / ".lore" / "cache" / "scratch.json").write_text("{}")
    (store / "build" / "out.o").write_text("x")
    with monkeypatch.context() as patch:
        _git_is_not_run(patch)
        assert _cached(store) == kept
    assert kept == git_state(store, exclude=("actionlog",))


def test_git_state_is_not_cached_when_the_config_includes_another(store: Path, racy: None) -> None:
    (store.parent / "extra.config").write_text("[core]\n")
    git(store, "config", "include.path", str(store.parent / "extra.config"))
    _settle()
    _cached(store)
    _settle()
    assert _cached(store) == git_state(store, exclude=("actionlog",))
    assert not _cache_file(store).exists()


def test_a_secret_in_git_state_never_reaches_resume_or_its_cache(store: Path, racy: None) -> None:
    """A token pasted into a commit subject, a branch or a file name is redacted in what resume
    shows and in the git state it keeps under .lore/cache."""
    token = "ghp_" + "x7Kq2Lm9Pw4Rt8Yv1Bn6Cz3Df5Gh0Jk2Ls4Q"
    book = Lorebook.open(store, env={})
    _sessions(book, T0, 1, 3)
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", f"deploy with {token}")
    git(store, "checkout", "-q", "-b", f"fix-{token}")
    (store / f"notes-{token}.txt").write_text("x\n")
    for _ in range(2):  # the first answer, then the one kept in the cache
        _settle()
        shown = book.resume()
        assert token not in json.dumps(shown)
        assert shown["git"]["last_commit"]["subject"].startswith("deploy with ")
        assert len(shown["git"]["dirty"]) == 1
        out = lore("resume", "--json", env=clean_env(store))
        assert out.code == 0, out.err
        assert token not in out.out + out.err
    cached = _cache_file(store)  # not kept at all: the watched paths hold the token
    assert not cached.exists() or token not in cached.read_text(encoding="utf-8")
