"""The append path without pathlib or datetime's Python module, and the report's counts in one
statement: the string paths name the same files the Path reference does, the date types are
the datetime module's own, and a report reads the window's rows once."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from conftest import clean_env, stored_actions
from lorebook import Lorebook
from lorebook.log.append import Appender, resolve_root
from lorebook.paths import STORE_DIR, find_root, git_toplevel

WRAPPER = """
import json, sys
import lorebook.cli
code = lorebook.cli.main(sys.argv[1:])
sys.stdout.flush()
print("\\n" + json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""
SLOW = {"pathlib", "urllib", "ipaddress", "datetime", "typing", "click", "sqlite3"}


def _reference_root(start: Path | None, env: dict[str, str]) -> Path:
    """`find_root` as it was written with pathlib: the reference for the os.path walk."""
    if env.get("LORE_ROOT"):
        return Path(env["LORE_ROOT"]).expanduser().resolve()
    here = (start or Path.cwd()).resolve()
    for candidate in (here, *here.parents):
        if (candidate / STORE_DIR).is_dir():
            return candidate
    for candidate in (here, *here.parents):
        if (candidate / ".git").exists():
            return candidate
    return here


def test_find_root_gives_the_pathlib_answer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                            ) -> None:  # fmt: skip
    store = tmp_path / "repo"
    deep = store / "src" / "pkg" / "deep"
    deep.mkdir(parents=True)
    (store / ".git").mkdir()
    bare = tmp_path / "bare" / "a" / "b"
    bare.mkdir(parents=True)
    worktree = tmp_path / "wt" / "sub"
    worktree.mkdir(parents=True)
    (tmp_path / "wt" / ".git").write_text("gitdir: elsewhere\n")  # a worktree's .git file
    linked = tmp_path / "link"
    linked.symlink_to(deep)
    home = tmp_path / "home"
    (home / "s" / STORE_DIR).mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    for where in (store, deep, bare, worktree, linked):
        for start in (None, where):
            monkeypatch.chdir(where)
            assert find_root(start, env={}) == _reference_root(start, {}), (where, start)
    (store / STORE_DIR).mkdir()
    monkeypatch.chdir(deep)
    assert find_root(env={}) == _reference_root(None, {}) == store
    monkeypatch.chdir(linked)
    assert find_root(env={}) == _reference_root(None, {}) == store
    for value in ("~/s", str(linked), "relative/x", "."):
        env = {"LORE_ROOT": value}
        assert find_root(env=env) == _reference_root(None, env), value
    assert git_toplevel(worktree) == tmp_path / "wt"
    assert git_toplevel(bare) is None
    assert resolve_root("relative/../x", {}) == Path("relative/../x").resolve()


def test_the_appender_writes_where_the_layout_says(tmp_path: Path) -> None:
    """With default and moved paths: the appender's string directory is the layout's, the
    record lands in the shard the layout names, and `root`/`layout` are still Paths."""
    for moved in ("", "paths:\n  actionlog: ./history/log\n"):
        root = tmp_path / ("moved" if moved else "default")
        root.mkdir()
        Lorebook.init(root, env={})
        if moved:
            (root / STORE_DIR / "config.yaml").write_text(moved)
        appender = Appender.open(root, env={})
        assert isinstance(appender.root, Path) and appender.root == root.resolve()
        assert appender.layout == appender.config.layout(root.resolve())
        assert Path(appender.actionlog) == appender.layout.actionlog  # the same directory
        record = appender.log("commit", session="s-1", agent="a", project="p")
        day = record["ts"][:10].split("-")
        shard = appender.layout.actionlog.joinpath(*day, "s-1.jsonl")
        assert json.loads(shard.read_text().splitlines()[-1])["id"] == record["id"]
        assert [r["id"] for r in Lorebook.open(root, env={}).actions()] == [record["id"]]
        assert appender.default_project() == root.name


