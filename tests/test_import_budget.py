"""What the cold fast paths import: a budget per command, checked on a real store.

Most of a cold `lore resume`, `lore actions` or `lore report` is spent importing (the answer
itself takes a few milliseconds), so each fast path's imports are held here: none of the
modules it was rid of come back, and the count of lorebook's own modules stays within a budget
(what each path loads today plus a small margin). A change that pulls a new module into a path
must raise that path's budget here, on purpose, with the cost measured.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import clean_env, lore
from search_fixtures import LEARNINGS, age_learnings, write_learning

WRAPPER = """
import json, sys
import lorebook.cli
code = lorebook.cli.main(sys.argv[1:])
sys.stdout.flush()
print("\\n" + json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""

# modules no cold read may load: the CLI framework, and what typing / dataclasses / hashlib's
# OpenSSL start-up cost every process (a few milliseconds each, against ~45 ms for psql)
NEVER = {"click", "typing", "dataclasses", "inspect", "ast", "hashlib", "_hashlib"}
# and the append path (run by hooks on every tool call) loads no catalog and no git process,
# and neither pathlib (~8 ms with urllib.parse and ipaddress) nor datetime's Python module
LOG_NEVER = NEVER | {
    "sqlite3",
    "subprocess",
    "contextlib",
    "pathlib",
    "urllib",
    "ipaddress",
    "datetime",
}
# the heavy libraries of other commands (see tests/test_light_imports.py, test_search_cold.py)
HEAVY = {
    "torch",
    "chromadb",
    "sentence_transformers",
    "onnxruntime",
    "pydantic",
    "yaml",
    "ruamel",
    "frontmatter",
    "git",
    "textual",
    "mcp",
    "opentelemetry",
}


def _run(root: Path, *args: str) -> tuple[str, set[str]]:
    done = subprocess.run(
        [sys.executable, "-c", WRAPPER, *args],
        capture_output=True,
        text=True,
        env=clean_env(root),
        timeout=120,
    )
    out, _, last = done.stdout.rstrip().rpartition("\n")
    report = json.loads(last)
    assert report["code"] == 0, (args, done.stderr)
    return out, set(report["modules"])


def _own(modules: set[str]) -> set[str]:
    return {m for m in modules if m == "lorebook" or m.startswith("lorebook.")}


def _check(modules: set[str], never: set[str], budget: int) -> None:
    # the command's own table entry answered: no other command's module was imported
    assert not {m for m in modules if m.startswith("lorebook.cli.commands")}, sorted(modules)
    assert modules & never == set(), sorted(modules & never)
    assert {m.split(".")[0] for m in modules} & HEAVY == set()
    own = _own(modules)
    assert len(own) <= budget, (len(own), sorted(own))


def _warm(root: Path, *commands: tuple[str, ...]) -> None:
    for args in commands:  # the catalog, the git state and the keyword index: built once
        assert lore(*args, env=clean_env(root)).code == 0, args


@pytest.fixture
def logged(store: Path) -> Path:
    """A store with a few actions (deploys among them), its catalog built and its caches warm,
    as on a machine in use."""
    (store / ".lore" / "config.yaml").write_text("embedding:\n  enabled: false\n")
    for kind, outcome in [
        ("commit", "success"),
        ("deploy", "failure"),
        ("deploy", "success"),
        ("test", "failure"),
    ]:
        assert (
            lore("log", kind, "--outcome", outcome, "--epic", "epic-7", env=clean_env(store)).code
            == 0
        )
    _warm(store, ("resume", "--json"), ("actions", "--json"), ("report", "--json"))
    return store


@pytest.fixture
def learned(logged: Path) -> Path:
    """The same store with learnings, indexed by keywords."""
    for learning_id, fields in LEARNINGS.items():
        write_learning(logged, learning_id, **fields)
    age_learnings(logged)  # hashed long after written: the budget is a warm store's, not racy
    _warm(logged, ("index",), ("search", "warm", "--mode", "keyword"), ("resume", "--json"))
    return logged


def test_lore_log_imports_within_its_budget(logged: Path) -> None:
    out, modules = _run(
        logged, "log", "commit", "--context", '{"files": ["a.py"]}', "--outcome", "success"
    )
    assert len(out.strip()) == 26  # the id: the append happened
    # 29 today: +repoid.py (the default project is the repository's name, read from .git
    # files without a git process), +redact/finders.py
    # +3/+4, the command table: cli.table and cmdline (spec, parser; argparse ~1.5 ms) where each
    # fast path had its own parser; paired, a cold `lore log` pays ~2 ms more (1.09x, benchmarks.md)
    _check(modules, LOG_NEVER, budget=33)


def test_lore_resume_json_imports_within_its_budget(logged: Path) -> None:
    out, modules = _run(logged, "resume", "--json")
    assert json.loads(out)["session"]
    # +1 log.tool_activity (what the session did, 0.13 ms); +1 redact/finders.py (each rule family's
    # search, split from scan.py: one module more on every path that redacts, ~0.5 ms);
    # +1 log.workrefs (the issue a branch or prompt names, regexes compiled at import)
    # +3/+4, the command table: cli.table and cmdline (spec, parser; argparse ~1.5 ms) where each
    # fast path had its own parser; paired, a cold `lore log` pays ~2 ms more (1.09x, benchmarks.md)
    _check(modules, NEVER, budget=55)


def test_lore_resume_with_learnings_imports_within_its_budget(learned: Path) -> None:
    """Relevant learnings add the keyword index; its manifest's dataclasses come with it."""
    out, modules = _run(learned, "resume", "--json")
    assert json.loads(out)["session"]
    # +log.tool_activity, +redact/finders, +log.workrefs; +2 the saved keyword index and its
    # SQLite copy (index/keyword_store.py, index/terms_db.py, with sqlite3: ~5 ms), read instead of
    # re-tokenizing the manifest's documents on every call (~150 ms at 1,800 learnings)
    # +3/+4, the command table: cli.table and cmdline (spec, parser; argparse ~1.5 ms) where each
    # fast path had its own parser; paired, a cold `lore log` pays ~2 ms more (1.09x, benchmarks.md)
    _check(modules, NEVER - {"dataclasses", "inspect", "ast"}, budget=60)


@pytest.mark.parametrize(
    "args",
    [
        ("actions", "--type", "deploy", "--outcome", "failure", "--since", "30d", "--json"),
        ("actions", "--epic", "epic-7", "--json"),
    ],
)
def test_lore_actions_json_imports_within_its_budget(logged: Path, args: tuple[str, ...]) -> None:
    out, modules = _run(logged, *args)
    assert json.loads(out)
    # 41 then (the catalog split in three modules: +2)
    # +3/+4, the command table: cli.table and cmdline (spec, parser; argparse ~1.5 ms) where each
    # fast path had its own parser; paired, a cold `lore log` pays ~2 ms more (1.09x, benchmarks.md)
    _check(modules, NEVER, budget=46)


def test_lore_report_json_imports_within_its_budget(logged: Path) -> None:
    out, modules = _run(logged, "report", "--days", "7", "--json")
    assert json.loads(out)
    # 47 then (+1 redact/finders.py)
    # +3/+4, the command table: cli.table and cmdline (spec, parser; argparse ~1.5 ms) where each
    # fast path had its own parser; paired, a cold `lore log` pays ~2 ms more (1.09x, benchmarks.md)
    # +1 log/report_rollup.py (the day roll-ups a report over whole days adds up): 0.15-0.18 ms
    # to import from its .pyc, after `lore report`'s own imports
    _check(modules, NEVER, budget=51)


def test_lore_search_keyword_imports_within_its_budget(learned: Path) -> None:
    """Keyword search still loads typing, dataclasses and hashlib (the search modules): only the
    CLI framework and the heavy libraries are held out here, and the count."""
    out, modules = _run(
        learned, "search", "row level security insert", "--mode", "keyword", "--json"
    )
    assert json.loads(out)
    # 72 today: +1 the ranking corpus (index/corpus.py), +1 framing (injected text is framed as
    # data), +1 index/swap.py (a killed rebuild's leftovers are settled before a search), +1
    # redact/finders.py, +1 index/terms_db.py (the keyword index's SQLite copy the prompt hook
    # reads, written beside the saved index)
    # +3/+4, the command table: cli.table and cmdline (spec, parser; argparse ~1.5 ms) where each
    # fast path had its own parser; paired, a cold `lore log` pays ~2 ms more (1.09x, benchmarks.md)
    _check(modules, {"click"}, budget=76)


def test_named_tuple_without_typing_builds_what_typing_builds() -> None:
    import pickle
    import typing

    from lorebook.problems import Problem
    from lorebook.tuples import NamedTuple

    class Light(NamedTuple):
        """doc"""

        path: str
        line: int = 0

        def shown(self) -> str:
            return f"{self.path}:{self.line}"

    class Typed(typing.NamedTuple):
        """doc"""

        path: str
        line: int = 0

        def shown(self) -> str:
            return f"{self.path}:{self.line}"

    for cls in (Light, Typed):
        value = cls("a.md")
        assert (value, value.line, value.shown(), cls.__doc__) == (("a.md", 0), 0, "a.md:0", "doc")
        assert (cls._fields, cls._field_defaults) == (("path", "line"), {"line": 0})
        assert repr(value._replace(line=3)) == f"{cls.__name__}(path='a.md', line=3)"
        assert isinstance(value, tuple) and cls.__mro__[1:] == (tuple, object)
    problem = Problem("learnings/a.md", 3, "bad front matter")
    assert pickle.loads(pickle.dumps(problem)) == problem
    assert str(problem) == "learnings/a.md:3: bad front matter"
    assert repr(problem) == "Problem(path='learnings/a.md', line=3, reason='bad front matter')"


def test_action_filter_is_a_value_like_the_frozen_dataclass_it_was() -> None:
    import dataclasses

    from lorebook import ActionFilter, UsageError

    fields = [
        "type",
        "outcome",
        "project",
        "agent",
        "epic",
        "issue",
        "session",
        "category",
        "since",
        "until",
    ]
    Reference = dataclasses.make_dataclass(
        "ActionFilter", [(name, "str | None", None) for name in fields], frozen=True
    )
    for args, kwargs in [
        ((), {}),
        (("deploy", "failure"), {"epic": "e"}),
        ((), {"since": "2026-01-01T00:00:00Z", "session": "s"}),
    ]:
        ours, theirs = ActionFilter(*args, **kwargs), Reference(*args, **kwargs)
        assert repr(ours) == repr(theirs)
        again = ActionFilter(*args, **kwargs)
        assert ours == again and hash(ours) == hash(again)
        assert [getattr(ours, f) for f in fields] == [getattr(theirs, f) for f in fields]
    assert ActionFilter(type="a") != ActionFilter(type="b")
    assert ActionFilter() != Reference()
    with pytest.raises(AttributeError):
        ActionFilter().type = "x"  # type: ignore[misc]
    with pytest.raises(UsageError, match="outcome 'exploded'"):
        ActionFilter(outcome="exploded")
    with pytest.raises(UsageError, match="is not before"):
        ActionFilter(since="2026-02-01T00:00:00Z", until="2026-01-01T00:00:00Z")


def test_a_read_builds_no_writer_and_one_sanitizer(logged: Path) -> None:
    from lorebook import Lorebook

    book = Lorebook.open(logged, env={})
    assert "writer" not in book.appender.__dict__ and "sanitizer" not in book.appender.__dict__
    assert len(book.actions(type="deploy")) == 2
    assert book.resume()["session"]
    assert book.report(days=7)
    assert "writer" not in book.appender.__dict__  # reads redact; they never write
    assert book.sanitizer is book.appender.sanitizer is book.action_log.sanitizer
    book.log("commit", context={"token": "ghp_" + "a" * 36})
    assert book.writer is book.appender.writer and book.writer.sanitizer is book.sanitizer
    assert "ghp_" not in json.dumps(book.actions(limit=1))