def test_the_date_types_are_the_datetime_modules_own() -> None:
    """timeutil takes them from the C module; a later `import datetime` has the same objects
    (equal, isinstance, pickled by the same name)."""
    code = (
        "import pickle, sys\n"
        "from lorebook import timeutil as t\n"
        "assert 'datetime' not in sys.modules\n"
        "import datetime as d\n"
        "assert t.datetime is d.datetime and t.timedelta is d.timedelta and t.date is d.date\n"
        "assert t.UTC is d.UTC and t.UTC is d.timezone.utc\n"
        "now = t.utcnow()\n"
        "assert pickle.loads(pickle.dumps(now)) == now and isinstance(now, d.datetime)\n"
        "print(t.format_ts(d.datetime(2026, 11, 25, 7, 0, 0, 123456, tzinfo=d.UTC)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=clean_env(), timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "2026-11-25T07:00:00.123Z"


def _log_modules(root: Path, *args: str, **env: str) -> tuple[str, str, set[str]]:
    return _modules(root, "log", *args, **env)


def _modules(root: Path, *args: str, **env: str) -> tuple[str, str, set[str]]:
    done = subprocess.run(
        [sys.executable, "-c", WRAPPER, *args],
        capture_output=True,
        text=True,
        env=clean_env(root, **env),
        timeout=60,
    )
    out, _, last = done.stdout.rstrip().rpartition("\n")
    report = json.loads(last)
    assert report["code"] == 0, done.stderr
    return out, done.stderr, set(report["modules"])


def test_every_lore_log_form_skips_pathlib_and_datetime(store: Path) -> None:
    """Explicit sessions (their identity and whether they ended are read from their shards),
    the identity from the environment, a secret in the error: none imports the slow modules,
    and each record is stored as before."""
    secret = "ghp_" + "Q9w8E7r6" * 5
    Lorebook.open(store, env={}).start_session(session_id="s-9", agent="PS", project="odin")
    forms = [
        ("commit", "--session", "s-9"),
        ("deploy", "--json", "--outcome", "failure", "--error", f"token {secret}"),
        ("plan", "--context", '{"files": ["a.py"]}'),
    ]
    for args in forms:
        _, _, modules = _log_modules(store, *args)
        assert modules & SLOW == set(), (args, sorted(modules & SLOW))
    _, _, modules = _log_modules(store, "test", LORE_AGENT="MS", LORE_SESSION="s-9")
    assert modules & SLOW == set()
    _, _, modules = _log_modules(store, "push", LORE_AGENT="MS", LORE_PROJECT="web")
    assert modules & SLOW == set()
    Lorebook.open(store, env={}).end_session("s-9")
    _, err, modules = _log_modules(store, "commit", "--session", "s-9")
    assert "ended" in err  # the warning, read from the shard's tail without pathlib
    assert modules & SLOW == set()
    actions = stored_actions(store)
    assert sorted(a["type"] for a in actions) == [
        "commit",
        "commit",
        "deploy",
        "plan",
        "push",
        "test",
    ]
    in_s9 = [a for a in actions if a["session"] == "s-9"]  # the session's own identity first
    assert [(a["type"], a["agent"], a["project"]) for a in in_s9] == [
        ("commit", "PS", "odin"),
        ("test", "PS", "odin"),
        ("commit", "PS", "odin"),
    ]
    assert [(a["agent"], a["project"]) for a in actions if a["type"] == "push"] == [("MS", "web")]
    assert secret not in json.dumps(actions)


def test_a_report_counts_the_window_in_one_statement(store: Path) -> None:
    """The grouped counts, the bookkeeping left out and the overheads read the window's
    records once; the deployments' outcomes come from the same pass (no statement of its
    own). A window holding whole days reads their roll-ups and only its two edges' records."""
    book = Lorebook.open(store, env={})
    now = datetime.now(UTC)
    for n, (kind, outcome) in enumerate(
        [("deploy", "success"), ("deploy", "failure"), ("commit", "success"), ("deploy", "blocked")]
    ):
        book.log(kind, outcome=outcome, session="s-1", duration_s=n + 0.5,
                 now=now - timedelta(hours=n))  # fmt: skip
    book.log("deploy", outcome="success", session="s-1", now=now - timedelta(days=3))
    statements: list[str] = []
    conn = book.action_log.catalog.open()
    assert conn is not None
    conn.close()
    book.report(days=7)  # rolls up the whole days it covers (`lore catalog` would have)
    import sqlite3

    real_connect = sqlite3.connect

    def traced(*args: object, **kwargs: object) -> sqlite3.Connection:
        opened = real_connect(*args, **kwargs)  # type: ignore[arg-type]
        opened.set_trace_callback(statements.append)
        return opened

    sqlite3.connect = traced  # type: ignore[assignment]
    try:
        fresh = Lorebook.open(store, env={})
        report = fresh.report(since=(now - timedelta(hours=20)).strftime("%Y-%m-%dT%H:%M:%S.000Z"))
        short = list(statements)
        statements.clear()
        week = fresh.report(days=7)
        fresh.close()
    finally:
        sqlite3.connect = real_connect  # type: ignore[assignment]
    # one pass over the window's records: the grouped counts, what was left out of lorebook's
    # own bookkeeping and the overheads come from one statement (three reads of the window
    # before: ~0.6 s of a cold 30-day report at 1M actions)
    window = [s for s in short if "FROM records WHERE" in s and "JOIN shards" not in s]
    assert len(window) == 1, window
    assert "GROUP BY" in window[0] and "WHERE c IS NOT NULL" in window[0]  # the overheads
    # a week: the whole days from their roll-ups, the records of its two edges once each
    edges = [s for s in statements if "FROM records WHERE" in s and "JOIN shards" not in s]
    assert 1 <= len(edges) <= 2 and all("WHERE c IS NOT NULL" in s for s in edges), edges
    assert any("FROM roll_actions" in s for s in statements)
    assert not [s for s in statements if s.lstrip().startswith("INSERT")]  # nothing rolled again
    assert week["summary"]["total_actions"] == 5
    assert report["deployments"]["total"] == 3
    _modules(store, "report", "--json")  # the catalog is built
    out, _, modules = _modules(store, "report", "--json")
    assert json.loads(out)["summary"]["total_actions"] == 5
    assert "lorebook.log.query" not in modules  # the filter class serves the scan path only
    assert "weakref" not in modules  # the kept connection's back reference is _weakref.ref
    assert report["deployments"]["by_outcome"] == {
        "success": 1,
        "failure": 1,
        "blocked": 1,
        "in_progress": 0,
    }
    assert report["summary"]["total_actions"] == 4


def test_surrogates_are_replaced_as_the_regex_replaces_them() -> None:
    """`without_surrogates` compiles the surrogate class only for a text holding one, and
    gives what the regex gives for every text."""
    import random
    import re

    from lorebook.redact.patterns import MARK, R, without_surrogates

    reference = re.compile("[\ud800-\udfff]")
    rng = random.Random(13)
    alphabet = [
        "a",
        "Z",
        "0",
        " ",
        "é",
        "ß",
        "€",
        "😀",
        "\ud800",
        "\udbff",
        "\udc00",
        "\udfff",
        "\ud7ff",
        "\ue000",
        "\ufffd",
        "\x00",
        "[REDACTED]",
    ]
    texts = ["", "plain ascii", "café", "\ud83d\ude00", "x\ud800", "\udfffy"]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12))) for _ in range(500)]
    for text in texts:
        assert without_surrogates(text) == reference.sub("\ufffd", text), repr(text)
        # a key name's markers: skipping the substitution when MARK is absent changes nothing
        assert (R.MARKER.sub(" ", text) if MARK in text else text) == R.MARKER.sub(" ", text)
